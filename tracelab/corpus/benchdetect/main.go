// Command benchdetect compares tracelab's detectors with perf-sentinel's on
// the labelled corpus (testdata/corpus), in one run (`make bench-detect`):
//
//   - per detector class, true and false positives, false negatives,
//     precision and recall of both tools, over every case and over the
//     held-out cases (labels.yaml `tuning: held-out`) alone;
//   - per application stack, and per language runtime and class (JVM,
//     Node.js, Python, Go), the same, all cases and held-out cases apart;
//   - per case, what each tool missed and what it reported falsely;
//   - the throughput of both tools, as whole processes, on the same
//     traces under perf-sentinel's 100 MiB input limit: wall time, CPU
//     time and peak memory, median and range over alternating runs, and
//     tracelab's share of perf-sentinel's pair by pair. -throughput-only
//     (make bench) measures only this;
//   - with -scale-only (make bench-scale) instead: the same comparison on
//     real recorded traces, then tracelab alone on 1 and 3 million of
//     them beside the parse floor of the same file (scale).
//
// tracelab's detectors run in process; perf-sentinel runs as the binary
// PERF_SENTINEL_BIN (make tools-bench), fed the traces as Jaeger JSON.
// Both are scored by corpus.Score. testdata/corpus/README.md says how
// perf-sentinel's findings are mapped and matched.
package main

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"tracelab/corpus"
	"tracelab/pkg/detect"
)

const (
	tracelabName = "tracelab"
	psName       = "perf-sentinel"
)

func main() { os.Exit(run()) }

func fail(code int, format string, a ...any) int {
	fmt.Fprintf(os.Stderr, "bench-detect: "+format+"\n", a...)
	return code
}

func run() int {
	dir := flag.String("corpus", "testdata/corpus", "the labelled corpus")
	psBin := flag.String("perf-sentinel", os.Getenv("PERF_SENTINEL_BIN"), "perf-sentinel binary (default $PERF_SENTINEL_BIN)")
	tlBin := flag.String("tracelab", os.Getenv("TRACELAB_BIN"), "tracelab binary for the throughput runs (default $TRACELAB_BIN)")
	runs := flag.Int("runs", 5, "timed runs of each tool for the throughput")
	throughputOnly := flag.Bool("throughput-only", false, "skip the corpus scores: only time both tools on the same traces (make bench)")
	throughputMiB := flag.Int64("throughput-mib", 90, "size of the Jaeger JSON file the throughput runs read, in MiB (at most perf-sentinel's 100)")
	scaleOnly := flag.Bool("scale-only", false, "only the scale runs: real recorded traces beside perf-sentinel, then tracelab alone at -scale-sizes beside the parse floor (make bench-scale)")
	scaleSizes := flag.String("scale-sizes", "1000000,3000000:768MiB", "the scale runs' inputs: SPANS[:MAX-MEMORY],... (tracelab analyze --max-memory; its default when not given)")
	flag.Parse()

	if st, err := os.Stat(*psBin); *psBin == "" || err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return fail(3, "perf-sentinel is not installed (PERF_SENTINEL_BIN=%q); run make tools-bench", *psBin)
	}
	if st, err := os.Stat(*tlBin); *tlBin == "" || err != nil || st.IsDir() {
		return fail(3, "no tracelab binary (TRACELAB_BIN=%q); run make bench-detect, which builds it", *tlBin)
	}
	if *throughputMiB <= 0 || *throughputMiB<<20 > maxInput {
		return fail(2, "-throughput-mib %d: give a size from 1 to %d", *throughputMiB, maxInput>>20)
	}
	if *runs < 1 {
		return fail(2, "-runs %d: give at least 1", *runs)
	}
	if *scaleOnly {
		sizes, err := parseScaleSizes(*scaleSizes)
		if err != nil {
			return fail(2, "-scale-sizes: %v", err)
		}
		ps, err := newPerfSentinel(*psBin)
		if err != nil {
			return fail(3, "%v", err)
		}
		defer os.RemoveAll(ps.dir)
		if err := scale(os.Stdout, *tlBin, *dir, ps, sizes, *runs, *throughputMiB<<20); err != nil {
			return fail(1, "scale: %v", err)
		}
		return 0
	}
	if *throughputOnly {
		ps, err := newPerfSentinel(*psBin)
		if err != nil {
			return fail(3, "%v", err)
		}
		defer os.RemoveAll(ps.dir)
		fmt.Fprintf(os.Stderr, "==> throughput: generating one trace file of about %d MiB\n", *throughputMiB)
		if err := throughput(os.Stdout, *tlBin, ps, *runs, *throughputMiB<<20); err != nil {
			return fail(1, "throughput: %v", err)
		}
		return 0
	}
	cases, err := corpus.Load(*dir)
	if err != nil {
		return fail(2, "%v", err)
	}
	if len(cases) == 0 {
		return fail(2, "no cases under %s", *dir)
	}
	ids := corpus.DetectorIDs()
	for _, c := range cases {
		if err := c.Labels.Validate(ids); err != nil {
			return fail(2, "case %s: labels.yaml: %s", c.Name, strings.ReplaceAll(err.Error(), "\n", "; "))
		}
	}
	ps, err := newPerfSentinel(*psBin)
	if err != nil {
		return fail(3, "%v", err)
	}
	defer os.RemoveAll(ps.dir)

	fmt.Fprintf(os.Stderr, "==> scoring %d case(s) with tracelab (in process) and perf-sentinel (%s)\n", len(cases), *psBin)
	var results []caseResult
	notCompared := map[string]int{}
	for _, c := range cases {
		r, err := scoreCase(c, ps, notCompared)
		if err != nil {
			return fail(1, "case %s: %v", c.Name, err)
		}
		results = append(results, r)
	}
	printTables(os.Stdout, ids, results)
	printStacks(os.Stdout, results)
	printRuntimes(os.Stdout, results)
	printMapping(os.Stdout, notCompared)
	printDetails(os.Stdout, results)

	fmt.Fprintln(os.Stderr, "==> throughput: generating one trace file under perf-sentinel's 100 MiB limit")
	if err := throughput(os.Stdout, *tlBin, ps, *runs, *throughputMiB<<20); err != nil {
		return fail(1, "throughput: %v", err)
	}
	return 0
}

