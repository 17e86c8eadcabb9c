package repotest

import (
	"net"
	"strconv"
	"testing"
)

// FreePort asks the kernel for a free port on 127.0.0.1 for a process a
// test starts. Another process could take it before that one binds it;
// that shows as the process exiting with "address already in use", which
// kubecluster answers by starting the part again on new ports.
func FreePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}
