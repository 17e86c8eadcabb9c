package lab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TRACELAB_ROOT must name a checkout: one line saying so, not a failure to
// open a file deep in the first command that reads it.
func TestFindRefusesARootWithoutPorts(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TRACELAB_ROOT", dir)
	if _, err := Find(); err == nil || !strings.Contains(err.Error(), "is not the lab's checkout") {
		t.Fatalf("Find() = %v, want it to say the folder is not the checkout", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "infra", "local"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, PortsFile), []byte("A_PORT=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Find(); err != nil || got != dir {
		t.Fatalf("Find() = %q, %v; want %q", got, err, dir)
	}
}
