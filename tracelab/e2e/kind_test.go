//go:build e2e && kind

package e2e

// TestKind runs the lab on a real kind cluster the way a user does, on a
// node image, engine and images built on this machine (make test-kind,
// infra/kind-test/README.md): kind-up, two scenarios' smoke profiles with
// RUNTIME=kind, then kind-down. What the harness does differently from a
// user's machine is in its cluster config (kindConfig) and in the
// environment infra/kind-test/run.sh gives this test.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"tracelab/pkg/result"
	"tracelab/pkg/scenario"
)

const kindCluster = "tracelab" // KIND_CLUSTER in the Makefile

func TestKind(t *testing.T) {
	node := os.Getenv("TRACELAB_KIND_NODE_IMAGE")
	if node == "" {
		t.Fatal("TRACELAB_KIND_NODE_IMAGE is not set; run through 'make test-kind'")
	}
	r := root(t)
	config := filepath.Join(t.TempDir(), "cluster.yaml")
	writeKindConfig(t, filepath.Join(r, "k8s", "kind", "cluster.yaml"), filepath.Join(r, "infra", "kind-test", "cni.conflist"), config)
	makeVars := append([]string{"KIND_OVERLAY=infra/kind-test/overlay"}, strings.Fields(os.Getenv("TRACELAB_KIND_MAKE_VARS"))...)

	t.Cleanup(func() {
		if os.Getenv("TRACELAB_KIND_KEEP") != "" {
			t.Log("TRACELAB_KIND_KEEP is set: the cluster stays (make kind-down removes it)")
			return
		}
		runMake(t, "kind-down")
		if out, _ := exec.Command("kind", "get", "clusters").Output(); strings.Contains(string(out), kindCluster) {
			t.Errorf("kind-down left the cluster: %s", out)
		}
	})
	timed(t, "kind create cluster", func() {
		mustRun(t, "kind", "create", "cluster", "--config", config, "--image", node, "--wait", "2m")
	})
	// A user's kind pulls the third-party images from their registries
	// (or make kind-preload); here they are built locally and loaded.
	timed(t, "kind load (third-party images built here)", func() {
		render := mustOutput(t, "bash", "-c", "kubectl kustomize --load-restrictor LoadRestrictionsNone infra/kind-test/overlay | k8s/images.sh third-party")
		mustRun(t, "kind", append([]string{"load", "docker-image", "--name", kindCluster}, strings.Fields(render)...)...)
	})
	timed(t, "make kind-up", func() { runMake(t, append([]string{"kind-up"}, makeVars...)...) })
	if t.Failed() {
		t.FailNow()
	}
	t.Run("pod-security", checkPodSecurity)
	for _, name := range kindScenarios() {
		t.Run(name, func(t *testing.T) {
			before := podsByWorkload(t)
			var res result.Result
			timed(t, "make RUNTIME=kind scenario-"+name, func() { res = kindSmoke(t, name) })
			checkCPUAndIntervals(t, name, res)
			checkJoin(t, res)
			checkRollouts(t, name, before, podsByWorkload(t))
		})
	}
	t.Run("explorer", checkExplorerOnKind)
	t.Run("memory-limits", checkMemoryPeaks)
}

// writeKindConfig writes the user's cluster config with this machine's
// workarounds (infra/kind-test/README.md, each with its cause):
//   - containerd may not lower oom_score_adj: the node lacks
//     CAP_SYS_RESOURCE, so every pod sandbox would fail;
//   - kubelet 1.35 refuses cgroup v1 unless told otherwise;
//   - kindnetd cannot be built here (not served at the commit kind pins), so
//     the one node gets a static bridge network from Debian's CNI plugins.
//
// The user's file stays what a user with Docker needs.
func writeKindConfig(t *testing.T, user, cni, out string) {
	t.Helper()
	data, err := os.ReadFile(user)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("%s: %v", user, err)
	}
	patches, _ := cfg["containerdConfigPatches"].([]any)
	cfg["containerdConfigPatches"] = append(patches,
		"[plugins.\"io.containerd.grpc.v1.cri\"]\n  restrict_oom_score_adj = true")
	kubeadm, _ := cfg["kubeadmConfigPatches"].([]any)
	cfg["kubeadmConfigPatches"] = append(kubeadm, "kind: KubeletConfiguration\nfailCgroupV1: false")
	networking, _ := cfg["networking"].(map[string]any)
	if networking == nil {
		networking = map[string]any{}
	}
	networking["disableDefaultCNI"] = true
	cfg["networking"] = networking
	nodes, _ := cfg["nodes"].([]any)
	if len(nodes) != 1 {
		t.Fatalf("%s: %d nodes; the static bridge network serves one", user, len(nodes))
	}
	n := nodes[0].(map[string]any)
	delete(n, "image") // the node image built here, by kind create --image
	mounts, _ := n["extraMounts"].([]any)
	n["extraMounts"] = append(mounts, map[string]any{"hostPath": cni, "containerPath": "/etc/cni/net.d/10-tracelab.conflist", "readOnly": true})
	b, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// kindScenarios are the scenarios TestKind runs: nplus1 and eventloop, or
