// Package repotest finds the lab's checkout for tests, wherever `go test`
// runs them from.
package repotest

import (
	"path/filepath"
	"runtime"
	"testing"
)

// Root is the checkout's top folder: the one holding tracelab/.
func Root(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("repotest: cannot locate its own source")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}
