// Package loadjob runs a load definition in a Kubernetes cluster, as a Job
// of the tracelab image made from the lab's suspended CronJob load
// (k8s/base/load/load.yaml), and reads the run back from the Job's log.
package loadjob

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"tracelab/pkg/kubectl"
	"tracelab/pkg/load"
)

// The names the CronJob of k8s/base/load/load.yaml must keep.
const (
	cronJob    = "load"
	container  = "load"
	volumeName = "loadtests"
)

// Job runs the load in the cluster, as a Job made from the CronJob load:
// the tracelab image of the checkout's build, the definitions of the
// ConfigMap loadtests, and the entrypoint reached by its Service, as a
// client inside the cluster would. On EKS this also avoids a kubectl
// port-forward, which carries a few hundred requests per second at most.
type Job struct {
	Context, Namespace string
	// Ports are infra/local/ports.env: each service's Service listens on
	// its local port (k8s/base/services).
	Ports   map[string]string
	Kubectl Kubectl
	// Poll is the interval between status checks; 0 means 2 s.
	Poll time.Duration

	tmpl *template // read once per Job value
}

// Kubectl runs kubectl with args and stdin (nil for none).
type Kubectl interface {
	Run(ctx context.Context, stdin []byte, args ...string) ([]byte, error)
}

// ExecKubectl runs the kubectl on the PATH.
type ExecKubectl struct{}

func (ExecKubectl) Run(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	return kubectl.Run(ctx, stdin, args...)
}

func (j *Job) kubectl(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	return j.Kubectl.Run(ctx, stdin, append([]string{"--context", j.Context, "-n", j.Namespace}, args...)...)
}

// Target is the service's in-cluster URL: its Service, at its local port.
func (j *Job) Target(service string) (string, error) {
	port, ok := j.Ports[strings.ToUpper(service)+"_PORT"]
	if !ok {
		return "", fmt.Errorf("no port for service %q in infra/local/ports.env", service)
	}
	return "http://" + service + ":" + port, nil
}

// template is what Run needs of the CronJob: its Job template, where the
// definitions are mounted, and the cluster's copy of each.
type template struct {
	jobTemplate map[string]any
	mountPath   string
	files       map[string]string // file name -> content in the cluster
}

// cronJobSpec is the part of the CronJob that says where the definitions are.
type cronJobSpec struct {
	Spec struct {
		JobTemplate struct {
			Spec struct {
				Template struct {
					Spec struct {
						Containers []struct {
							Name         string `json:"name"`
							VolumeMounts []struct {
								Name      string `json:"name"`
								MountPath string `json:"mountPath"`
							} `json:"volumeMounts"`
						} `json:"containers"`
						Volumes []struct {
							Name      string `json:"name"`
							ConfigMap *struct {
								Name string `json:"name"`
							} `json:"configMap"`
						} `json:"volumes"`
					} `json:"spec"`
				} `json:"template"`
			} `json:"spec"`
		} `json:"jobTemplate"`
	} `json:"spec"`
}