// those TRACELAB_KIND_SCENARIOS names (space-separated), for a look at
// another scenario on a real cluster without making CI longer.
func kindScenarios() []string {
	if names := strings.Fields(os.Getenv("TRACELAB_KIND_SCENARIOS")); len(names) > 0 {
		return names
	}
	return []string{"nplus1", "eventloop"}
}

// kindSmoke runs `make RUNTIME=kind scenario-NAME PROFILE=smoke`, as a user
// would, and returns its result; every check must hold.
func kindSmoke(t *testing.T, name string) result.Result {
	t.Helper()
	out := runMake(t, "RUNTIME=kind", "PROFILE=smoke", "scenario-"+name)
	var path string
	for _, line := range strings.Split(out, "\n") {
		if p, ok := strings.CutPrefix(line, "result: "); ok {
			path = p
		}
	}
	res, err := result.Read(path)
	if err != nil {
		t.Fatalf("result file: %v", err)
	}
	if res.Runtime != "kind" {
		t.Errorf("runtime %q, want kind", res.Runtime)
	}
	for _, c := range res.Checks {
		if !c.OK {
			t.Errorf("check failed: %s — %s", c.Name, c.Detail)
		}
	}
	if res.Verdict != "pass" {
		t.Errorf("verdict %q", res.Verdict)
	}
	return *res
}

