package cli

import (
	"runtime"
	"strings"
	"testing"
)

// --max-memory takes a size or -1, and refuses one the analysis cannot
// start in.
func TestParseMaxMemory(t *testing.T) {
	for in, want := range map[string]int64{"-1": 0, "320MiB": 320 << 20, "1GiB": 1 << 30, "20MB": 20e6} {
		if got, err := parseMaxMemory(in); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "lots", "1MiB", "0"} {
		if _, err := parseMaxMemory(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

// checkMemory fails once the heap live at the last collection passes
// three quarters of the limit, with a line that names the flag.
func TestCheckMemoryNamesTheFlag(t *testing.T) {
	live := make([]byte, 64<<20)
	for i := range live {
		live[i] = 1 // touched, so that it is surely counted
	}
	runtime.GC()
	err := checkMemory(64 << 20)
	if err == nil || !strings.Contains(err.Error(), "--max-memory 64 MiB") {
		t.Errorf("64 MiB live under a 64 MiB limit: %v", err)
	}
	if err := checkMemory(1 << 30); err != nil {
		t.Errorf("64 MiB live under 1 GiB: %v", err)
	}
	if err := checkMemory(0); err != nil {
		t.Errorf("no limit: %v", err)
	}
	runtime.KeepAlive(live)
}
