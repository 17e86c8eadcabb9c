package manifests

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"tracelab/internal/kubecluster"
	"tracelab/internal/repotest"
)

// Each overlay, server-side applied to a fresh control plane as make kind-up
// and make eks-deploy apply it, with strict field validation: the API
// server takes every object without an error or a warning, and every
// Deployment and StatefulSet rolls out on kwok's nodes. This is where a
// misspelt field, an object of a kind the cluster does not serve, or a pod
// the restricted Pod Security level refuses shows.
func TestOverlaysRollOutOnAServer(t *testing.T) {
	tools := kubecluster.ToolsForTest(t)
	root := repotest.LabCopy(t)
	for _, overlay := range Overlays {
		t.Run(overlay, func(t *testing.T) {
			c := kubecluster.Start(t, tools)
			objs, err := Deploy(c, root, overlay)
			if err != nil {
				t.Fatalf("%v", err)
			}
			var workloads []string
			for _, o := range objs {
				if o.Kind() == "Deployment" || o.Kind() == "StatefulSet" {
					workloads = append(workloads, o.ID())
				}
			}
			t.Logf("%d workloads rolled out: %s", len(workloads), strings.Join(workloads, " "))
		})
	}
}

// The API server, not a check of ours, refuses what the lab must never
// run or store. The namespaces are the rendered ones, so their Pod
// Security labels are the manifests' own.
func TestAPIServerRefuses(t *testing.T) {
	tools := kubecluster.ToolsForTest(t)
	_, objs, err := Render(tools.Kustomize, repotest.LabCopy(t), "kind")
	if err != nil {
		t.Fatal(err)
	}
	c := kubecluster.Start(t, tools)
	var namespaces []string
	for _, o := range objs {
		if o.Kind() == "Namespace" {
			c.Apply(toYAML(t, o))
			c.WaitForServiceAccount(o.Name())
			namespaces = append(namespaces, o.Name())
		}
	}
	if len(namespaces) == 0 {
		t.Fatal("the kind overlay renders no Namespace")
	}
	catalog := Find(objs, "Deployment", "catalog")
	if catalog == nil {
		t.Fatal("the kind overlay renders no Deployment catalog")
	}

	// Every namespace of the lab: a privileged pod is refused, and the same
	// pod unprivileged, the lab's own pod template, is admitted (so the
	// refusal is the privilege's, not another fault of the pod's).
	for _, ns := range namespaces {
		t.Run("a privileged pod in namespace "+ns, func(t *testing.T) {
			pod := podFrom(t, catalog, ns)
			if _, err := c.TryApply(toYAML(t, pod), "--dry-run=server"); err != nil {
				t.Fatalf("the catalog's own pod is refused: %v", err)
			}
			containers := get(pod, "spec", "containers").([]any)
			sc := containers[0].(map[string]any)["securityContext"].(map[string]any)
			// Privileged implies privilege escalation; the API server's
			// validation refuses the two disagreeing before admission.
			sc["privileged"] = true
			sc["allowPrivilegeEscalation"] = true
			_, err := c.TryApply(toYAML(t, pod), "--dry-run=server")
			if err == nil || !strings.Contains(err.Error(), `violates PodSecurity "restricted:latest"`) || !strings.Contains(err.Error(), "privileged (container") {
				t.Fatalf("a privileged pod in namespace %s: got %v, want the API server's PodSecurity refusal", ns, err)
			}
			t.Logf("refused: %v", err)
		})
	}

	t.Run("an unknown field", func(t *testing.T) {
		d := copyObject(t, catalog)
		d["spec"].(map[string]any)["replica"] = 1
		_, err := c.TryApply(toYAML(t, d), "--dry-run=server")
		if err == nil || !strings.Contains(err.Error(), ".spec.replica: field not declared in schema") {
			t.Fatalf("got %v, want strict field validation's refusal of spec.replica", err)
		}
		t.Logf("refused: %v", err)
	})

	// The lab uses no operator (k8s/README.md): an object of a custom
	// resource would need its CRD, and so the operator, on every cluster.
	t.Run("a kind the cluster does not serve", func(t *testing.T) {
		_, err := c.TryApply("apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\nmetadata: {name: java, namespace: "+namespaces[0]+"}\nspec: {}\n", "--dry-run=server")
		if err == nil || !strings.Contains(err.Error(), `no matches for kind "Instrumentation"`) {
			t.Fatalf("got %v, want the API server not to know kind Instrumentation", err)
		}
		t.Logf("refused: %v", err)
	})
}

// podFrom makes a Pod of a workload's pod template, in a namespace.
func podFrom(t *testing.T, workload Object, namespace string) Object {
	t.Helper()
	w := copyObject(t, workload)
	tmpl, _ := get(w, "spec", "template").(map[string]any)
	meta, _ := tmpl["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta["name"] = workload.Name() + "-probe"
	meta["namespace"] = namespace
	return Object{"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": tmpl["spec"]}
}

func copyObject(t *testing.T, o Object) Object {
	t.Helper()
	objs, err := Decode([]byte(toYAML(t, o)))
	if err != nil || len(objs) != 1 {
		t.Fatalf("copying %s: %v", o.ID(), err)
	}
	return objs[0]
}

func toYAML(t *testing.T, o Object) string {
	t.Helper()
	data, err := yaml.Marshal(map[string]any(o))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
