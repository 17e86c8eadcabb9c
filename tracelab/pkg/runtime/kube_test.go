package runtime

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
)

// transcript is a fake kubectl that replays a conversation: each call must be
// the next command of the transcript, and gets its recorded output. The
// transcripts (testdata/*.transcript) hold kubectl's output formats; their
// objects are the rendered k8s overlays, as kubectl get returns them once
// applied. No cluster is needed, and none could run here.
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

func TestKindAppliesVariantsByRollout(t *testing.T) {
	tr := loadTranscript(t, "testdata/kind-nplus1.transcript")
	k := newKube("kind", "kind-tracelab", labPorts, labInfra, tr)
	ctx := context.Background()
	services := []string{"pricing", "catalog"}
	profile := map[string]string{"PRICING_ITEM_COUNT": "200", "PRICING_LIST_LATENCY_MS": "50"}
	if err := k.Up(ctx, services, Settings{"pricing": profile, "catalog": {"CATALOG_FETCH_MODE": "sequential"}}, "baseline"); err != nil {
		t.Fatal(err)
	}
	// Kind maps the NodePorts to the local runtime's ports: no kubectl call.
	if url, err := k.Endpoint("catalog"); err != nil || url != "http://127.0.0.1:18080" {
		t.Errorf("catalog endpoint %q, %v", url, err)
	}
	if err := k.Up(ctx, services, Settings{"pricing": profile, "catalog": {"CATALOG_FETCH_MODE": "batch"}}, "fixed"); err != nil {
		t.Fatal(err)
	}
	if k.JaegerURL() != "http://127.0.0.1:16686" || k.PrometheusURL() != "http://127.0.0.1:19090" {
		t.Errorf("Jaeger at %s, Prometheus at %s", k.JaegerURL(), k.PrometheusURL())
	}
	k.Down(ctx)
	tr.done()
}

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

func TestKubeErrorsSayWhatToDo(t *testing.T) {
	cases := []struct {
		name, transcript, want string
	}{
		{"lab not deployed", `$ kubectl --context kind-tracelab -n tracelab get deployments,statefulsets -o json
{"apiVersion": "v1", "items": [], "kind": "List", "metadata": {"resourceVersion": ""}}`,
			"the lab is not deployed in namespace tracelab of context kind-tracelab; run 'make kind-up'"},
		{"no cluster", `$ kubectl --context kind-tracelab -n tracelab get deployments,statefulsets -o json
! kubectl get deployments,statefulsets: error: context "kind-tracelab" does not exist`,
			`context "kind-tracelab" does not exist`},
		{"rollout fails", `$ kubectl --context kind-tracelab -n tracelab get deployments,statefulsets -o json
{"items": [{"kind": "Deployment", "metadata": {"name": "jaeger"}}, {"kind": "Deployment", "metadata": {"name": "otelcol"}}, {"kind": "Deployment", "metadata": {"name": "prometheus"}}]}
$ kubectl --context kind-tracelab -n tracelab rollout status deployment/jaeger --timeout=5m0s
! kubectl rollout status: error: timed out waiting for the condition`,
			"deployment/jaeger did not become ready: kubectl rollout status: error: timed out waiting for the condition; see kubectl --context kind-tracelab -n tracelab describe deployment/jaeger"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := t.TempDir() + "/t.transcript"
			os.WriteFile(path, []byte(tc.transcript+"\n"), 0o644)
			k := newKube("kind", "kind-tracelab", labPorts, labInfra, loadTranscript(t, path))
			err := k.Up(context.Background(), []string{"catalog"}, nil, "baseline")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
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

// Status lists the workloads kubectl reports, with their ready replicas.
func TestKubeStatusListsTheWorkloads(t *testing.T) {
	tr := loadTranscript(t, "testdata/kind-nplus1.transcript")
	tr.steps = tr.steps[:1] // the first answer of get deployments,statefulsets
	k := newKube("kind", "kind-tracelab", labPorts, labInfra, tr)
	out, err := k.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"deployment   catalog        1/1", "Prometheus http://127.0.0.1:19090"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	tr.done()
}
