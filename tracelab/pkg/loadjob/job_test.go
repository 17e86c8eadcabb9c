package loadjob

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tracelab/internal/repotest"
	"tracelab/pkg/load"
)

// fakeKubectl answers kubectl calls from the test's table, by the words of
// the call after the context and namespace flags, and records them.
type fakeKubectl struct {
	t       *testing.T
	answers map[string][]string // "get job" -> successive answers; the last repeats
	calls   []string
	created []byte // the Job manifest of kubectl create
}

func (f *fakeKubectl) Run(_ context.Context, stdin []byte, args ...string) ([]byte, error) {
	if len(args) < 4 || args[0] != "--context" || args[1] != "kind-tracelab" || args[2] != "-n" || args[3] != "tracelab" {
		f.t.Fatalf("kubectl %v: not in context kind-tracelab, namespace tracelab", args)
	}
	call := strings.Join(args[4:], " ")
	f.calls = append(f.calls, call)
	if strings.HasPrefix(call, "create ") {
		f.created = stdin
	}
	// The longest matching prefix answers, so "logs job/x --tail=1" can
	// differ from "logs job/x".
	best := ""
	for prefix := range f.answers {
		if strings.HasPrefix(call, prefix) && len(prefix) > len(best) {
			best = prefix
		}
	}
	if best == "" {
		return nil, nil
	}
	answers := f.answers[best]
	a := answers[0]
	if len(answers) > 1 {
		f.answers[best] = answers[1:]
	}
	if msg, ok := strings.CutPrefix(a, "error: "); ok {
		return nil, fmt.Errorf("kubectl %s: %s", best, msg)
	}
	return []byte(a), nil
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func configMap(files map[string]string) string {
	data, _ := json.Marshal(map[string]any{"data": files})
	return string(data)
}

// markedRun is what `tracelab load run --out -` prints: a run of 200
// requests between the marker lines.
func markedRun(t *testing.T) string {
	var b bytes.Buffer
	run := &load.Run{Model: "closed model: 4 users for 20s", Summary: load.Summary{Requests: 200, P95Ms: 30}}
	if err := load.WriteMarked(&b, run); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// newJob is a Job on the checkout's loadtests/, whose cluster copy is
// identical unless the test changes it, and nplus1's definition.
func newJob(t *testing.T) (*Job, *fakeKubectl, *load.Definition) {
	lt := filepath.Join(repotest.Root(t), "loadtests")
	files, _ := filepath.Glob(filepath.Join(lt, "*.yaml"))
	defs := map[string]string{}
	for _, f := range files {
		defs[filepath.Base(f)] = readFile(t, f)
	}
	f := &fakeKubectl{t: t, answers: map[string][]string{
		"get cronjob load":                    {readFile(t, "testdata/cronjob-load.json")},
		"get configmap loadtests-8c2f7h9m4t":  {configMap(defs)},
		"create -f -":                         {"job.batch/load-run-x7k2p\n"},
		"get job load-run-x7k2p":              {`{"status":{"active":1}}`, `{"status":{"succeeded":1}}`},
		"get pods -l job-name=load-run-x7k2p": {`{"items":[{"metadata":{"name":"load-run-x7k2p-abcde"},"status":{"phase":"Running"}}]}`},
		"logs job/load-run-x7k2p":             {"load: 120 requests answered in 10s, 0 failed\n" + markedRun(t)},
	}}
	def, err := load.ReadDefinition(filepath.Join(lt, "nplus1.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	j := &Job{Context: "kind-tracelab", Namespace: "tracelab", Ports: map[string]string{"CATALOG_PORT": "18080"}, Kubectl: f, Poll: 1}
	return j, f, def
}

func run(t *testing.T, j *Job, def *load.Definition, opt load.Options) (*load.Run, string, error) {
	opt.LogFile = filepath.Join(t.TempDir(), "baseline-load.log")
	r, err := j.Run(context.Background(), def, opt)
	log, _ := os.ReadFile(opt.LogFile)
	return r, string(log), err
}

// A run creates a Job from the CronJob's template with the run's own
// arguments and no others, reads the run from its log, and deletes it.
func TestJobRun(t *testing.T) {
	j, f, def := newJob(t)
	target, err := j.Target("catalog")
	if err != nil || target != "http://catalog:18080" {
		t.Fatalf("Target(catalog) = %q, %v; want the Service at its local port", target, err)
	}
	r, log, err := run(t, j, def, load.Options{Target: target, Params: map[string]string{"VUS": "4", "DURATION": "20s"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Summary.Requests != 200 || r.Summary.P95Ms != 30 {
		t.Errorf("summary %+v; want 200 requests, p95 30 ms", r.Summary)
	}
	if !strings.Contains(log, "120 requests answered") {
		t.Errorf("the Job's log was not kept: %q", log)
	}

	var job struct {
		Kind     string `json:"kind"`
		Metadata struct {
			GenerateName string            `json:"generateName"`
			Labels       map[string]string `json:"labels"`
		} `json:"metadata"`
		Spec struct {
			BackoffLimit *int `json:"backoffLimit"`
			Template     struct {
				Spec struct {
					Containers []struct {
						Name            string         `json:"name"`
						Image           string         `json:"image"`
						Args            []string       `json:"args"`
						SecurityContext map[string]any `json:"securityContext"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(f.created, &job); err != nil {
		t.Fatalf("created manifest: %v\n%s", err, f.created)
	}
	if job.Kind != "Job" || job.Metadata.GenerateName != "load-run-" || job.Metadata.Labels["app.kubernetes.io/component"] != "load" {
		t.Errorf("created %s %q labels %v; want a Job load-run-… of component load", job.Kind, job.Metadata.GenerateName, job.Metadata.Labels)
	}
	if job.Spec.BackoffLimit == nil || *job.Spec.BackoffLimit != 0 {
		t.Errorf("backoffLimit %v; want the template's 0 (a retried run would send its load twice)", job.Spec.BackoffLimit)
	}
	c := job.Spec.Template.Spec.Containers[0]
	want := []string{"load", "run", "/loadtests/nplus1.yaml", "--target", "http://catalog:18080",
		"--param", "DURATION=20s", "--param", "VUS=4", "--out", "-"}
	if !slices.Equal(c.Args, want) {
		t.Errorf("args %v;\nwant %v (the template's ITERATIONS=3 would turn a DURATION run into 3 iterations)", c.Args, want)
	}
	if c.Image != "tracelab/tracelab:dev" || c.SecurityContext["readOnlyRootFilesystem"] != true {
		t.Errorf("the template's image or securityContext was lost: %s, %v", c.Image, c.SecurityContext)
	}
	if !slices.Contains(f.calls, "delete job load-run-x7k2p --wait=false --ignore-not-found") {
		t.Errorf("the Job was not deleted; calls: %v", f.calls)
	}

	// The CronJob and its ConfigMap are read once per driver.
	f.answers["get job load-run-x7k2p"] = []string{`{"status":{"succeeded":1}}`}
	if _, _, err := run(t, j, def, load.Options{Target: target}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range f.calls {
		if strings.HasPrefix(c, "get cronjob") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("read the CronJob %d times; want once", n)
	}
}

// A definition that differs from the cluster's copy, or that the cluster
// lacks, is refused before any load.
func TestJobRefusesStaleDefinition(t *testing.T) {
	for name, data := range map[string]map[string]string{
		"differs": {"nplus1.yaml": "# an older nplus1\nrequests: [{path: /}]\n"},
		"missing": {"orders.yaml": "requests: [{path: /}]\n"},
	} {
		t.Run(name, func(t *testing.T) {
			j, f, def := newJob(t)
			f.answers["get configmap loadtests-8c2f7h9m4t"] = []string{configMap(data)}
			_, _, err := run(t, j, def, load.Options{Target: "http://catalog:18080"})
			if err == nil || !strings.Contains(err.Error(), "nplus1.yaml") || !strings.Contains(err.Error(), "make kind-up") {
				t.Fatalf("err = %v; want nplus1.yaml named, and how to redeploy", err)
			}
			if f.created != nil {
				t.Error("a Job was created")
			}
		})
	}
}

// A pod that cannot pull its image fails the run with one line, instead of
// waiting for ever; the Job still goes.
func TestJobImagePullBackOff(t *testing.T) {
	j, f, def := newJob(t)
	f.answers["get job load-run-x7k2p"] = []string{`{"status":{"active":1}}`}
	f.answers["get pods -l job-name=load-run-x7k2p"] = []string{`{"items":[{"status":{"phase":"Pending","containerStatuses":[{"state":{"waiting":{"reason":"ImagePullBackOff","message":"Back-off pulling image \"tracelab/tracelab:dev\": not found\nmore"}}}]}}]}`}
	_, _, err := run(t, j, def, load.Options{Target: "http://catalog:18080"})
	if err == nil || !strings.Contains(err.Error(), "cannot pull its image") || !strings.Contains(err.Error(), "not found") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v; want one line naming the pull failure", err)
	}
	if !slices.Contains(f.calls, "delete job load-run-x7k2p --wait=false --ignore-not-found") {
		t.Errorf("the Job was not deleted; calls: %v", f.calls)
	}
}

// A failed Job's error is the CLI's own last line, and points at the log.
func TestJobFailed(t *testing.T) {
	j, f, def := newJob(t)
	f.answers["get job load-run-x7k2p"] = []string{`{"status":{"failed":1}}`}
	f.answers["logs job/load-run-x7k2p"] = []string{"tracelab: load run: setup routes: GET /api/routes: 503 Service Unavailable\n"}
	_, log, err := run(t, j, def, load.Options{Target: "http://catalog:18080"})
	if err == nil || !strings.Contains(err.Error(), "failed: tracelab: load run: setup routes") || !strings.Contains(err.Error(), "baseline-load.log") {
		t.Fatalf("err = %v; want the CLI's error and the log's path", err)
	}
	if !strings.Contains(log, "503") {
		t.Errorf("the Job's log was not kept: %q", log)
	}
}

// A Job that succeeded without a whole run in its log had its log rotated:
// the error says so rather than blaming the load.
func TestJobRotatedLog(t *testing.T) {
	j, f, def := newJob(t)
	f.answers["logs job/load-run-x7k2p"] = []string{`{"name":"GET /catalog/summary","trace_id":"ab"}]}` + "\n--- end of tracelab load run ---\n"}
	_, _, err := run(t, j, def, load.Options{Target: "http://catalog:18080"})
	if err == nil || !strings.Contains(err.Error(), "rotated") {
		t.Fatalf("err = %v; want a hint at the log's rotation", err)
	}
}

// A long run relays the engine's latest progress line from the pod.
func TestJobProgress(t *testing.T) {
	j, f, def := newJob(t)
	f.answers["logs job/load-run-x7k2p --tail=1"] = []string{"load: 120 requests answered in 10s, 0 failed\n"}
	var lines []string
	progress := func(format string, a ...any) { lines = append(lines, fmt.Sprintf(format, a...)) }
	old := progressEvery
	progressEvery = 0
	defer func() { progressEvery = old }()
	if _, _, err := run(t, j, def, load.Options{Target: "http://catalog:18080", Progress: progress}); err != nil {
		t.Fatal(err)
	}
	if len(lines) == 0 || !strings.Contains(lines[0], "running: load: 120 requests answered") {
		t.Errorf("progress %q; want the pod's phase and the engine's last line", lines)
	}
}
