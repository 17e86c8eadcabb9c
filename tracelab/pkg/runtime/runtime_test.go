package runtime

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestEnvFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.env")
	vars := map[string]string{"B": "2", "A": "1=one"}
	os.WriteFile(path, []byte(envFileContent(vars)), 0o644)
	got, err := ReadEnvFile(path)
	if err != nil || len(got) != 2 || got["A"] != "1=one" || got["B"] != "2" {
		t.Fatalf("got %v, %v", got, err)
	}
	if envFileContent(vars) != envFileContent(map[string]string{"A": "1=one", "B": "2"}) {
		t.Error("equal settings must render equal files, or every run restarts every service")
	}
}

func TestPortTakenIsNamed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	l := &Local{ports: map[string]string{"SOME_PORT": strconv.Itoa(port)}}
	err = l.checkPortsFree()
	if err == nil || !strings.Contains(err.Error(), "port "+strconv.Itoa(port)+" (SOME_PORT") {
		t.Fatalf("got %v", err)
	}
}

func TestUnknownRuntime(t *testing.T) {
	if _, err := New("docker", t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), "known runtimes: local") {
		t.Fatalf("got %v", err)
	}
}
