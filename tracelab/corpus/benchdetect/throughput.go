package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"tracelab/internal/tracegen"
	"tracelab/pkg/jaeger"
	"tracelab/pkg/otlp"
	"tracelab/pkg/trace"
)

// throughput times both tools, as whole processes, on the same traces:
// tracelab reads them as OTLP JSON, perf-sentinel as Jaeger JSON (it reads
// no OTLP JSON). The Jaeger file aims at targetBytes: 90 MiB keeps it under
// perf-sentinel's 100 MiB limit with room for the size estimate's error.
func throughput(out io.Writer, tlBin string, ps *perfSentinel, runs int, targetBytes int64) error {
	traces, jaegerPath, otlpPath, err := writeThroughputFiles(ps.dir, targetBytes)
	if err != nil {
		return err
	}
	spans := 0
	for _, t := range traces {
		spans += len(t.Spans)
	}
	traces = nil
	jSize, oSize := fileMiB(jaegerPath), fileMiB(otlpPath)

	tl := func() *exec.Cmd { return exec.Command(tlBin, "analyze", "--file", otlpPath, "--format", "json") }
	pc := func() *exec.Cmd { return ps.command(jaegerPath) }

	// One untimed run each: it checks that both read the whole file, and
	// warms the page cache for both alike.
	var tlReport struct{ Spans, Traces int }
	var psReport struct {
		Analysis struct {
			Events int `json:"events_processed"`
			Traces int `json:"traces_analyzed"`
		} `json:"analysis"`
	}
	if err := runJSON(tl(), &tlReport); err != nil {
		return fmt.Errorf("tracelab analyze: %v", err)
	}
	if tlReport.Spans != spans {
		return fmt.Errorf("tracelab analyze read %d spans, the file has %d", tlReport.Spans, spans)
	}
	if err := runJSON(pc(), &psReport); err != nil {
		return fmt.Errorf("perf-sentinel analyze: %v", err)
	}

	loadBefore := loadAverage()
	tlRuns, psRuns, err := runPairs(tl, pc, runs, os.Stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nThroughput: %d spans in %d traces (tracegen.Generate, seed 1), the same traces in both files\n", spans, tlReport.Traces)
	fmt.Fprintf(out, "  Jaeger JSON %.1f MiB for perf-sentinel (its limit: 100 MiB), OTLP JSON %.1f MiB for tracelab\n", jSize, oSize)
	fmt.Fprintf(out, "  perf-sentinel kept %d of the spans as I/O events (database and outgoing HTTP calls) in %d traces\n",
		psReport.Analysis.Events, psReport.Analysis.Traces)
	fmt.Fprintf(out, "  tracelab analyze --file F.otlp.json --format json; perf-sentinel analyze --input F.jaeger.json --format json\n")
	fmt.Fprintf(out, "  load average before: %s (read the spread by it)\n", loadBefore)
	printPairs(out, spans, tlRuns, psRuns)
	// The launcher's own memory is the floor of every peak measured.
	if floor, err := timed(exec.Command("true")); err == nil {
		fmt.Fprintf(out, "  peak RSS measured the same way for a process that does nothing (true): %d MiB\n", floor.rssKiB>>10)
	}
	// A million spans and more: make bench-scale (scale.go), on real
	// recorded traces rather than generated ones.
	return nil
}

// sample is one run of a whole process.
type sample struct {
	wall, cpu float64 // seconds; cpu is user + system time
	rssKiB    int64   // peak resident memory
}

// runPairs runs the two tools runs times each, alternating, so that a
// change in the machine's load hits both alike; which of the two goes
// first alternates too, so neither always finds the page cache and CPU
// frequency the other left.
func runPairs(tl, ps func() *exec.Cmd, runs int, progress io.Writer) (tlRuns, psRuns []sample, err error) {
	for i := 0; i < runs; i++ {
		fmt.Fprintf(progress, "    run %d of %d\n", i+1, runs)
		first, second := tl, ps
		if i%2 == 1 {
			first, second = ps, tl
		}
		a, err := timed(first())
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %v", toolOf(i%2 == 1), err)
		}
		b, err := timed(second())
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %v", toolOf(i%2 == 0), err)
		}
		if i%2 == 1 {
			a, b = b, a
		}
		tlRuns, psRuns = append(tlRuns, a), append(psRuns, b)
	}
	return tlRuns, psRuns, nil
}