// readTemplate reads the CronJob and the ConfigMap of its definitions, once.
func (j *Job) readTemplate(ctx context.Context) (*template, error) {
	if j.tmpl != nil {
		return j.tmpl, nil
	}
	out, err := j.kubectl(ctx, nil, "get", "cronjob", cronJob, "-o", "json")
	if err != nil {
		return nil, fmt.Errorf("%v; the CronJob load of k8s/base/load/load.yaml runs the load on Kubernetes: is the lab deployed (make kind-up, make eks-deploy)?", err)
	}
	var raw struct {
		Spec struct {
			JobTemplate map[string]any `json:"jobTemplate"`
		} `json:"spec"`
	}
	var typed cronJobSpec
	if json.Unmarshal(out, &raw) != nil || json.Unmarshal(out, &typed) != nil || raw.Spec.JobTemplate == nil {
		return nil, errors.New("kubectl get cronjob load: unexpected output")
	}
	pod := typed.Spec.JobTemplate.Spec.Template.Spec
	t := &template{jobTemplate: raw.Spec.JobTemplate}
	for _, c := range pod.Containers {
		for _, m := range c.VolumeMounts {
			if c.Name == container && m.Name == volumeName {
				t.mountPath = m.MountPath
			}
		}
	}
	var configMap string
	for _, v := range pod.Volumes {
		if v.Name == volumeName && v.ConfigMap != nil {
			configMap = v.ConfigMap.Name
		}
	}
	if t.mountPath == "" || configMap == "" {
		return nil, errors.New("the CronJob load mounts no ConfigMap volume \"loadtests\" in its container load (k8s/base/load/load.yaml)")
	}
	out, err = j.kubectl(ctx, nil, "get", "configmap", configMap, "-o", "json")
	if err != nil {
		return nil, err
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal(out, &cm); err != nil {
		return nil, fmt.Errorf("kubectl get configmap %s: unexpected output (%v)", configMap, err)
	}
	t.files = cm.Data
	j.tmpl = t
	return t, nil
}

// checkDefinition refuses a run whose definition differs from the cluster's
// copy: the numbers would come from another load than the checkout's.
func checkDefinition(t *template, def *load.Definition) error {
	base := filepath.Base(def.File())
	inCluster, ok := t.files[base]
	if !ok {
		return fmt.Errorf("the cluster has no load definition %s (ConfigMap loadtests); redeploy the lab (make kind-up or make eks-deploy)", base)
	}
	if string(def.Source()) != inCluster {
		return fmt.Errorf("the cluster's copy of loadtests/%s differs from the checkout's; redeploy the lab (make kind-up or make eks-deploy)", base)
	}
	return nil
}

// runArgs are the load container's arguments for one run: the run's own
// parameters only (the template's, such as ITERATIONS, would change the
// load's shape), sorted so that equal runs give equal Jobs, and the run on
// standard output between load.WriteMarked's lines.
func runArgs(definition, target string, params map[string]string) []string {
	args := []string{"load", "run", definition, "--target", target}
	for _, k := range slices.Sorted(maps.Keys(params)) {
		args = append(args, "--param", k+"="+params[k])
	}
	return append(args, "--out", "-")
}

// manifest is the Job that runs file with opt: the CronJob's template with
// the run's arguments.
func manifest(t *template, file string, opt load.Options) ([]byte, error) {
	var spec map[string]any
	raw, _ := json.Marshal(t.jobTemplate["spec"]) // a deep copy
	if err := json.Unmarshal(raw, &spec); err != nil || spec == nil {
		return nil, errors.New("the CronJob load has no job template spec")
	}
	pod, _ := spec["template"].(map[string]any)
	podSpec, _ := pod["spec"].(map[string]any)
	containers, _ := podSpec["containers"].([]any)
	var c map[string]any
	for _, x := range containers {
		if m, ok := x.(map[string]any); ok && m["name"] == container {
			c = m
		}
	}
	if c == nil {
		return nil, errors.New("the CronJob load has no container load")
	}
	var args []any
	for _, a := range runArgs(path.Join(t.mountPath, filepath.Base(file)), opt.Target, opt.Params) {
		args = append(args, a)
	}
	c["args"] = args
	labels := map[string]any{"app.kubernetes.io/name": "load", "app.kubernetes.io/component": "load", "app.kubernetes.io/managed-by": "tracelab"}
	return json.Marshal(map[string]any{
		"apiVersion": "batch/v1",
		"kind":       "Job",
		"metadata":   map[string]any{"generateName": "load-run-", "labels": labels},
		"spec":       spec,
	})
}

// Run creates the Job, waits for it to finish, appends its log to
// opt.LogFile, reads the run from it, and deletes the Job.
func (j *Job) Run(ctx context.Context, def *load.Definition, opt load.Options) (*load.Run, error) {
	progress := opt.Progress
	if progress == nil {
		progress = func(string, ...any) {}
	}
	t, err := j.readTemplate(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkDefinition(t, def); err != nil {
		return nil, err
	}
	m, err := manifest(t, def.File(), opt)
	if err != nil {
		return nil, err
	}
	out, err := j.kubectl(ctx, m, "create", "-f", "-", "-o", "name")
	if err != nil {
		return nil, err
	}
	name := strings.TrimPrefix(strings.TrimSpace(string(out)), "job.batch/")
	// The Job goes whatever happens, its log copied first.
	defer j.kubectl(context.Background(), nil, "delete", "job", name, "--wait=false", "--ignore-not-found")
	succeeded, werr := j.wait(ctx, name, progress)
	log, lerr := j.kubectl(context.Background(), nil, "logs", "job/"+name)
	where := j.keepLog(opt.LogFile, name, log, lerr)
	if werr != nil {
		return nil, werr
	}
	run, err := load.ReadMarked(string(log))
	switch {
	case err == nil:
		return run, nil
	case succeeded:
		// kubectl logs reads the current log file only: the kubelet's
		// rotation (containerLogMaxSize, 10 MiB by default; about 50,000
		// records) leaves the run's beginning in a rotated one.
		return nil, fmt.Errorf("load job %s succeeded, but its log holds no whole run (%v): was the log rotated? %s", name, err, where)
	default:
		return nil, fmt.Errorf("load job %s failed: %s; %s", name, lastLine(string(log)), where)
	}
}

// keepLog appends the Job's log to file and says where to read it.
func (j *Job) keepLog(file, name string, log []byte, err error) string {
	if err != nil {
		return fmt.Sprintf("no log of job %s: %v", name, err)
	}
	if file == "" {
		return fmt.Sprintf("kubectl --context %s -n %s logs job/%s (before it is deleted)", j.Context, j.Namespace, name)
	}
	f, ferr := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if ferr == nil {
		_, ferr = f.Write(log)
		if cerr := f.Close(); ferr == nil {
			ferr = cerr
		}
	}
	if ferr != nil {
		return fmt.Sprintf("its log could not be kept: %v", ferr)
	}
	return "see " + file
}

// Waiting reasons of the load container that will not resolve by waiting
// (ErrImagePull turns into ImagePullBackOff when the retry fails too).
var stuck = map[string]string{
	"ImagePullBackOff":           "cannot pull its image",
	"ErrImageNeverPull":          "may not pull its image, and the node lacks it",
	"InvalidImageName":           "has an invalid image name",
	"CreateContainerConfigError": "has an invalid configuration",
}

// startTimeout bounds the wait for the pod to start: pulling the image on a
// fresh node takes a minute or two.
const startTimeout = 5 * time.Minute

// progressEvery spaces the progress lines, a little wider than the
// engine's own (10 s), so each relays a new one; tests shorten it.
var progressEvery = 15 * time.Second

// wait polls the Job until it has succeeded or failed, and tells which. A
// failed Job is not an error here: its log says why, and Run reports it.
func (j *Job) wait(ctx context.Context, name string, progress func(string, ...any)) (bool, error) {
	poll := j.Poll
	if poll == 0 {
		poll = 2 * time.Second
	}
	start, last := time.Now(), time.Now()
	for {
		out, err := j.kubectl(ctx, nil, "get", "job", name, "-o", "json")
		if err != nil {
			return false, err
		}
		var st struct {
			Status struct {
				Succeeded, Failed int
			} `json:"status"`
		}
		if err := json.Unmarshal(out, &st); err != nil {
			return false, fmt.Errorf("kubectl get job %s: unexpected output (%v)", name, err)
		}
		if st.Status.Succeeded > 0 || st.Status.Failed > 0 {
			return st.Status.Succeeded > 0, nil
		}
		phase, err := j.podState(ctx, name)
		if err != nil {
			return false, err
		}
		running := phase == "running"
		if !running && time.Since(start) > startTimeout {
			return false, fmt.Errorf("load job %s has not started after %s (%s); see kubectl --context %s -n %s describe job %s", name, startTimeout, phase, j.Context, j.Namespace, name)
		}
		if time.Since(last) >= progressEvery {
			if running {
				phase += j.lastProgress(ctx, name)
			}
			progress("load job %s: %s for %s", name, phase, time.Since(start).Round(time.Second))
			last = time.Now()
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// lastProgress is the engine's latest progress line in the pod, so that a
// long run shows how far the load got, not only that the pod runs.
func (j *Job) lastProgress(ctx context.Context, name string) string {
	out, err := j.kubectl(ctx, nil, "logs", "job/"+name, "--tail=1")
	line := strings.TrimSpace(string(out))
	if err != nil || line == "" || strings.HasPrefix(line, "{") || strings.HasPrefix(line, "---") {
		return ""
	}
	return ": " + firstLine(line)
}

// podState describes the Job's pod, or fails when it cannot start.
func (j *Job) podState(ctx context.Context, name string) (string, error) {
	out, err := j.kubectl(ctx, nil, "get", "pods", "-l", "job-name="+name, "-o", "json")
	if err != nil {
		return "", err
	}
	var pods struct {
		Items []struct {
			Status struct {
				Phase             string `json:"phase"`
				ContainerStatuses []struct {
					State struct {
						Waiting *struct {
							Reason  string `json:"reason"`
							Message string `json:"message"`
						} `json:"waiting"`
					} `json:"state"`
				} `json:"containerStatuses"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal(out, &pods); err != nil {
		return "", fmt.Errorf("kubectl get pods: unexpected output (%v)", err)
	}
	if len(pods.Items) == 0 {
		return "waiting for its pod", nil
	}
	p := pods.Items[0]
	for _, c := range p.Status.ContainerStatuses {
		if w := c.State.Waiting; w != nil {
			if what, ok := stuck[w.Reason]; ok {
				return "", fmt.Errorf("load job %s %s (%s: %s); see k8s/README.md, \"Images\"", name, what, w.Reason, firstLine(w.Message))
			}
			return strings.ToLower(p.Status.Phase) + ", " + w.Reason, nil
		}
	}
	return strings.ToLower(p.Status.Phase), nil
}

// lastLine is the log's last non-empty line: the CLI's one-line error when
// the run failed.
func lastLine(log string) string {
	log = strings.TrimSpace(log)
	if log == "" {
		return "an empty log"
	}
	l := log[strings.LastIndexByte(log, '\n')+1:]
	if len(l) > 200 { // a run's JSON cut short, not a message
		l = l[:200] + "..."
	}
	return l
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
