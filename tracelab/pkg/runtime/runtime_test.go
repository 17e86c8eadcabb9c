package runtime

import (
	"net"
	"strconv"
	"strings"
	"testing"

	"tracelab/pkg/lab"
)

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
	if _, err := New("docker", &lab.Checkout{Root: t.TempDir()}, nil); err == nil || !strings.Contains(err.Error(), "known runtimes: local") {
		t.Fatalf("got %v", err)
	}
}
