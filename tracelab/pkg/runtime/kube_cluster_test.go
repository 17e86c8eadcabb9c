package runtime_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"tracelab/internal/kubecluster"
	"tracelab/internal/labtest"
	"tracelab/internal/manifests"
	"tracelab/internal/repotest"
	"tracelab/pkg/runtime"
	"tracelab/pkg/scenario"
)

// These tests drive the Kube runtime as tracelab's CLI does (NewKube, the
// kubectl on the PATH, KUBE_CONTEXT) against a real API server with the
// kind overlay deployed (internal/kubecluster; make test-k8s runs them).
// What a real cluster adds that kwok's fake nodes cannot, the port-forwards
// of the EKS runtime, stays tested by transcript (kube_test.go).

// useCluster points the kubectl tracelab runs at the test cluster: the
// pinned kubectl first on the PATH, the cluster's kubeconfig, its context.
func useCluster(t *testing.T, c *kubecluster.Cluster) {
	bin := t.TempDir()
	if err := os.Symlink(c.Tools.Kubectl, filepath.Join(bin, "kubectl")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("KUBECONFIG", c.Kubeconfig)
	t.Setenv("KUBE_CONTEXT", c.Context)
}

// standInForNodePort answers HTTP on 127.0.0.1 at the lab's port named
// portVar, where kind maps the service's NodePort: after each rollout Up
// waits until the Service answers there, and kwok's pods answer nothing.
// It returns how many requests it has answered.
func standInForNodePort(t *testing.T, root, portVar string) *atomic.Int32 {
	t.Helper()
	ports := labtest.Open(t, root).Ports
	ln, err := net.Listen("tcp", "127.0.0.1:"+ports[portVar])
	if err != nil {
		t.Fatalf("the port kind would map (%s): %v", portVar, err)
	}
	var answered atomic.Int32
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answered.Add(1)
		http.NotFound(w, r)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return &answered
}

// A variant switch as a scenario run makes it, with the antpath scenario's
// own settings: its dead-end variant (virtual threads), then the fix, which
// drops the virtual-threads setting. After each Up, the gateway's
// Deployment on the server and its running pods carry the variant's
// environment; the same variant again restarts nothing.
func TestKubeSwitchesVariantsOnAServer(t *testing.T) {
	c := kubecluster.Start(t, kubecluster.ToolsForTest(t))
	root := repotest.LabCopy(t)
	if _, err := manifests.Deploy(c, root, "kind"); err != nil {
		t.Fatalf("%v", err)
	}
	useCluster(t, c)
	answers := standInForNodePort(t, root, "GATEWAY_PORT")
	k, err := runtime.NewKube("kind", labtest.Open(t, root), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	s, err := scenario.Load(labtest.Open(t, root), "antpath")
	if err != nil {
		t.Fatal(err)
	}
	// On kwok's nodes a pod is Ready the moment it is scheduled, so a
	// rollout would end before anyone could tell whether Up waited for it.
	// Two seconds of minReadySeconds make every rollout of the gateway last
	// that long.
	c.Kubectl("-n", runtime.Namespace, "patch", "deployment", "gateway", "--type=merge", "-p", `{"spec":{"minReadySeconds":2}}`)
	ctx := context.Background()
	const dropped = "SPRING_THREADS_VIRTUAL_ENABLED"
	if _, ok := s.SettingsFor("smoke", "virtual-threads")["gateway"][dropped]; !ok {
		t.Fatalf("scenarios/antpath: variant virtual-threads no longer sets %s on the gateway; choose another setting that one variant sets and the next does not", dropped)
	}
	for _, variant := range []string{"virtual-threads", "fixed"} {
		settings := s.SettingsFor("smoke", variant)
		before := answers.Load()
		if err := k.Up(ctx, s.Services, settings, variant); err != nil {
			t.Fatalf("Up %s: %v", variant, err)
		}
		if answers.Load() == before {
			t.Errorf("Up %s rolled the gateway without waiting for its Service to answer", variant)
		}
		want := map[string]string{"LAB_VARIANT": variant}
		for name, value := range settings["gateway"] {
			want[name] = value
		}
		d := getDeployment(t, c, "gateway")
		// kubectl rollout status's own test of a finished rollout: the
		// controller saw the change, and every replica is new and available
		// (during the rollout, the old pod counts in status.replicas).
		if d.Status.ObservedGeneration != d.Metadata.Generation || d.Status.Replicas != d.Spec.Replicas ||
			d.Status.UpdatedReplicas != d.Spec.Replicas || d.Status.AvailableReplicas != d.Spec.Replicas {
			t.Errorf("%s: Up returned before the gateway rolled out: generation %d, spec.replicas %d, status %+v", variant, d.Metadata.Generation, d.Spec.Replicas, d.Status)
		}
		checkEnv(t, variant+": deployment/gateway", d.env(), want, variant == "fixed", dropped)
		pods := livePods(t, c, "gateway")
		if len(pods) == 0 {
			t.Fatalf("%s: no running gateway pod", variant)
		}
		for name, env := range pods {
			checkEnv(t, variant+": pod "+name, env, want, variant == "fixed", dropped)
		}
	}

	before := getDeployment(t, c, "gateway").Metadata.Generation
	if err := k.Up(ctx, s.Services, s.SettingsFor("smoke", "fixed"), "fixed"); err != nil {
		t.Fatal(err)
	}
	if after := getDeployment(t, c, "gateway").Metadata.Generation; after != before {
		t.Errorf("the same variant again changed the gateway (generation %d -> %d): it restarts for nothing", before, after)
	}

	status, err := k.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"deployment   gateway        1/1", "statefulset  postgres       1/1", "context " + c.Context + ", namespace tracelab"} {
		if !strings.Contains(status, want) {
			t.Errorf("status lacks %q:\n%s", want, status)
		}
	}
	if err := k.Down(ctx); err != nil {
		t.Error(err)
	}
}

// What the runtime says when the cluster is not what it expects: each
// message names what to do.
func TestKubeErrorsSayWhatToDo(t *testing.T) {
	c := kubecluster.Start(t, kubecluster.ToolsForTest(t))
	root := repotest.LabCopy(t)
	useCluster(t, c)
	up := func() error {
		k, err := runtime.NewKube("kind", labtest.Open(t, root), t.Logf)
		if err != nil {
			t.Fatal(err)
		}
		return k.Up(context.Background(), []string{"catalog"}, nil, "baseline")
	}
	expect := func(t *testing.T, err error, want string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v, want %q", err, want)
		}
		t.Logf("said: %v", err)
	}

	t.Run("lab not deployed", func(t *testing.T) {
		expect(t, up(), "the lab is not deployed in namespace tracelab of context "+c.Context+"; run 'make kind-up'")
	})

	t.Run("no such context", func(t *testing.T) {
		t.Setenv("KUBE_CONTEXT", "kind-elsewhere")
		expect(t, up(), `context "kind-elsewhere" does not exist`)
	})

	// A Jaeger that cannot be scheduled (no node has the label it asks
	// for), with a deadline short enough for the Deployment controller to
	// give up while the test waits.
	t.Run("rollout fails", func(t *testing.T) {
		c.Apply(`apiVersion: v1
kind: Namespace
metadata: {name: tracelab}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: jaeger, namespace: tracelab}
spec:
  progressDeadlineSeconds: 2
  selector: {matchLabels: {app: jaeger}}
  template:
    metadata: {labels: {app: jaeger}}
    spec:
      nodeSelector: {no-such-label: "true"}
      securityContext: {runAsNonRoot: true, runAsUser: 10001, seccompProfile: {type: RuntimeDefault}}
      containers:
        - name: jaeger
          image: jaegertracing/jaeger:2.0.0
          securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
`)
		expect(t, up(), `deployment/jaeger did not become ready: kubectl rollout status: error: deployment "jaeger" exceeded its progress deadline; see kubectl --context `+c.Context+` -n tracelab describe deployment/jaeger`)
	})
}