// checkPodSecurity: the real API server admitted every workload of the lab
// under Pod Security "restricted" (its namespace's label), and refuses a pod
// that breaks it, so the label is enforced rather than decorative.
func checkPodSecurity(t *testing.T) {
	if got := strings.TrimSpace(mustOutput(t, "kubectl", "--context", "kind-"+kindCluster, "get", "namespace", "tracelab",
		"-o", `jsonpath={.metadata.labels.pod-security\.kubernetes\.io/enforce}`)); got != "restricted" {
		t.Fatalf("namespace tracelab enforces %q, want restricted", got)
	}
	var pods struct {
		Items []struct {
			Metadata struct{ Name string }
			Status   struct{ Phase string }
		}
	}
	mustJSON(t, &pods, "kubectl", "--context", "kind-"+kindCluster, "-n", "tracelab", "get", "pods", "-o", "json")
	running := 0
	for _, p := range pods.Items {
		if p.Status.Phase == "Running" {
			running++
		}
	}
	if running == 0 {
		t.Fatal("no pod of the lab is running")
	}
	privileged := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"psa-probe"},"spec":{"containers":[{"name":"c","image":"x","securityContext":{"privileged":true}}]}}`
	cmd := exec.Command("kubectl", "--context", "kind-"+kindCluster, "-n", "tracelab", "create", "--dry-run=server", "-f", "-")
	cmd.Stdin = strings.NewReader(privileged)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "violates PodSecurity") {
		t.Errorf("a privileged pod was not refused by Pod Security: %v %s", err, out)
	}
	t.Logf("%d pods running under Pod Security restricted; a privileged pod is refused", running)
}

// podsByWorkload maps each pod of the lab to its owner's name prefix, to
// tell which workloads a variant switch rolled.
func podsByWorkload(t *testing.T) map[string]string {
	t.Helper()
	var pods struct {
		Items []struct {
			Metadata struct {
				Name   string
				Labels map[string]string
			}
		}
	}
	mustJSON(t, &pods, "kubectl", "--context", "kind-"+kindCluster, "-n", "tracelab", "get", "pods", "-o", "json")
	out := map[string]string{}
	for _, p := range pods.Items {
		out[p.Metadata.Name] = p.Metadata.Labels["app.kubernetes.io/name"]
	}
	return out
}

// checkRollouts: a variant switch rolls only the scenario's services (each
// carries the variant's label, lab.variant); every other pod of the lab,
// the telemetry stack and the other services, is the one it was.
func checkRollouts(t *testing.T, name string, before, after map[string]string) {
	t.Helper()
	rolled := map[string]bool{}
	for pod, app := range before {
		// The load's Job pods come and go with each run.
		if _, ok := after[pod]; !ok && app != "load" {
			rolled[app] = true
		}
	}
	var names []string
	for app := range rolled {
		names = append(names, app)
	}
	t.Logf("%s: the variant switches rolled %v", name, names)
	s, err := scenario.Load(checkout(t), name)
	if err != nil {
		t.Fatal(err)
	}
	for app := range rolled {
		if !slices.Contains(s.Services, app) {
			t.Errorf("%s: %s was rolled, but it is not one of the scenario's services %v", name, app, s.Services)
		}
	}
}

// checkMemoryPeaks: every container's peak memory, read from its cgroup on
// the node after both scenarios ran, is below its limit, with the headroom
// logged for the README.
func checkMemoryPeaks(t *testing.T) {
	var pods struct {
		Items []struct {
			Metadata struct{ Name string }
			Spec     struct {
				Containers []struct {
					Name      string
					Resources struct {
						Limits map[string]string
					}
				}
			}
			Status struct {
				ContainerStatuses []struct {
					Name        string
					ContainerID string `json:"containerID"`
				} `json:"containerStatuses"`
			}
		}
	}
	mustJSON(t, &pods, "kubectl", "--context", "kind-"+kindCluster, "-n", "tracelab", "get", "pods", "-o", "json")
	node := kindCluster + "-control-plane"
	for _, p := range pods.Items {
		limits := map[string]string{}
		for _, c := range p.Spec.Containers {
			limits[c.Name] = c.Resources.Limits["memory"]
		}
		for _, c := range p.Status.ContainerStatuses {
			id := strings.TrimPrefix(c.ContainerID, "containerd://")
			if id == "" {
				continue
			}
			raw := mustOutput(t, "docker", "exec", node, "sh", "-c",
				fmt.Sprintf("cat $(find /sys/fs/cgroup/memory/ -type d -name '*%s*' | head -n1)/memory.max_usage_in_bytes", id))
			peak, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
			if err != nil {
				t.Errorf("%s/%s: peak memory %q: %v", p.Metadata.Name, c.Name, raw, err)
				continue
			}
			limit := limits[c.Name]
			if limit == "" {
				t.Errorf("%s/%s has no memory limit", p.Metadata.Name, c.Name)
				continue
			}
			lim := quantityBytes(t, limit)
			t.Logf("%-40s %-12s peak %4.0f MiB of %s (%.0f%%)", p.Metadata.Name, c.Name, peak/(1<<20), limit, 100*peak/lim)
			if peak >= lim {
				t.Errorf("%s/%s reached its memory limit %s", p.Metadata.Name, c.Name, limit)
			}
		}
	}
}

// quantityBytes reads the memory quantities the manifests use (Mi, Gi).
func quantityBytes(t *testing.T, q string) float64 {
	t.Helper()
	for suffix, mult := range map[string]float64{"Gi": 1 << 30, "Mi": 1 << 20, "Ki": 1 << 10} {
		if n, ok := strings.CutSuffix(q, suffix); ok {
			v, err := strconv.ParseFloat(n, 64)
			if err != nil {
				t.Fatalf("quantity %q", q)
			}
			return v * mult
		}
	}
	v, err := strconv.ParseFloat(q, 64)
	if err != nil {
		t.Fatalf("quantity %q", q)
	}
	return v
}

func timed(t *testing.T, what string, f func()) {
	t.Helper()
	start := time.Now()
	f()
	t.Logf("%s: %s", what, time.Since(start).Round(time.Second))
}

// runMake runs make in the checkout with its output in the test log, and
// returns the output.
func runMake(t *testing.T, args ...string) string {
	t.Helper()
	return mustOutput(t, "make", append([]string{"--no-print-directory"}, args...)...)
}

func mustRun(t *testing.T, name string, args ...string) { t.Helper(); mustOutput(t, name, args...) }

func mustOutput(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = root(t)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Logf("%s %s:\n%s", name, strings.Join(args, " "), out.String())
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return out.String()
}

func mustJSON(t *testing.T, v any, name string, args ...string) {
	t.Helper()
	if err := json.Unmarshal([]byte(mustOutput(t, name, args...)), v); err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
}
