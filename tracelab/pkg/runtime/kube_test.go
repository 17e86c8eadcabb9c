package runtime

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// transcript is a fake kubectl that replays a conversation: each call must be
// the next command of the transcript, and gets its recorded output. Only
// what a test cluster cannot answer is tested this way: kubectl
// port-forward needs a pod that listens, and kwok's pods run nothing.
// Everything else the Kube runtime does is tested against a real API server
// (kube_cluster_test.go).
type transcript struct {
	t       *testing.T
	steps   []step
	stopped []string // port-forwards stopped, in order
}

type step struct {
	command, output string
	fail            bool
}

func loadTranscript(t *testing.T, path string) *transcript {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tr := &transcript{t: t}
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "#") && len(tr.steps) == 0:
		case strings.HasPrefix(line, "$ "):
			tr.steps = append(tr.steps, step{command: strings.TrimPrefix(line, "$ ")})
		case strings.HasPrefix(line, "! ") && len(tr.steps) > 0:
			tr.steps[len(tr.steps)-1].fail = true
			tr.steps[len(tr.steps)-1].output += strings.TrimPrefix(line, "! ")
		case len(tr.steps) > 0:
			tr.steps[len(tr.steps)-1].output += line + "\n"
		}
	}
	return tr
}

func (tr *transcript) next(got string) step {
	tr.t.Helper()
	if len(tr.steps) == 0 {
		tr.t.Fatalf("unexpected call after the end of the transcript: %s", got)
	}
	s := tr.steps[0]
	tr.steps = tr.steps[1:]
	if got != s.command {
		tr.t.Fatalf("call differs from the transcript:\n got: %s\nwant: %s", got, s.command)
	}
	return s
}

func (tr *transcript) Output(ctx context.Context, args ...string) ([]byte, error) {
	s := tr.next("kubectl " + strings.Join(args, " "))
	if s.fail {
		return nil, errors.New(strings.TrimSpace(s.output))
	}
	return []byte(s.output), nil
}

func (tr *transcript) Forward(ctx context.Context, args ...string) (Forward, error) {
	s := tr.next("kubectl " + strings.Join(args, " "))
	if !strings.HasPrefix(s.output, "Forwarding from") {
		return nil, errors.New(strings.TrimSpace(s.output))
	}
	return stopRecorder{tr, args[len(args)-2]}, nil
}

type stopRecorder struct {
	tr     *transcript
	target string
}

func (s stopRecorder) Stop() { s.tr.stopped = append(s.tr.stopped, s.target) }

func (tr *transcript) done() {
	tr.t.Helper()
	if len(tr.steps) > 0 {
		tr.t.Errorf("%d recorded call(s) never made, first: %s", len(tr.steps), tr.steps[0].command)
	}
}

// labInfra is what infra/components.yaml marks always, as the transcripts recorded.
var labInfra = []string{"jaeger", "otelcol", "prometheus"}

var labPorts = map[string]string{"CATALOG_PORT": "18080", "PRICING_PORT": "18081", "GATEWAY_PORT": "18084", "JAEGER_QUERY_PORT": "16686", "PROMETHEUS_PORT": "19090"}

func TestEKSRemovesStaleSettingsAndPortForwards(t *testing.T) {
	tr := loadTranscript(t, "testdata/eks-antpath.transcript")
	k := newKube("eks", "tracelab-eks", labPorts, labInfra, tr)
	ctx := context.Background()
	if err := k.Up(ctx, []string{"gateway"}, Settings{"gateway": {"GATEWAY_PATH_MATCHING": "path-pattern"}}, "fixed"); err != nil {
		t.Fatal(err)
	}
	url, err := k.Endpoint("gateway")
	if err != nil || url != "http://127.0.0.1:18084" {
		t.Errorf("gateway endpoint %q, %v", url, err)
	}
	if _, err := k.Endpoint("gateway"); err != nil { // already forwarded: no new call
		t.Error(err)
	}
	k.Down(ctx)
	if k.PrometheusURL() != "http://127.0.0.1:19090" {
		t.Errorf("Prometheus at %s", k.PrometheusURL())
	}
	if got := strings.Join(tr.stopped, ","); got != "service/gateway,service/jaeger,service/prometheus" {
		t.Errorf("stopped port-forwards %q, want all three", got)
	}
	tr.done()
}

func TestEnvChanges(t *testing.T) {
	cases := []struct {
		name    string
		current map[string]string
		want    map[string]string
		changes string
	}{
		{"settings already in place: no rollout",
			map[string]string{"LAB_VARIANT": "v", "LAB_SETTINGS": "A", "A": "1"}, map[string]string{"A": "1"}, ""},
		{"a workload without tracelab's variables and no settings is left alone (PostgreSQL)",
			map[string]string{"PGPORT": "15432"}, nil, ""},
		{"a new variant: its settings, its name, and the names of its settings",
			map[string]string{"LAB_VARIANT": "default", "LAB_SETTINGS": ""}, map[string]string{"B": "2", "A": "1"}, "A=1 B=2 LAB_SETTINGS=A,B LAB_VARIANT=v"},
		{"what the previous variant set and this one does not is removed",
			map[string]string{"LAB_VARIANT": "v", "LAB_SETTINGS": "A,B", "A": "1", "B": "2"}, map[string]string{"A": "1"}, "LAB_SETTINGS=A B-"},
		{"a setting on a workload that does not declare LAB_VARIANT (toxiproxy)",
			map[string]string{"LAB_SETTINGS": "", "DB_LATENCY_MS": "2"}, map[string]string{"DB_LATENCY_MS": "14"}, "DB_LATENCY_MS=14 LAB_SETTINGS=DB_LATENCY_MS"},
	}
	for _, tc := range cases {
		if got := strings.Join(envChanges(tc.current, tc.want, "v"), " "); got != tc.changes {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.changes)
		}
	}
}

func TestParseCPUQuantity(t *testing.T) {
	for q, want := range map[string]float64{"1": 1, "2": 2, "1.5": 1.5, "500m": 0.5, "250m": 0.25} {
		if got, err := parseCPUQuantity(q); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", q, got, err, want)
		}
	}
	if _, err := parseCPUQuantity(""); err == nil {
		t.Error("an empty limit parsed")
	}
}

// waitRouted waits through refused connections and returns on answers of
// any status; it gives up, naming the last error, when none come.
func TestWaitRouted(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusNotFound)
	}))
	defer srv.Close()
	if err := waitRouted(context.Background(), srv.URL); err != nil || calls.Load() != routedAnswers {
		t.Errorf("got %v after %d requests; want nil after %d", err, calls.Load(), routedAnswers)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := waitRouted(ctx, dead); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("a closed port: %v; want an error naming the refusal", err)
	}
}
