package cli

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"tracelab/internal/realspans"
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

// checkMemory fails once what became live since the analysis started
// passes three quarters of the limit, with a line that names the flag.
func TestCheckMemoryNamesTheFlag(t *testing.T) {
	runtime.GC()
	start := liveHeap()
	live := make([]byte, 64<<20)
	for i := range live {
		live[i] = 1 // touched, so that it is surely counted
	}
	runtime.GC()
	err := checkMemory(64<<20, start)
	if err == nil || !strings.Contains(err.Error(), "--max-memory 64 MiB") {
		t.Errorf("64 MiB live under a 64 MiB limit: %v", err)
	}
	if err := checkMemory(1<<30, start); err != nil {
		t.Errorf("64 MiB live under 1 GiB: %v", err)
	}
	if err := checkMemory(0, start); err != nil {
		t.Errorf("no limit: %v", err)
	}
	if err := checkMemory(64<<20, liveHeap()); err != nil {
		t.Errorf("what was live at the start does not count: %v", err)
	}
	runtime.KeepAlive(live)
}

// A process given too little for what the input needs kept stops with
// exit 2 and one line naming the flag, within a memory limit (peak RSS
// cannot be read here: a child started from this process inherits its
// peak, see benchdetect's timed).
func TestMaxMemoryRefusesPastTheLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads 200,000 spans")
	}
	cases, err := realspans.Load(filepath.Join("..", "testdata", "corpus"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "spans.json")
	if _, err := realspans.WriteFile(path, cases, 200_000, 1); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := underMemoryLimit(t, limitMiB, nil, "analyze", "--file", path, "--format", "json", "--max-memory", "16MiB")
	if code != exitUsage || !strings.Contains(stderr, "--max-memory 16 MiB") {
		t.Fatalf("exit %d, stderr %q; want 2 naming --max-memory", code, stderr)
	}
	checkOneLine(t, stderr)
	// Given enough, the same file is analyzed in the same limit.
	if code, _, stderr := underMemoryLimit(t, limitMiB, nil, "analyze", "--file", path, "--format", "json", "--max-memory", "64MiB"); code != exitOK {
		t.Errorf("with --max-memory 64MiB: exit %d, stderr %.300q", code, stderr)
	}
}
