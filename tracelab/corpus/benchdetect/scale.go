package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"tracelab/internal/realspans"
	"tracelab/pkg/jaeger"
	"tracelab/pkg/otlp"
)

// scaleSize is one input of the scale runs: how many spans, and the
// --max-memory tracelab runs under ("" for its default).
type scaleSize struct {
	spans     int
	maxMemory string
}

// parseScaleSizes reads -scale-sizes: SPANS[:MAXMEMORY],...
func parseScaleSizes(v string) ([]scaleSize, error) {
	var out []scaleSize
	for _, f := range strings.Split(v, ",") {
		n, mem, _ := strings.Cut(strings.TrimSpace(f), ":")
		spans, err := strconv.Atoi(n)
		if err != nil || spans < 1 {
			return nil, fmt.Errorf("%q: want SPANS[:MAX-MEMORY], e.g. 1000000 or 3000000:768MiB", f)
		}
		out = append(out, scaleSize{spans, mem})
	}
	return out, nil
}

// scale times tracelab on real recorded traces (realspans: the corpus's
// recordings repeated with fresh ids, each trace whole): first beside
// perf-sentinel on a file under its 100 MiB limit, then alone at each
// size, beside the parse floor of the same file (floorEnv: the parser's
// lexer reading every value and building nothing, as a process of its
// own), with the ratio of the two.
func scale(out io.Writer, tlBin, corpusDir string, ps *perfSentinel, sizes []scaleSize, runs int, targetBytes int64) error {
	cases, err := realspans.Load(corpusDir)
	if err != nil {
		return err
	}
	recorded := 0
	for _, c := range cases {
		recorded += c.Spans
	}
	fmt.Fprintf(out, "\nScale: real recorded traces, the %d recorded cases of %s (%d spans) repeated with fresh trace and span ids, each trace whole (internal/realspans)\n",
		len(cases), corpusDir, recorded)
	fmt.Fprintf(out, "  load average before: %s (read the spread by it)\n", loadAverage())
	if err := realBesidePeer(out, tlBin, cases, ps, runs, targetBytes); err != nil {
		return err
	}

	fmt.Fprintf(out, "\n  tracelab alone past perf-sentinel's limit, %d runs each, alternating with the floor, median (min–max):\n", runs)
	fmt.Fprintf(out, "  %-10s %-8s %-9s %-11s %-20s %-20s %-16s %-20s %s\n",
		"spans", "traces", "OTLP MiB", "max-memory", "wall s", "CPU s", "peak RSS MiB", "floor CPU s", "CPU / floor")
	var cpu1 float64
	for i, sz := range sizes {
		path := filepath.Join(ps.dir, fmt.Sprintf("scale-%d.otlp.json", sz.spans))
		fmt.Fprintf(os.Stderr, "==> scale: writing %d real spans to %s\n", sz.spans, path)
		w, err := realspans.WriteFile(path, cases, sz.spans, 1)
		if err != nil {
			return err
		}
		args := []string{"analyze", "--file", path, "--format", "json"}
		mem := sz.maxMemory
		if mem != "" {
			args = append(args, "--max-memory", mem)
		} else {
			mem = "default"
		}
		tl := func() *exec.Cmd { return exec.Command(tlBin, args...) }
		floor := func() *exec.Cmd {
			self, _ := os.Executable()
			cmd := exec.Command(self, path)
			cmd.Env = append(os.Environ(), floorEnv+"=1")
			return cmd
		}
		// One untimed run: it checks that tracelab read every span, and
		// warms the page cache for both alike.
		var report struct{ Spans, Traces int }
		if err := runJSON(tl(), &report); err != nil {
			return fmt.Errorf("tracelab analyze: %v", err)
		}
		if report.Spans != w.Spans {
			return fmt.Errorf("tracelab analyze read %d spans, the file has %d", report.Spans, w.Spans)
		}
		var tlRuns, floorRuns []sample
		for j := 0; j < runs; j++ {
			fmt.Fprintf(os.Stderr, "    run %d of %d\n", j+1, runs)
			f, err := timed(floor())
			if err != nil {
				return fmt.Errorf("the floor: %v", err)
			}
			t, err := timed(tl())
			if err != nil {
				return fmt.Errorf("tracelab analyze: %v", err)
			}
			tlRuns, floorRuns = append(tlRuns, t), append(floorRuns, f)
		}
		os.Remove(path)
		cpu := func(s sample) float64 { return s.cpu }
		ratios := make([]float64, runs)
		for j := range ratios {
			ratios[j] = tlRuns[j].cpu / floorRuns[j].cpu
		}
		fmt.Fprintf(out, "  %-10d %-8d %-9.0f %-11s %-20s %-20s %-16s %-20s %s\n", w.Spans, report.Traces, float64(w.Bytes)/(1<<20), mem,
			spread(tlRuns, func(s sample) float64 { return s.wall }, "%.2f"),
			spread(tlRuns, cpu, "%.2f"),
			spread(tlRuns, func(s sample) float64 { return float64(s.rssKiB) / 1024 }, "%.0f"),
			spread(floorRuns, cpu, "%.2f"),
			spreadOf(ratios, "%.2f"))
		if i == 0 {
			cpu1 = median(values(tlRuns, cpu)) / float64(w.Spans)
		} else {
			fmt.Fprintf(out, "  %-10d CPU per span %.2f× that of the first size's (median over median)\n", w.Spans,
				median(values(tlRuns, cpu))/float64(w.Spans)/cpu1)
		}
	}
	fmt.Fprintln(out, "  the issue's bounds: a million spans in at most 3 CPU s and 400 MiB; 3 million in at most 3.2× the CPU of one million, within --max-memory")
	fmt.Fprintln(out, "  floor: otlp.Tokenize, the parser's lexer skipping every value of the file, nothing built")
	return nil
}

