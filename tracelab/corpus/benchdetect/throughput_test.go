package main

import (
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStandIn is not a test: it is the stand-in process the throughput
// tests time instead of the two analyzers. BENCHDETECT_STAND_IN says what
// it does: "busy" spends 0.3 s of CPU and holds 96 MiB; "idle" sleeps
// 0.3 s and does nothing else.
func TestStandIn(t *testing.T) {
	switch os.Getenv("BENCHDETECT_STAND_IN") {
	case "":
		t.Skip("only run as a stand-in process")
	case "busy":
		held := make([]byte, 96<<20)
		for i := range held {
			held[i] = byte(i)
		}
		for cpuSeconds() < 0.3 {
			for i := 0; i < len(held); i += 4096 {
				held[i]++
			}
		}
	case "idle":
		time.Sleep(300 * time.Millisecond)
	}
	os.Exit(0)
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func standIn(mode string) func() *exec.Cmd {
	return func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStandIn$")
		cmd.Env = append(os.Environ(), "BENCHDETECT_STAND_IN="+mode)
		return cmd
	}
}

// Each run is measured as a whole process: wall time, CPU time and peak
// memory, each tool's own, whichever went first in the pair.
// This process's own peak memory is not the tools': it has just generated
// the traces, so here it first holds 256 MiB, and the idle stand-in must
// still measure small.
func TestRunPairsMeasuresWallCPUAndMemory(t *testing.T) {
	ballast := make([]byte, 256<<20)
	for i := 0; i < len(ballast); i += 4096 {
		ballast[i] = 1
	}
	tl, ps, err := runPairs(standIn("busy"), standIn("idle"), 3, io.Discard)
	runtime.KeepAlive(ballast)
	if err != nil {
		t.Fatal(err)
	}
	if len(tl) != 3 || len(ps) != 3 {
		t.Fatalf("%d and %d runs, want 3 each", len(tl), len(ps))
	}
	for i := range tl {
		if tl[i].cpu < 0.29 || tl[i].rssKiB < 96<<10 {
			t.Errorf("run %d: the busy stand-in measured %.2f CPU s and %d KiB, want at least 0.3 s and 96 MiB", i, tl[i].cpu, tl[i].rssKiB)
		}
		if ps[i].wall < 0.3 || ps[i].cpu > 0.25 || ps[i].rssKiB > 64<<10 {
			t.Errorf("run %d: the idle stand-in measured %.2f wall s, %.2f CPU s, %d KiB; want at least 0.3 s of wall, little CPU and memory", i, ps[i].wall, ps[i].cpu, ps[i].rssKiB)
		}
	}
}

func TestRunPairsNamesTheToolThatFailed(t *testing.T) {
	fails := func() *exec.Cmd { return exec.Command("sh", "-c", "echo broken input >&2; exit 2") }
	ok := func() *exec.Cmd { return exec.Command("true") }
	if _, _, err := runPairs(ok, fails, 2, io.Discard); err == nil || !strings.Contains(err.Error(), "perf-sentinel analyze") || !strings.Contains(err.Error(), "broken input") {
		t.Errorf("err = %v, want perf-sentinel's failure and its message", err)
	}
	if _, _, err := runPairs(fails, ok, 2, io.Discard); err == nil || !strings.Contains(err.Error(), "tracelab analyze") {
		t.Errorf("err = %v, want tracelab's failure", err)
	}
}

// The report gives median and range for each figure, and tracelab's share
// of perf-sentinel's per pair (the pairs' ratios, not the medians' ratio).
func TestPrintPairsReportsSpread(t *testing.T) {
	tl := []sample{{1, 2, 100 << 10}, {3, 4, 300 << 10}, {2, 3, 200 << 10}}
	ps := []sample{{2, 4, 400 << 10}, {4, 4, 400 << 10}, {8, 6, 800 << 10}}
	var b strings.Builder
	printPairs(&b, 1000, tl, ps)
	out := b.String()
	for _, want := range []string{
		"3 alternating runs",
		"2.00 (1.00–3.00)", // tracelab wall
		"3.00 (2.00–4.00)", // tracelab CPU
		"200 (100–300)",    // tracelab peak RSS MiB
		"4.00 (2.00–8.00)", // perf-sentinel wall
		"wall 0.50 (0.25–0.75)",
		"CPU 0.50 (0.50–1.00)",
		"peak RSS 0.25 (0.25–0.75)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