// caseResult is one case scored for both tools.
type caseResult struct {
	c      corpus.Case
	traces int
	spans  int
	score  map[string]corpus.Result // tool -> result
}

func scoreCase(c corpus.Case, ps *perfSentinel, notCompared map[string]int) (caseResult, error) {
	traces, err := c.Traces()
	if err != nil {
		return caseResult{}, err
	}
	r := caseResult{c: c, traces: len(traces), score: map[string]corpus.Result{}}
	rep, err := c.Analyze()
	if err != nil {
		return r, err
	}
	r.spans = rep.Spans
	r.score[tracelabName] = corpus.Score(c.Labels, corpus.FromDetect(rep.Findings))
	psFindings, err := ps.analyze(traces)
	if err != nil {
		return r, err
	}
	r.score[psName] = corpus.Score(c.Labels, aggregate(psFindings, requests(traces), notCompared))
	return r, nil
}

// tally counts outcomes of one tool for one detector class.
type tally struct{ tp, fp, fn int }

func (t *tally) add(r corpus.Result, id string) {
	for _, m := range r.Matched {
		if m.Label.Detector == id {
			t.tp++
		}
	}
	for _, l := range r.Missed {
		if l.Detector == id {
			t.fn++
		}
	}
	for _, f := range r.FalsePositives {
		if f.Detector == id {
			t.fp++
		}
	}
}

func ratio(a, b int) string {
	if b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}

func (t tally) cells() string {
	return fmt.Sprintf("%d\t%d\t%d\t%s\t%s", t.tp, t.fp, t.fn, ratio(t.tp, t.tp+t.fp), ratio(t.tp, t.tp+t.fn))
}

// psCompares says whether perf-sentinel has a finding type mapped to id.
func psCompares(id string) bool {
	for _, m := range psMapping {
		if m[1] == id {
			return true
		}
	}
	return false
}

func printTables(out *os.File, ids []string, results []caseResult) {
	heldOut := 0
	for _, r := range results {
		if r.c.Labels.Tuning == corpus.HeldOut {
			heldOut++
		}
	}
	fmt.Fprintf(out, "Detectors on the labelled corpus: %d case(s), %d held out (never looked at when tuning)\n", len(results), heldOut)
	fmt.Fprintln(out, "TP: labelled finding reported; FP: finding nobody labelled; FN: labelled finding missed.")
	for _, id := range ids {
		fmt.Fprintf(out, "\n%s: all %d case(s) | the %d held-out case(s)\n", id, len(results), heldOut)
		w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(w, "\tTP\tFP\tFN\tprecision\trecall\t|\tTP\tFP\tFN\tprecision\trecall\t\n")
		for _, tool := range []string{tracelabName, psName} {
			if tool == psName && !psCompares(id) {
				fmt.Fprintf(w, "%s\t—\t—\t—\t—\t—\t|\t—\t—\t—\t—\t—\t\n", tool)
				continue
			}
			var all, held tally
			for _, r := range results {
				all.add(r.score[tool], id)
				if r.c.Labels.Tuning == corpus.HeldOut {
					held.add(r.score[tool], id)
				}
			}
			fmt.Fprintf(w, "%s\t%s\t|\t%s\t\n", tool, all.cells(), held.cells())
		}
		w.Flush()
	}
}

