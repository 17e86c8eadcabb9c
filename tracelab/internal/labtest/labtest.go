// Package labtest opens a checkout for a test, failing the test when it
// cannot: the lab's own (repotest.Root), a copy of it, or a folder a test
// wrote. It is apart from repotest because pkg/components' tests use
// repotest, and pkg/lab imports pkg/components.
package labtest

import (
	"testing"

	"tracelab/internal/repotest"
	"tracelab/pkg/lab"
)

// Open opens the checkout at root.
func Open(t testing.TB, root string) *lab.Checkout {
	t.Helper()
	c, err := lab.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Lab opens the lab's own checkout.
func Lab(t testing.TB) *lab.Checkout { return Open(t, repotest.Root(t)) }

// Tools are the lab's .state/tools.env, or nil when `make tools` has not run.
func Tools(t testing.TB) map[string]string {
	tools, _ := Lab(t).Tools()
	return tools
}
