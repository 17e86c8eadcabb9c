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

// targetJaegerBytes is the size the throughput file aims at: under
// perf-sentinel's 100 MiB limit with room for the estimate's error.
const targetJaegerBytes = 90 << 20

// throughput times both tools, as whole processes, on the same traces:
// tracelab reads them as OTLP JSON, perf-sentinel as Jaeger JSON (it reads
// no OTLP JSON). The runs alternate so that a change in the machine's load
// hits both alike.
func throughput(out io.Writer, tlBin string, ps *perfSentinel, runs int) error {
	traces, jaegerPath, otlpPath, err := writeThroughputFiles(ps.dir)
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
	var tlTimes, psTimes []float64
	var tlRSS, psRSS int64
	for i := 0; i < runs; i++ {
		fmt.Fprintf(os.Stderr, "    run %d of %d\n", i+1, runs)
		d, rss, err := timed(tl())
		if err != nil {
			return fmt.Errorf("tracelab analyze: %v", err)
		}
		tlTimes, tlRSS = append(tlTimes, d), max(tlRSS, rss)
		d, rss, err = timed(pc())
		if err != nil {
			return fmt.Errorf("perf-sentinel analyze: %v", err)
		}
		psTimes, psRSS = append(psTimes, d), max(psRSS, rss)
	}
	ratios := make([]float64, runs) // tracelab's spans/s over perf-sentinel's, run by run
	for i := range ratios {
		ratios[i] = psTimes[i] / tlTimes[i]
	}

	fmt.Fprintf(out, "\nThroughput: %d spans in %d traces (tracegen.Generate, seed 1), the same traces in both files\n", spans, tlReport.Traces)
	fmt.Fprintf(out, "  Jaeger JSON %.1f MiB for perf-sentinel (its limit: 100 MiB), OTLP JSON %.1f MiB for tracelab\n", jSize, oSize)
	fmt.Fprintf(out, "  perf-sentinel kept %d of the spans as I/O events (database and outgoing HTTP calls) in %d traces\n",
		psReport.Analysis.Events, psReport.Analysis.Traces)
	fmt.Fprintf(out, "  %d alternating runs of each whole process, wall time (load average before: %s):\n", runs, loadBefore)
	w := func(name, cmd string, times []float64, rss int64) {
		fmt.Fprintf(out, "  %-13s %-58s median %6.2f s (%.2f–%.2f)  %8.0f spans/s  peak RSS %4d MiB\n",
			name, cmd, median(times), slices.Min(times), slices.Max(times), float64(spans)/median(times), rss>>10)
	}
	w(tracelabName, "tracelab analyze --file F.otlp.json --format json", tlTimes, tlRSS)
	w(psName, "perf-sentinel analyze --input F.jaeger.json --format json", psTimes, psRSS)
	fmt.Fprintf(out, "  tracelab / perf-sentinel spans/s: %.2f× (median times), %.2f–%.2f× over the %d pairs of runs\n",
		median(psTimes)/median(tlTimes), slices.Min(ratios), slices.Max(ratios), runs)
	return nil
}

// writeThroughputFiles generates traces whose Jaeger JSON is about
// targetJaegerBytes, and writes them as Jaeger JSON and as OTLP JSON.
func writeThroughputFiles(dir string) ([]*trace.Trace, string, string, error) {
	// Measure the bytes per span of a sample, then generate to size.
	sample := trace.Group(tracegen.Generate(20_000, 1))
	var cw countingWriter
	if err := jaeger.WriteJSON(&cw, sample); err != nil {
		return nil, "", "", err
	}
	perSpan := float64(cw) / float64(spanCount(sample))
	traces := trace.Group(tracegen.Generate(int(targetJaegerBytes/perSpan), 1))

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

// timed runs cmd with its output discarded and returns its wall time in
// seconds and its peak resident memory in KiB.
func timed(cmd *exec.Cmd) (float64, int64, error) {
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return 0, 0, err
	}
	defer devnull.Close()
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = devnull, &stderr
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, 0, fmt.Errorf("%v: %s", err, firstLine(stderr.String()))
	}
	d := time.Since(t0).Seconds()
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss // KiB on Linux
	}
	return d, rss, nil
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
