// Package corpustest reads the labelled corpus (testdata/corpus) for tests
// of packages the corpus package itself depends on, which cannot import it.
package corpustest

import (
	"os"
	"path/filepath"
	"testing"

	"tracelab/internal/repotest"
	"tracelab/pkg/otlp"
	"tracelab/pkg/trace"
)

// Traces reads the traces of the corpus case name.
func Traces(t testing.TB, name string) []*trace.Trace {
	t.Helper()
	path := filepath.Join(repotest.Root(t), "tracelab", "testdata", "corpus", name, "traces.json")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	traces, err := otlp.ParseReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return traces
}
