package k6

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
)

// The lines loadtests/lib/lab.js writes around the summary when
// SUMMARY_FILE is "stdout".
const (
	summaryBegin = "--- tracelab k6 summary ---"
	summaryEnd   = "--- end of tracelab k6 summary ---"
)

// Job runs k6 in the cluster as a Job made from the lab's suspended CronJob
// k6 (k8s/base/load/k6.yaml): the same k6 version (the image is pinned to
// K6_VERSION), the same scripts (ConfigMaps of loadtests/), and the entrypoint
// reached by its Service, as a client inside the cluster would. On EKS this
// also avoids a kubectl port-forward, which carries a few hundred requests
// per second at most.
type Job struct {
	Context, Namespace string
	// Ports are infra/local/ports.env: each service's Service listens on
	// its local port (k8s/base/services).
	Ports   map[string]string
	Kubectl Kubectl
	// Poll is the interval between status checks; 0 means 2 s.
	Poll time.Duration

	scripts *scriptVolume // read once per Job value
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

// scriptVolume is what Run needs of the CronJob: its Job template, where
// the scripts are mounted, and which local file each mounted file comes from.
type scriptVolume struct {
	template  map[string]any // the CronJob's spec.jobTemplate
	mountPath string
	files     map[string]string // path under mountPath -> its content in the cluster
}

// readScripts reads the CronJob and the ConfigMaps its script volume
// projects, once.
func (j *Job) readScripts(ctx context.Context) (*scriptVolume, error) {
	if j.scripts != nil {
		return j.scripts, nil
	}
	out, err := j.kubectl(ctx, nil, "get", "cronjob", "k6", "-o", "json")
	if err != nil {
		return nil, fmt.Errorf("%v; the k6 CronJob of k8s/base/load/k6.yaml runs the load on Kubernetes: is the lab deployed (make kind-up, make eks-deploy)?", err)
	}
	var cj struct {
		Spec struct {
			JobTemplate map[string]any `json:"jobTemplate"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(out, &cj); err != nil || cj.Spec.JobTemplate == nil {
		return nil, fmt.Errorf("kubectl get cronjob k6: unexpected output (%v)", err)
	}
	// The same JSON again, typed, for the volume and its ConfigMaps.
	var typed struct {
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
								Projected *struct {
									Sources []struct {
										ConfigMap *struct {
											Name  string `json:"name"`
											Items []struct {
												Key  string `json:"key"`
												Path string `json:"path"`
											} `json:"items"`
										} `json:"configMap"`
									} `json:"sources"`
								} `json:"projected"`
							} `json:"volumes"`
						} `json:"spec"`
					} `json:"template"`
				} `json:"spec"`
			} `json:"jobTemplate"`
		} `json:"spec"`
	}
	json.Unmarshal(out, &typed)
	pod := typed.Spec.JobTemplate.Spec.Template.Spec
	sv := &scriptVolume{template: cj.Spec.JobTemplate, files: map[string]string{}}
	for _, c := range pod.Containers {
		for _, m := range c.VolumeMounts {
			if c.Name == "k6" && m.Name == "scripts" {
				sv.mountPath = m.MountPath
			}
		}
	}
	if sv.mountPath == "" {
		return nil, errors.New("the k6 CronJob mounts no volume \"scripts\" in its container k6 (k8s/base/load/k6.yaml)")
	}
	for _, v := range pod.Volumes {
		if v.Name != "scripts" || v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.ConfigMap == nil {
				continue
			}
			out, err := j.kubectl(ctx, nil, "get", "configmap", src.ConfigMap.Name, "-o", "json")
			if err != nil {
				return nil, err
			}
			var cm struct {
				Data map[string]string `json:"data"`
			}
			if err := json.Unmarshal(out, &cm); err != nil {
				return nil, fmt.Errorf("kubectl get configmap %s: unexpected output (%v)", src.ConfigMap.Name, err)
			}
			paths := map[string]string{}
			for _, it := range src.ConfigMap.Items {
				paths[it.Key] = it.Path
			}
			for key, content := range cm.Data {
				if _, listed := paths[key]; len(src.ConfigMap.Items) > 0 && !listed {
					continue // not projected
				}
				p := key
				if alt, ok := paths[key]; ok {
					p = alt
				}
				sv.files[p] = content
			}
		}
	}
	j.scripts = sv
	return sv, nil
}

// checkScripts refuses a run whose script or shared library differs from
// the cluster's copy: the numbers would come from another load than the
// checkout's.
func (j *Job) checkScripts(sv *scriptVolume, script string) error {
	base := filepath.Base(script)
	if _, ok := sv.files[base]; !ok {
		return fmt.Errorf("the cluster has no load script %s (ConfigMap loadtests); redeploy the lab (make kind-up or make eks-deploy)", base)
	}
	dir := filepath.Dir(script)
	for _, p := range slices.Sorted(maps.Keys(sv.files)) {
		local, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			continue // a script the checkout no longer has cannot be the one run
		}
		if string(local) != sv.files[p] {
			return fmt.Errorf("the cluster's copy of loadtests/%s differs from the checkout's; redeploy the lab (make kind-up or make eks-deploy)", p)
		}
	}
	return nil
}

// jobFor is the Job that runs script with env: the CronJob's template with
// the run's environment only (the template's defaults, such as ITERATIONS,
// would change the load's shape) and the summary on standard output.
func jobFor(sv *scriptVolume, script string, env map[string]string) ([]byte, error) {
	var spec map[string]any
	raw, _ := json.Marshal(sv.template["spec"]) // a deep copy
	if err := json.Unmarshal(raw, &spec); err != nil || spec == nil {
		return nil, errors.New("the k6 CronJob has no job template spec")
	}
	containers, _ := dig(spec, "template", "spec", "containers").([]any)
	var k6c map[string]any
	for _, c := range containers {
		if m, ok := c.(map[string]any); ok && m["name"] == "k6" {
			k6c = m
		}
	}
	if k6c == nil {
		return nil, errors.New("the k6 CronJob has no container k6")
	}
	all := map[string]string{"SUMMARY_FILE": "stdout", "K6_NO_USAGE_REPORT": "true"}
	for k, v := range env {
		all[k] = v
	}
	var vars []any
	for _, k := range slices.Sorted(maps.Keys(all)) {
		vars = append(vars, map[string]any{"name": k, "value": all[k]})
	}
	k6c["env"] = vars
	k6c["args"] = []any{"run", "--quiet", "--no-color", path.Join(sv.mountPath, filepath.Base(script))}
	labels := map[string]any{"app.kubernetes.io/name": "k6", "app.kubernetes.io/component": "load", "app.kubernetes.io/managed-by": "tracelab"}
	job := map[string]any{
		"apiVersion": "batch/v1",
		"kind":       "Job",
		"metadata":   map[string]any{"generateName": "k6-run-", "labels": labels},
		"spec":       spec,
	}
	return json.Marshal(job)
}

func dig(m map[string]any, keys ...string) any {
	var cur any = m
	for _, k := range keys {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	return cur
}

// Run creates the Job, waits for it to finish, copies its log to log and
// its summary to summaryFile, and deletes it.
func (j *Job) Run(ctx context.Context, script string, env map[string]string, summaryFile string, log *os.File, progress func(string, ...any)) (*Summary, error) {
	sv, err := j.readScripts(ctx)
	if err != nil {
		return nil, err
	}
	if err := j.checkScripts(sv, script); err != nil {
		return nil, err
	}
	manifest, err := jobFor(sv, script, env)
	if err != nil {
		return nil, err
	}
	os.Remove(summaryFile)
	out, err := j.kubectl(ctx, manifest, "create", "-f", "-", "-o", "name")
	if err != nil {
		return nil, err
	}
	name := strings.TrimPrefix(strings.TrimSpace(string(out)), "job.batch/")
	// The Job goes whatever happens: its log is copied first.
	defer j.kubectl(context.Background(), nil, "delete", "job", name, "--wait=false", "--ignore-not-found")
	if err := j.wait(ctx, name, progress); err != nil {
		j.copyLog(name, log)
		return nil, err
	}
	logs := j.copyLog(name, log)
	summary, ok := between(logs, summaryBegin, summaryEnd)
	if !ok {
		return nil, fmt.Errorf("k6 job %s wrote no summary; see %s", name, log.Name())
	}
	if err := os.WriteFile(summaryFile, []byte(summary), 0o644); err != nil {
		return nil, err
	}
	return ReadSummary(summaryFile)
}

// copyLog appends the Job's log to log and returns it.
func (j *Job) copyLog(name string, log *os.File) string {
	out, err := j.kubectl(context.Background(), nil, "logs", "job/"+name)
	if err != nil {
		fmt.Fprintf(log, "tracelab: no log of job %s: %v\n", name, err)
		return ""
	}
	log.Write(out)
	return string(out)
}

// Waiting reasons of the k6 container that will not resolve by waiting
// (ErrImagePull turns into ImagePullBackOff when the retry fails too).
var stuck = map[string]string{
	"ImagePullBackOff":           "cannot pull its image",
	"InvalidImageName":           "has an invalid image name",
	"CreateContainerConfigError": "has an invalid configuration",
}

// startTimeout bounds the wait for the k6 pod to start: pulling its image on
// a fresh node takes a minute or two.
const startTimeout = 5 * time.Minute

// wait polls the Job until it has succeeded or failed. k6 exits 99 when a
// threshold fails, which fails the Job; the lab judges results itself, so
// a finished Job of either kind is read, as k6's exit code is locally.
func (j *Job) wait(ctx context.Context, name string, progress func(string, ...any)) error {
	poll := j.Poll
	if poll == 0 {
		poll = 2 * time.Second
	}
	start, last := time.Now(), time.Now()
	for {
		out, err := j.kubectl(ctx, nil, "get", "job", name, "-o", "json")
		if err != nil {
			return err
		}
		var st struct {
			Status struct {
				Succeeded, Failed int
			} `json:"status"`
		}
		if err := json.Unmarshal(out, &st); err != nil {
			return fmt.Errorf("kubectl get job %s: unexpected output (%v)", name, err)
		}
		if st.Status.Succeeded > 0 || st.Status.Failed > 0 {
			return nil
		}
		phase, err := j.podState(ctx, name)
		if err != nil {
			return err
		}
		if strings.HasPrefix(phase, "pending") || strings.HasPrefix(phase, "waiting") {
			if time.Since(start) > startTimeout {
				return fmt.Errorf("k6 job %s has not started after %s (%s); see kubectl --context %s -n %s describe job %s", name, startTimeout, phase, j.Context, j.Namespace, name)
			}
		}
		if time.Since(last) >= 15*time.Second {
			progress("k6 job %s: %s for %s", name, phase, time.Since(start).Round(time.Second))
			last = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
}

// podState describes the Job's pod, or fails when it cannot start.
func (j *Job) podState(ctx context.Context, name string) (string, error) {
	out, err := j.kubectl(ctx, nil, "get", "pods", "-l", "job-name="+name, "-o", "json")
	if err != nil {
		return "", err
	}
	var pods struct {
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Status struct {
				Phase             string `json:"phase"`
				ContainerStatuses []struct {
					Image string `json:"image"`
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
				return "", fmt.Errorf("k6 job %s %s (%s: %s); see README.md, \"Docker Hub's pull limit\"", name, what, w.Reason, firstLine(w.Message))
			}
			return strings.ToLower(p.Status.Phase) + ", " + w.Reason, nil
		}
	}
	return strings.ToLower(p.Status.Phase), nil
}

// between returns the lines strictly between the begin and end marker
// lines; k6's own warnings may come before or after them.
func between(s, begin, end string) (string, bool) {
	i := strings.Index(s, begin+"\n")
	if i < 0 {
		return "", false
	}
	rest := s[i+len(begin)+1:]
	k := strings.Index(rest, "\n"+end)
	if k < 0 {
		return "", false
	}
	return rest[:k], true
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