// realBesidePeer times both tools on the same real traces, as many as
// perf-sentinel reads (Jaeger JSON of about targetBytes).
func realBesidePeer(out io.Writer, tlBin string, cases []realspans.Case, ps *perfSentinel, runs int, targetBytes int64) error {
	// Bytes per span of Jaeger JSON, from a sample, to size the file.
	var sample bytes.Buffer
	if _, err := realspans.Write(&sample, cases, 50_000, 1); err != nil {
		return err
	}
	traces, err := otlp.Parse(&sample)
	if err != nil {
		return err
	}
	var cw countingWriter
	if err := jaeger.WriteJSON(&cw, traces); err != nil {
		return err
	}
	spans := int(float64(targetBytes) / (float64(cw) / float64(spanCount(traces))))

	otlpPath := filepath.Join(ps.dir, "real.otlp.json")
	jaegerPath := filepath.Join(ps.dir, "real.jaeger.json")
	w, err := realspans.WriteFile(otlpPath, cases, spans, 1)
	if err != nil {
		return err
	}
	defer os.Remove(otlpPath)
	traces, err = otlp.ReadFile(otlpPath)
	if err != nil {
		return err
	}
	if err := writeFile(jaegerPath, func(w io.Writer) error { return jaeger.WriteJSON(w, traces) }); err != nil {
		return err
	}
	defer os.Remove(jaegerPath)
	if st, err := os.Stat(jaegerPath); err != nil {
		return err
	} else if st.Size() > maxInput {
		return fmt.Errorf("the Jaeger file is %d bytes, over perf-sentinel's limit", st.Size())
	}
	traces = nil

	tl := func() *exec.Cmd { return exec.Command(tlBin, "analyze", "--file", otlpPath, "--format", "json") }
	pc := func() *exec.Cmd { return ps.command(jaegerPath) }
	var report struct{ Spans int }
	if err := runJSON(tl(), &report); err != nil {
		return fmt.Errorf("tracelab analyze: %v", err)
	}
	if report.Spans != w.Spans {
		return fmt.Errorf("tracelab analyze read %d spans, the file has %d", report.Spans, w.Spans)
	}
	var psReport struct{}
	if err := runJSON(pc(), &psReport); err != nil {
		return fmt.Errorf("perf-sentinel analyze: %v", err)
	}
	tlRuns, psRuns, err := runPairs(tl, pc, runs, os.Stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\n  beside perf-sentinel: %d spans in %d traces; Jaeger JSON %.1f MiB for perf-sentinel, OTLP JSON %.1f MiB for tracelab\n",
		w.Spans, w.Traces, fileMiB(jaegerPath), fileMiB(otlpPath))
	printPairs(out, w.Spans, tlRuns, psRuns)
	return nil
}

// floorEnv set in the environment makes this program the parse floor: it
// reads the file named by its argument with otlp.Tokenize and exits.
const floorEnv = "BENCHDETECT_FLOOR"

func init() {
	// The launcher of a floor run (measureEnv) sees floorEnv too, and
	// this init may run before the launcher's (throughput.go's): leave it
	// to that one.
	if os.Getenv(floorEnv) == "" || os.Getenv(measureEnv) != "" {
		return
	}
	f, err := os.Open(os.Args[1])
	if err == nil {
		_, err = otlp.Tokenize(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench-detect: floor: %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}
