package lab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnvFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.env")
	vars := map[string]string{"B": "2", "A": "1=one"}
	os.WriteFile(path, []byte(EnvFileContent("test", vars)), 0o644)
	got, err := ReadEnvFile(path)
	if err != nil || len(got) != 2 || got["A"] != "1=one" || got["B"] != "2" {
		t.Fatalf("got %v, %v", got, err)
	}
	if EnvFileContent("test", vars) != EnvFileContent("test", map[string]string{"A": "1=one", "B": "2"}) {
		t.Error("equal settings must render equal files, or every run restarts every service")
	}
}

func TestParseEnvNamesTheLine(t *testing.T) {
	_, err := ParseEnv([]byte("# c\nA=1\nnot a pair\n"), PortsFile)
	if err == nil || err.Error() != PortsFile+":3: expected KEY=VALUE" {
		t.Fatalf("got %v", err)
	}
}

// Without .state/tools.env, Tools says to run make tools; Open does not fail.
func TestToolsAbsent(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "infra", "local"), 0o755)
	os.WriteFile(filepath.Join(root, PortsFile), []byte("JAEGER_QUERY_PORT=16686\n"), 0o644)
	c, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if c.Ports["JAEGER_QUERY_PORT"] != "16686" || c.State != filepath.Join(root, ".state") {
		t.Errorf("got %+v", c)
	}
	if _, err := c.Tools(); err != ErrNoTools {
		t.Errorf("got %v, want ErrNoTools", err)
	}
	if _, err := Open(t.TempDir()); err == nil || !strings.Contains(err.Error(), "ports.env") {
		t.Errorf("an empty folder: got %v", err)
	}
}