func toolOf(ps bool) string {
	if ps {
		return psName + " analyze"
	}
	return tracelabName + " analyze"
}

// printPairs reports each tool's wall time, CPU time and peak memory as
// the median and the range over the runs, then tracelab's share of
// perf-sentinel's (below 1: tracelab needs less), pair by pair.
func printPairs(out io.Writer, spans int, tlRuns, psRuns []sample) {
	n := len(tlRuns)
	wall := func(s sample) float64 { return s.wall }
	cpu := func(s sample) float64 { return s.cpu }
	rss := func(s sample) float64 { return float64(s.rssKiB) / 1024 }
	fmt.Fprintf(out, "  %d alternating runs of each whole process, median (min–max):\n", n)
	fmt.Fprintf(out, "  %-13s %-26s %-26s %-26s %s\n", "", "wall s", "CPU s", "peak RSS MiB", "spans/s (median wall)")
	row := func(name string, runs []sample) {
		fmt.Fprintf(out, "  %-13s %-26s %-26s %-26s %.0f\n", name,
			spread(runs, wall, "%.2f"), spread(runs, cpu, "%.2f"), spread(runs, rss, "%.0f"), float64(spans)/median(values(runs, wall)))
	}
	row(tracelabName, tlRuns)
	row(psName, psRuns)
	// tracelab's figure over perf-sentinel's, pair by pair
	ratio := func(f func(sample) float64) string {
		r := make([]float64, n)
		for i := range r {
			r[i] = f(tlRuns[i]) / f(psRuns[i])
		}
		return spreadOf(r, "%.2f")
	}
	fmt.Fprintf(out, "  tracelab / perf-sentinel, pair by pair: wall %s, CPU %s, peak RSS %s (the issue's target: at most 0.50 each)\n",
		ratio(wall), ratio(cpu), ratio(rss))
}

func values(runs []sample, f func(sample) float64) []float64 {
	out := make([]float64, len(runs))
	for i, r := range runs {
		out[i] = f(r)
	}
	return out
}

// spread formats the median and range of f over runs.
func spread(runs []sample, f func(sample) float64, format string) string {
	return spreadOf(values(runs, f), format)
}

func spreadOf(xs []float64, format string) string {
	return fmt.Sprintf(format+" ("+format+"–"+format+")", median(xs), slices.Min(xs), slices.Max(xs))
}

// writeThroughputFiles generates traces whose Jaeger JSON is about
// targetBytes, and writes them as Jaeger JSON and as OTLP JSON.
func writeThroughputFiles(dir string, targetBytes int64) ([]*trace.Trace, string, string, error) {
	// Measure the bytes per span of a sample, then generate to size.
	sample := trace.Group(tracegen.Generate(20_000, 1))
	var cw countingWriter
	if err := jaeger.WriteJSON(&cw, sample); err != nil {
		return nil, "", "", err
	}
	perSpan := float64(cw) / float64(spanCount(sample))
	traces := trace.Group(tracegen.Generate(int(float64(targetBytes)/perSpan), 1))

	jaegerPath := filepath.Join(dir, "throughput.jaeger.json")
	otlpPath := filepath.Join(dir, "throughput.otlp.json")
	if err := writeFile(jaegerPath, func(w io.Writer) error { return jaeger.WriteJSON(w, traces) }); err != nil {
		return nil, "", "", err
	}
	if st, err := os.Stat(jaegerPath); err != nil {
		return nil, "", "", err
	} else if st.Size() > maxInput {
		return nil, "", "", fmt.Errorf("the Jaeger file is %d bytes, over perf-sentinel's limit", st.Size())
	}
	if err := writeFile(otlpPath, func(w io.Writer) error { return otlp.Write(w, traces) }); err != nil {
		return nil, "", "", err
	}
	return traces, jaegerPath, otlpPath, nil
}

