package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// podsAnswer is a fake kubectl that answers `get pods` with what the test
// sets, and checks the selector names the watched workloads.
type podsAnswer struct {
	t    *testing.T
	json string
	fail bool
}

func (p *podsAnswer) Output(_ context.Context, args ...string) ([]byte, error) {
	got := strings.Join(args, " ")
	if want := "--context kind-tracelab -n tracelab get pods -l app.kubernetes.io/name in (jaeger,postgres) -o json"; got != want {
		p.t.Fatalf("kubectl %s\nwant    %s", got, want)
	}
	if p.fail {
		return nil, errors.New("connection refused")
	}
	return []byte(p.json), nil
}

func (p *podsAnswer) Forward(context.Context, ...string) (Forward, error) {
	return nil, errors.New("not here")
}

func pods(postgresRestarts int, postgresPod string) string {
	return fmt.Sprintf(`{"items":[
 {"metadata":{"name":"jaeger-7f9","labels":{"app.kubernetes.io/name":"jaeger"}},"status":{"containerStatuses":[{"name":"jaeger","restartCount":0,"lastState":{}}]}},
 {"metadata":{"name":%q,"labels":{"app.kubernetes.io/name":"postgres"}},"status":{"containerStatuses":[{"name":"postgres","restartCount":%d,"lastState":{"terminated":{"exitCode":137,"reason":"OOMKilled"}}}]}}]}`,
		postgresPod, postgresRestarts)
}

// Kubernetes starts a dead container again at once: the restart count is
// what tells, counted from the first look after Up.
func TestKubeExitedNamesARestartedContainer(t *testing.T) {
	fake := &podsAnswer{t: t, json: pods(1, "postgres-0")}
	k := newKube("kind", "kind-tracelab", labPorts, nil, fake)
	ctx := context.Background()
	if err := k.Exited(ctx); err != nil {
		t.Fatalf("before any Up: %v", err)
	}
	k.watched = []string{"jaeger", "postgres"}
	if err := k.Exited(ctx); err != nil { // the first look: a restart before the run is not the run's
		t.Fatalf("first look: %v", err)
	}
	fake.fail = true
	if err := k.Exited(ctx); err != nil {
		t.Fatalf("an unanswered look is no death: %v", err)
	}
	fake.fail = false
	fake.json = pods(2, "postgres-0")
	err := k.Exited(ctx)
	var e *ExitError
	if !errors.As(err, &e) || e.Name != "postgres" || e.Code != 137 || !strings.Contains(e.LastLine, "OOMKilled") ||
		e.Log != "kubectl --context kind-tracelab -n tracelab logs --previous pod/postgres-0 -c postgres" {
		t.Fatalf("err = %#v", err)
	}
	fake.json = pods(1, "postgres-1")
	if err := k.Exited(ctx); !errors.As(err, &e) || e.Name != "postgres" || !strings.Contains(e.LastLine, "gone") {
		t.Fatalf("a replaced pod: %v", err)
	}
}
