package k6

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tracelab/internal/repotest"
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
	for prefix, answers := range f.answers {
		if strings.HasPrefix(call, prefix) {
			a := answers[0]
			if len(answers) > 1 {
				f.answers[prefix] = answers[1:]
			}
			if strings.HasPrefix(a, "error: ") {
				return nil, fmt.Errorf("kubectl %s: %s", prefix, strings.TrimPrefix(a, "error: "))
			}
			return []byte(a), nil
		}
	}
	return nil, nil
}

func configMap(t *testing.T, files map[string]string) string {
	data, _ := json.Marshal(map[string]any{"data": files})
	return string(data)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

const summaryJSON = `{"metrics":{"http_reqs":{"values":{"count":200,"rate":9.5}},"http_req_failed":{"values":{"rate":0}},"http_req_duration":{"values":{"p(50)":12,"p(95)":30,"avg":14,"max":41}}},"state":{"testRunDurationMs":21000}}`

// newJob is a Job on the checkout's loadtests/, whose cluster copy is
// identical unless the test changes it.
func newJob(t *testing.T) (*Job, *fakeKubectl, string) {
	root := repotest.Root(t)
	lt := filepath.Join(root, "loadtests")
	scripts := map[string]string{}
	for _, n := range []string{"antpath.js", "events.js", "nplus1.js", "orders.js"} {
		scripts[n] = readFile(t, filepath.Join(lt, n))
	}
	f := &fakeKubectl{t: t, answers: map[string][]string{
		"get cronjob k6":                         {readFile(t, "testdata/cronjob-k6.json")},
		"get configmap loadtests-7t2b9kf8mh":     {configMap(t, scripts)},
		"get configmap loadtests-lib-5g7cm4hb2k": {configMap(t, map[string]string{"lab.js": readFile(t, filepath.Join(lt, "lib", "lab.js"))})},
		"create -f -":                            {"job.batch/k6-run-x7k2p\n"},
		"get job k6-run-x7k2p":                   {`{"status":{"active":1}}`, `{"status":{"succeeded":1}}`},
		"get pods -l job-name=k6-run-x7k2p":      {`{"items":[{"metadata":{"name":"k6-run-x7k2p-abcde"},"status":{"phase":"Running"}}]}`},
		"logs job/k6-run-x7k2p": {"time=\"2026-11-23T10:00:00Z\" level=warning msg=\"a warning before\"\n" +
			"requests 200 (9.50/s), failed 0.0%, p50 12.0ms, p95 30.0ms, max 41.0ms\n" +
			summaryBegin + "\n" + summaryJSON + "\n" + summaryEnd + "\n"},
	}}
	j := &Job{Context: "kind-tracelab", Namespace: "tracelab", Ports: map[string]string{"CATALOG_PORT": "18080"}, Kubectl: f, Poll: 1}
	return j, f, filepath.Join(lt, "nplus1.js")
}

func run(t *testing.T, j *Job, script string, env map[string]string) (*Summary, string, error) {
	dir := t.TempDir()
	log, err := os.Create(filepath.Join(dir, "k6.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	sum, err := j.Run(context.Background(), script, env, filepath.Join(dir, "summary.json"), log, func(string, ...any) {})
	return sum, readFile(t, log.Name()), err
}

// A run creates a Job from the CronJob's template with the run's own
// environment and no other, reads the summary from its log, and deletes it.
func TestJobRun(t *testing.T) {
	j, f, script := newJob(t)
	target, err := j.Target("catalog")
	if err != nil || target != "http://catalog:18080" {
		t.Fatalf("Target(catalog) = %q, %v; want the Service at its local port", target, err)
	}
	sum, log, err := run(t, j, script, map[string]string{"TARGET": target, "VUS": "4", "DURATION": "20s"})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Requests != 200 || sum.P95Ms != 30 || sum.DurationS != 21 {
		t.Errorf("summary %+v; want 200 requests, p95 30 ms, 21 s", sum)
	}
	if !strings.Contains(log, "a warning before") {
		t.Errorf("the Job's log was not copied: %q", log)
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
						Name string   `json:"name"`
						Args []string `json:"args"`
						Env  []struct {
							Name, Value string
						} `json:"env"`
						SecurityContext map[string]any `json:"securityContext"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(f.created, &job); err != nil {
		t.Fatalf("created manifest: %v\n%s", err, f.created)
	}
	if job.Kind != "Job" || job.Metadata.GenerateName != "k6-run-" || job.Metadata.Labels["app.kubernetes.io/component"] != "load" {
		t.Errorf("created %s %q labels %v; want a Job k6-run-… of component load", job.Kind, job.Metadata.GenerateName, job.Metadata.Labels)
	}
	if job.Spec.BackoffLimit == nil || *job.Spec.BackoffLimit != 0 {
		t.Errorf("backoffLimit %v; want the template's 0 (a retried run would count its load twice)", job.Spec.BackoffLimit)
	}
	c := job.Spec.Template.Spec.Containers[0]
	if !slices.Equal(c.Args, []string{"run", "--quiet", "--no-color", "/scripts/nplus1.js"}) {
		t.Errorf("args %v", c.Args)
	}
	var env []string
	for _, e := range c.Env {
		env = append(env, e.Name+"="+e.Value)
	}
	want := []string{"DURATION=20s", "K6_NO_USAGE_REPORT=true", "SUMMARY_FILE=stdout", "TARGET=http://catalog:18080", "VUS=4"}
	if !slices.Equal(env, want) {
		t.Errorf("env %v; want %v (the template's ITERATIONS=3 would turn a DURATION run into 3 iterations)", env, want)
	}
	if c.SecurityContext["readOnlyRootFilesystem"] != true {
		t.Errorf("the template's securityContext was lost: %v", c.SecurityContext)
	}
	if !slices.Contains(f.calls, "delete job k6-run-x7k2p --wait=false --ignore-not-found") {
		t.Errorf("the Job was not deleted; calls: %v", f.calls)
	}

	// The CronJob and its ConfigMaps are read once per session.
	run(t, j, script, map[string]string{"TARGET": target})
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

// A script that differs from the cluster's copy is refused before any load.
func TestJobRefusesStaleScripts(t *testing.T) {
	j, f, script := newJob(t)
	f.answers["get configmap loadtests-lib-5g7cm4hb2k"] = []string{configMap(t, map[string]string{"lab.js": "// an older lab.js\n"})}
	_, _, err := run(t, j, script, map[string]string{"TARGET": "http://catalog:18080"})
	if err == nil || !strings.Contains(err.Error(), "loadtests/lib/lab.js differs") || !strings.Contains(err.Error(), "make kind-up") {
		t.Fatalf("err = %v; want the stale lib/lab.js named, and how to redeploy", err)
	}
	if f.created != nil {
		t.Error("a Job was created")
	}
}

// A pod that cannot pull its image fails the run with one line, instead of
// waiting for ever; the Job still goes.
func TestJobImagePullBackOff(t *testing.T) {
	j, f, script := newJob(t)
	f.answers["get job k6-run-x7k2p"] = []string{`{"status":{"active":1}}`}
	f.answers["get pods -l job-name=k6-run-x7k2p"] = []string{`{"items":[{"metadata":{"name":"p"},"status":{"phase":"Pending","containerStatuses":[{"state":{"waiting":{"reason":"ImagePullBackOff","message":"Back-off pulling image \"grafana/k6:1.8.1\": 429 Too Many Requests\nmore"}}}]}}]}`}
	_, _, err := run(t, j, script, map[string]string{"TARGET": "http://catalog:18080"})
	if err == nil || !strings.Contains(err.Error(), "cannot pull its image") || !strings.Contains(err.Error(), "429 Too Many Requests") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v; want one line naming the pull failure", err)
	}
	if !slices.Contains(f.calls, "delete job k6-run-x7k2p --wait=false --ignore-not-found") {
		t.Errorf("the Job was not deleted; calls: %v", f.calls)
	}
}

// A Job that ends without a summary (k6 could not start the script) is an
// error that points at the log.
func TestJobWithoutSummary(t *testing.T) {
	j, f, script := newJob(t)
	f.answers["get job k6-run-x7k2p"] = []string{`{"status":{"failed":1}}`}
	f.answers["logs job/k6-run-x7k2p"] = []string{"level=error msg=\"TARGET (base URL of the entrypoint service) is not set\"\n"}
	_, log, err := run(t, j, script, map[string]string{})
	if err == nil || !strings.Contains(err.Error(), "wrote no summary") {
		t.Fatalf("err = %v; want no summary", err)
	}
	if !strings.Contains(log, "TARGET") {
		t.Errorf("the Job's log was not copied: %q", log)
	}
}

// The real k6 and loadtests/lib/lab.js write the summary between the
// markers Run reads, when SUMMARY_FILE is "stdout" as in the Job. Needs
// the k6 of make tools (K6_BIN, or .state/tools.env).
func TestLabSummaryOnStdout(t *testing.T) {
	bin := os.Getenv("K6_BIN")
	root := repotest.Root(t)
	if bin == "" {
		if data, err := os.ReadFile(filepath.Join(root, ".state", "tools.env")); err == nil {
			for _, line := range strings.Split(string(data), "\n") {
				if v, ok := strings.CutPrefix(line, "K6_BIN="); ok {
					bin = v
				}
			}
		}
	}
	if bin == "" {
		t.Skip("no k6: run make tools, or set K6_BIN")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{}`)) }))
	defer srv.Close()
	cmd := exec.Command(bin, "run", "--quiet", "--no-color", filepath.Join(root, "loadtests", "nplus1.js"))
	cmd.Env = append(os.Environ(), "TARGET="+srv.URL, "VUS=1", "ITERATIONS=3", "SUMMARY_FILE=stdout", "K6_NO_USAGE_REPORT=true")
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("k6: %v\n%s", err, out)
	}
	s, ok := between(string(out), summaryBegin, summaryEnd)
	if !ok {
		t.Fatalf("no summary between the markers in k6's output:\n%s", out)
	}
	file := filepath.Join(t.TempDir(), "summary.json")
	os.WriteFile(file, []byte(s), 0o644)
	sum, err := ReadSummary(file)
	if err != nil || sum.Requests != 3 {
		t.Fatalf("summary %+v, %v; want 3 requests", sum, err)
	}
	if entries, _ := os.ReadDir(cmd.Dir); len(entries) != 0 {
		t.Errorf("k6 wrote files in its working directory: %v (the Job's root filesystem is read-only)", entries)
	}
}