type deployment struct {
	Metadata struct {
		Generation int64 `json:"generation"`
	} `json:"metadata"`
	Spec struct {
		Replicas int `json:"replicas"`
		Template struct {
			Spec podSpec `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
	Status struct {
		ObservedGeneration int64 `json:"observedGeneration"`
		Replicas           int   `json:"replicas"`
		UpdatedReplicas    int   `json:"updatedReplicas"`
		AvailableReplicas  int   `json:"availableReplicas"`
	} `json:"status"`
}

func (d deployment) env() map[string]string { return d.Spec.Template.Spec.env() }

type podSpec struct {
	Containers []struct {
		Env []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"env"`
	} `json:"containers"`
}

// env is the first container's environment: the services run one.
func (p podSpec) env() map[string]string {
	out := map[string]string{}
	if len(p.Containers) > 0 {
		for _, e := range p.Containers[0].Env {
			out[e.Name] = e.Value
		}
	}
	return out
}

func getDeployment(t *testing.T, c *kubecluster.Cluster, name string) deployment {
	t.Helper()
	var d deployment
	if err := json.Unmarshal(c.Kubectl("-n", runtime.Namespace, "get", "deployment", name, "-o", "json"), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// livePods returns the environment of each pod of a workload that is not
// on its way out: after a rollout, the old pods may still be terminating.
func livePods(t *testing.T, c *kubecluster.Cluster, name string) map[string]map[string]string {
	t.Helper()
	var list struct {
		Items []struct {
			Metadata struct {
				Name              string  `json:"name"`
				DeletionTimestamp *string `json:"deletionTimestamp"`
			} `json:"metadata"`
			Spec   podSpec `json:"spec"`
			Status struct {
				Phase string `json:"phase"`
			} `json:"status"`
		} `json:"items"`
	}
	out := c.Kubectl("-n", runtime.Namespace, "get", "pods", "-l", "app.kubernetes.io/name="+name, "-o", "json")
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatal(err)
	}
	pods := map[string]map[string]string{}
	for _, p := range list.Items {
		if p.Metadata.DeletionTimestamp == nil && p.Status.Phase == "Running" {
			pods[p.Metadata.Name] = p.Spec.env()
		}
	}
	return pods
}

// checkEnv compares an environment with the variant's; gone names a
// variable the variant must have removed.
func checkEnv(t *testing.T, what string, env, want map[string]string, checkGone bool, gone string) {
	t.Helper()
	for name, value := range want {
		if env[name] != value {
			t.Errorf("%s: %s=%q, want %q", what, name, env[name], value)
		}
	}
	if v, ok := env[gone]; checkGone && ok {
		t.Errorf("%s: %s=%q is still set; the previous variant's setting must go", what, gone, v)
	}
}
