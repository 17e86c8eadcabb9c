package cli

import (
	"runtime/debug"
	"testing"
)

// analyze collects at batchGCPercent unless GOGC is set, and puts the
// previous target back when done.
func TestBatchGCTargetUnlessGOGCIsSet(t *testing.T) {
	orig := debug.SetGCPercent(100)
	defer debug.SetGCPercent(orig)

	noEnv := func(string) (string, bool) { return "", false }
	restore := batchGC(noEnv)
	if got := debug.SetGCPercent(batchGCPercent); got != batchGCPercent {
		t.Errorf("without GOGC the GC target is %d, want %d", got, batchGCPercent)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("after the run the GC target is %d, want the previous 100", got)
	}

	withEnv := func(k string) (string, bool) { return "50", k == "GOGC" }
	restore = batchGC(withEnv)
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set the GC target became %d; the user's choice must stand", got)
	}
	restore()
}
