// Package manifests is the test of the Kubernetes side of the lab (make
// test-k8s); tracelab's binary does not use it. It renders the kustomize
// overlays of k8s/, checks what no API server checks (policy.go: the lab's
// own rules), cross-checks the manifests against the hand-written rest of
// the lab (crosscheck.go), and deploys them on a throwaway control plane
// (deploy.go, internal/kubecluster), whose API server is the judge of
// schemas, strict fields and the restricted Pod Security Standard. No
// container engine, and no image, is needed.
package manifests

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// Overlays are the kustomize overlays under k8s/overlays, one per runtime.
var Overlays = []string{"kind", "eks"}

// Object is one rendered Kubernetes object, as decoded YAML.
type Object map[string]any

func (o Object) Kind() string { return str(o["kind"]) }
func (o Object) Name() string { return str(get(o, "metadata", "name")) }

// ID names an object the way kubectl does: kind/name.
func (o Object) ID() string { return strings.ToLower(o.Kind()) + "/" + o.Name() }

// Render runs kustomize on an overlay of the lab checked out at root. The
// load restrictor is off because the base reads the local runtime's files
// (infra/local, loadtests, dashboards) rather than copies of them.
func Render(kustomize, root, overlay string) ([]byte, []Object, error) {
	dir := filepath.Join(root, "k8s", "overlays", overlay)
	cmd := exec.Command(kustomize, "build", "--load-restrictor", "LoadRestrictionsNone", dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("kustomize build k8s/overlays/%s: %v: %s", overlay, err, strings.TrimSpace(stderr.String()))
	}
	objs, err := Decode(out)
	return out, objs, err
}

// Decode splits a multi-document YAML stream into objects.
func Decode(data []byte) ([]Object, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []Object
	for {
		// Into a plain map: decoded into Object, nested maps would be
		// Objects too, and every type switch would need both.
		var o map[string]any
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("rendered YAML: %v", err)
		}
		if o != nil {
			out = append(out, Object(o))
		}
	}
}

// Workloads are the kinds that run pods, with the path to their pod spec.
var workloadPodSpec = map[string][]string{
	"Deployment":  {"spec", "template", "spec"},
	"StatefulSet": {"spec", "template", "spec"},
	"DaemonSet":   {"spec", "template", "spec"},
	"ReplicaSet":  {"spec", "template", "spec"},
	"Job":         {"spec", "template", "spec"},
	"CronJob":     {"spec", "jobTemplate", "spec", "template", "spec"},
	"Pod":         {"spec"},
}

// PodSpec returns the pod spec of a workload, or nil for other objects.
func (o Object) PodSpec() map[string]any {
	path, ok := workloadPodSpec[o.Kind()]
	if !ok {
		return nil
	}
	m, _ := get(o, path...).(map[string]any)
	return m
}

// Containers returns the containers and init containers of a pod spec.
func Containers(spec map[string]any) []map[string]any {
	var out []map[string]any
	for _, key := range []string{"initContainers", "containers"} {
		for _, c := range list(spec[key]) {
			if m, ok := c.(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

// Env returns a container's literal environment (valueFrom entries map to "").
func Env(c map[string]any) map[string]string {
	out := map[string]string{}
	for _, e := range list(c["env"]) {
		m, _ := e.(map[string]any)
		out[str(m["name"])] = str(m["value"])
	}
	return out
}

// Find returns the object of a kind and name.
func Find(objs []Object, kind, name string) Object {
	for _, o := range objs {
		if o.Kind() == kind && o.Name() == name {
			return o
		}
	}
	return nil
}

// FindGenerated returns a ConfigMap or Secret made by a kustomize generator,
// whose rendered name carries a content hash suffix.
func FindGenerated(objs []Object, kind, name string) Object {
	for _, o := range objs {
		if o.Kind() != kind {
			continue
		}
		n := o.Name()
		if n == name || (strings.HasPrefix(n, name+"-") && len(n) == len(name)+11) {
			return o
		}
	}
	return nil
}

func get(m any, path ...string) any {
	for _, p := range path {
		if o, ok := m.(Object); ok {
			m = map[string]any(o)
		}
		mm, ok := m.(map[string]any)
		if !ok {
			return nil
		}
		m = mm[p]
	}
	return m
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func str(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	default:
		return fmt.Sprint(x)
	}
}