// printStacks scores each application stack over all detectors, on all of
// its cases and on its held-out ones. A stack none of whose cases was looked
// at when tuning is a leave-one-stack-out score as it stands; a stack with
// tuned cases has one only for its held-out cases, if it has any.
// perf-sentinel is scored on the detector classes it has (psCompares).
func printStacks(out *os.File, results []caseResult) {
	byStack := map[string][]caseResult{}
	for _, r := range results {
		byStack[r.c.Labels.Stack] = append(byStack[r.c.Labels.Stack], r)
	}
	fmt.Fprintln(out, "\nPer stack, all detectors: all its cases | its held-out cases (leave one stack out)")
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "stack\ttool\tcases\tTP\tFP\tFN\tprecision\trecall\t|\tcases\tTP\tFP\tFN\tprecision\trecall\t\n")
	for _, stack := range slices.Sorted(maps.Keys(byStack)) {
		for _, tool := range []string{tracelabName, psName} {
			var all, held tally
			nAll, nHeld := 0, 0
			for _, r := range byStack[stack] {
				nAll++
				isHeld := r.c.Labels.Tuning == corpus.HeldOut
				if isHeld {
					nHeld++
				}
				for _, id := range corpus.DetectorIDs() {
					if tool == psName && !psCompares(id) {
						continue
					}
					all.add(r.score[tool], id)
					if isHeld {
						held.add(r.score[tool], id)
					}
				}
			}
			heldCells := "0\t—\t—\t—\t—\t—"
			if nHeld > 0 {
				heldCells = fmt.Sprintf("%d\t%s", nHeld, held.cells())
			}
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\t|\t%s\t\n", stack, tool, nAll, all.cells(), heldCells)
		}
	}
	w.Flush()
}

// printRuntimes scores each detector class per language runtime, on all
// the runtime's cases and on its held-out ones; a class with no label and
// no finding in a runtime is left out.
func printRuntimes(out *os.File, results []caseResult) {
	byRuntime := map[string][]caseResult{}
	for _, r := range results {
		byRuntime[r.c.Labels.Runtime()] = append(byRuntime[r.c.Labels.Runtime()], r)
	}
	fmt.Fprintln(out, "\nPer runtime and class: its tuned cases | its held-out cases")
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "runtime\tclass\ttool\tTP\tFP\tFN\tprecision\trecall\t|\tTP\tFP\tFN\tprecision\trecall\t\n")
	for _, rt := range slices.Sorted(maps.Keys(byRuntime)) {
		for _, id := range corpus.DetectorIDs() {
			for _, tool := range []string{tracelabName, psName} {
				if tool == psName && !psCompares(id) {
					continue
				}
				var tuned, held tally
				for _, r := range byRuntime[rt] {
					if r.c.Labels.Tuning == corpus.HeldOut {
						held.add(r.score[tool], id)
					} else {
						tuned.add(r.score[tool], id)
					}
				}
				if tuned == (tally{}) && held == (tally{}) {
					continue
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t|\t%s\t\n", rt, id, tool, tuned.cells(), held.cells())
			}
		}
	}
	w.Flush()
}

func printMapping(out *os.File, notCompared map[string]int) {
	fmt.Fprintln(out, "\nperf-sentinel types compared (aggregated per type, service, request and template in each case):")
	for _, m := range psMapping {
		fmt.Fprintf(out, "  %s -> %s\n", m[0], m[1])
	}
	var ids []string
	for _, d := range detect.All() {
		if !psCompares(d.ID()) {
			ids = append(ids, d.ID())
		}
	}
	fmt.Fprintf(out, "  no perf-sentinel counterpart: %s\n", strings.Join(ids, ", "))
	if len(notCompared) == 0 {
		fmt.Fprintln(out, "  perf-sentinel findings not compared: none")
		return
	}
	var parts []string
	for _, t := range slices.Sorted(maps.Keys(notCompared)) {
		parts = append(parts, fmt.Sprintf("%s ×%d", t, notCompared[t]))
	}
	fmt.Fprintf(out, "  perf-sentinel findings not compared (per trace): %s\n", strings.Join(parts, ", "))
}

func printDetails(out *os.File, results []caseResult) {
	fmt.Fprintln(out, "\nPer case: what each tool missed and what it reported that nobody labelled")
	for _, r := range results {
		fmt.Fprintf(out, "\n%s (%s; %d trace(s), %d spans)\n", r.c.Name, r.c.Labels.Tuning, r.traces, r.spans)
		for _, tool := range []string{tracelabName, psName} {
			s := r.score[tool]
			if len(s.Missed)+len(s.FalsePositives) == 0 {
				fmt.Fprintf(out, "  %-13s  ok: %d of %d label(s) found, nothing else\n", tool, len(s.Matched), len(r.c.Labels.Findings))
				continue
			}
			fmt.Fprintf(out, "  %-13s  %d of %d label(s) found\n", tool, len(s.Matched), len(r.c.Labels.Findings))
			for _, l := range s.Missed {
				fmt.Fprintf(out, "    missed: %s\n", l)
			}
			for _, f := range s.FalsePositives {
				fmt.Fprintf(out, "    false positive: %s\n", clip(f.String(), 300))
			}
		}
	}
}

func clip(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
