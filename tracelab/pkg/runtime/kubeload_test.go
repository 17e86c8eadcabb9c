package runtime

import (
	"testing"

	"tracelab/pkg/load"
	"tracelab/pkg/loadjob"
)

// Each runtime hands out where its load runs: the cluster's Job drives the
// runtime's own context and namespace and reaches the entrypoint by its
// Service; locally the load runs in this process.
func TestLoadDriver(t *testing.T) {
	k := newKube("kind", "kind-tracelab", map[string]string{"CATALOG_PORT": "18080"}, nil, nil)
	j, ok := k.LoadDriver().(*loadjob.Job)
	if !ok || j.Context != "kind-tracelab" || j.Namespace != Namespace {
		t.Fatalf("kind's load driver %#v; want a loadjob.Job in context kind-tracelab, namespace %s", k.LoadDriver(), Namespace)
	}
	if target, err := j.Target("catalog"); err != nil || target != "http://catalog:18080" {
		t.Errorf("Target(catalog) = %q, %v; want the Service at its local port", target, err)
	}
	if _, ok := (&Local{}).LoadDriver().(load.Local); !ok {
		t.Error("the local runtime's load does not run in this process")
	}
}