type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

func spanCount(traces []*trace.Trace) int {
	n := 0
	for _, t := range traces {
		n += len(t.Spans)
	}
	return n
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func fileMiB(path string) float64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return float64(st.Size()) / (1 << 20)
}

// runJSON runs cmd and decodes its standard output.
func runJSON(cmd *exec.Cmd, v any) error {
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%v: %s", err, firstLine(stderr.String()))
	}
	return json.Unmarshal(stdout.Bytes(), v)
}

// timed runs cmd with its output discarded and measures it as a whole
// process: wall time, user plus system CPU time, and peak resident memory
// (so a tool's worker threads count, and its runtime's memory too).
//
// It does not run cmd itself but through a fresh copy of this program
// (measureEnv): Go starts a child with vfork, and Linux then counts the
// parent's own peak memory as the child's peak (exec carries the old
// address space's high-water mark into ru_maxrss). This program has just
// generated the traces, so every tool would have measured at least that;
// the fresh copy's peak, a few MiB, is the floor instead.
func timed(cmd *exec.Cmd) (sample, error) {
	self, err := os.Executable()
	if err != nil {
		return sample{}, err
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return sample{}, err
	}
	defer devnull.Close()
	resultR, resultW, err := os.Pipe()
	if err != nil {
		return sample{}, err
	}
	defer resultR.Close()
	launcher := exec.Command(self, append([]string{cmd.Path}, cmd.Args[1:]...)...)
	launcher.Dir = cmd.Dir
	launcher.Env = append(cmd.Environ(), measureEnv+"=1")
	var stderr bytes.Buffer
	launcher.Stdout, launcher.Stderr = devnull, &stderr
	launcher.ExtraFiles = []*os.File{resultW}
	if err := launcher.Start(); err != nil {
		resultW.Close()
		return sample{}, err
	}
	resultW.Close()
	result, _ := io.ReadAll(resultR)
	if err := launcher.Wait(); err != nil {
		return sample{}, fmt.Errorf("%v: %s", err, firstLine(stderr.String()))
	}
	var s struct {
		Wall, CPU float64
		RSSKiB    int64
	}
	if err := json.Unmarshal(result, &s); err != nil {
		return sample{}, fmt.Errorf("no measurement from the launcher: %v", err)
	}
	return sample{wall: s.Wall, cpu: s.CPU, rssKiB: s.RSSKiB}, nil
}

// measureEnv set in the environment makes this program the launcher of
// timed: it runs its arguments as a command, passing its output through,
// writes the command's wall time, CPU time and peak memory as JSON to file
// descriptor 3, and exits with the command's status.
const measureEnv = "BENCHDETECT_MEASURE"

func init() {
	if os.Getenv(measureEnv) == "" {
		return
	}
	os.Unsetenv(measureEnv)
	os.Exit(measure(os.Args[1:]))
}

func measure(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "bench-detect: the launcher needs a command")
		return 2
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	t0 := time.Now()
	err := cmd.Run()
	wall := time.Since(t0).Seconds()
	if cmd.ProcessState == nil {
		fmt.Fprintf(os.Stderr, "bench-detect: %v\n", err)
		return 2
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss // KiB on Linux
	}
	out := os.NewFile(3, "result")
	fmt.Fprintf(out, `{"wall":%g,"cpu":%g,"rsskib":%d}`, wall,
		(cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds(), rss)
	out.Close()
	return cmd.ProcessState.ExitCode()
}

// loadAverage is the machine's 1-minute load average, to read the times by.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "unknown"
	}
	return f[0]
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
