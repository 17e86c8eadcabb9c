package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"tracelab/pkg/analyze"
	"tracelab/pkg/backend"
	"tracelab/pkg/detect"
	"tracelab/pkg/sarif"
	"tracelab/pkg/source"
	"tracelab/pkg/trace"
)

func init() {
	register("analyze", "analyze OTLP JSON traces from a file, Jaeger or Tempo", runAnalyze)
}

const analyzeUsage = `usage: tracelab analyze --file F|- | --jaeger URL --service S [--operation O] | --tempo URL --query TRACEQL [WINDOW] [FETCH] [LIMITS] [--format text|json|sarif] [--repo DIR] [--sarif-map FILE] [--strict] [--max-memory B]

Exactly one source: a file (- for stdin); Jaeger's api/v3 find-traces
(traces with a span of service S, and of operation O if given); or Tempo's
TraceQL search, then each trace it found by id.

WINDOW is --since D (default 15m: the last 15 minutes) or --start T --end T
(RFC3339, e.g. 2026-01-02T15:04:05Z). FETCH is --limit N, the most traces
to fetch and analyze (default 20; of a backend that answers more, the
first N are kept and the others' spans dropped as they are read);
--timeout D, the deadline of the whole fetch, every request, retry and
wait included (default 30s); --max-response-bytes B, the most one answer
may hold (default 256MiB; KiB, MiB, GiB, KB, MB, GB).
A backend answering 429 or 503 is asked again, as its Retry-After says or
backing off, while the deadline allows.

Reads OTLP JSON traces (Jaeger api/v3 {"result":{"resourceSpans":...}},
plain OTLP {"resourceSpans":...} or Tempo {"batches":...}; several
documents may be concatenated) and reports the pathologies found, ranked by
their share of the critical path, and per request type where the time goes.

Broken traces are analyzed as well as they can be and named, a line on
stderr per kind with its count (warning: 3 spans end before they start)
and the report's warnings: cycles in parent links, self-parented spans,
different spans sharing an id, trace ids not of 32 hex digits, span ids
not of 16, spans that end before they start or at a negative time.
--strict makes any of them exit 2, after the report.

Exit codes: 2 bad input: no traces (an empty file, spans without a
traceId, an empty window), no request (every trace is start-up or
background work: nothing analyzed), broken traces with --strict, a query the
backend rejects (4xx), an answer that is not the backend's JSON or is
larger than --max-response-bytes;
3 the backend is not answering (refused, past the deadline, 5xx, 429 or
503 until the deadline); 130 interrupted (SIGINT), 143 terminated
(SIGTERM), within a second whatever is being read, stdin included.

--max-memory B bounds the memory of the analysis (default 320MiB; KiB,
MiB, GiB, KB, MB, GB; -1 lifts it). Garbage is collected harder as the
heap nears it, and when what the analysis must keep to the end (the
traces still open, each detector's per-request samples) passes three
quarters of it, analyze stops with exit 2 and a line naming the flag,
rather than thrash or be killed. A file is read trace by trace: what it
keeps grows with its requests, about 110 MiB at a million real spans.

LIMITS bound the parse, whatever the source: --max-attr-depth N (levels
of nested attribute values, default 32), --max-attr-bytes N (one value,
default 1048576), --max-trace-spans N (default 100000), --max-spans N (the
whole input, default 5000000); -1 lifts one. Past a limit: exit 2.

--format sarif writes SARIF 2.1.0 for CI and code-scanning tools: one rule
per detector id, one result per finding at its logical location (service,
request, operation), level error from half the critical path on, placed in
the repository at --repo DIR (default: the current directory): at the
method that made the spans, found from their OpenTelemetry code attributes
or their handler's; else at the path --sarif-map FILE gives the service
(service: path or service: path#function per line; each must exist, or
exit 2); else at line 1 of the repository's README.`

// analyzeOut is where the report goes; tests replace it.
var analyzeOut io.Writer = os.Stdout

// analyzeNow is the clock --since counts back from; tests replace it.
var analyzeNow = time.Now

func runAnalyze(args []string) int {
	fs := flag.NewFlagSet("analyze", flag.ContinueOnError)
	format := fs.String("format", "text", "output format: text, json or sarif")
	sarifMap := fs.String("sarif-map", "", "SARIF: YAML/JSON file mapping each service to its path in the repository")
	repo := fs.String("repo", ".", "SARIF: the repository's root, where the spans' code is looked up and --sarif-map's paths must exist")
	strict := fs.Bool("strict", false, "exit 2 when a trace is broken (any warning)")
	maxMemory := fs.String("max-memory", defaultMaxMemory, "the most memory the analysis may use (-1: no limit)")
	for _, n := range source.Names() {
		fs.String(n, "", "see analyzeUsage")
	}
	if code, ok := parseFlags(fs, args, 0, analyzeUsage, analyzeOut); !ok {
		return code
	}
	params := map[string]string{}
	fs.Visit(func(f *flag.Flag) { params[f.Name] = f.Value.String() })
	delete(params, "format")
	delete(params, "sarif-map")
	delete(params, "repo")
	delete(params, "strict")
	delete(params, "max-memory")
	src, err := source.Parse(params, source.Flags, analyzeNow())
	if err != nil {
		return fail(exitUsage, "analyze: %v", err)
	}
	if *format != "text" && *format != "json" && *format != "sarif" {
		return fail(exitUsage, "analyze: unknown --format %q; use text, json or sarif", *format)
	}
	memLimit, err := parseMaxMemory(*maxMemory)
	if err != nil {
		return fail(exitUsage, "analyze: --max-memory: %v", err)
	}
	placer, code, ok := sarifPlacer("analyze", *format, *repo, *sarifMap)
	if !ok {
		return code
	}
	src.Log = os.Stderr

	defer batchGC(os.LookupEnv)()
	defer memoryLimit(memLimit)()
	startLive := liveHeap()

	sigCtx, stop := interruptibleWithin("analyze", interruptGrace)
	defer stop()
	ctx, overMemory := context.WithCancelCause(sigCtx)
	defer overMemory(nil)
	t0 := time.Now()
	detectors := detect.All()
	var an *analyze.Analyzer
	err = src.Stream(ctx, func() func([]*trace.Trace) {
		an = analyze.NewAnalyzer(detectors)
		return func(ts []*trace.Trace) {
			if ctx.Err() == nil { // interrupted: the rest is not worth analyzing
				an.Add(ts)
				if err := checkMemory(memLimit, startLive); err != nil {
					overMemory(err)
				}
			}
		}
	})
	if cause := context.Cause(ctx); sigCtx.Err() == nil && cause != nil && cause != context.Canceled {
		return fail(exitUsage, "analyze: %v", cause)
	}
	if err != nil || ctx.Err() != nil { // interrupted at the end of the input
		return fetchFailure(sigCtx, "analyze", err)
	}
	report := an.Report()
	if ctx.Err() != nil {
		return fetchFailure(ctx, "analyze", nil)
	}
	if len(report.Requests) == 0 {
		return fail(exitUsage, "analyze: %v", noRequest(report))
	}
	if d := time.Since(t0); d > 2*time.Second {
		fmt.Fprintf(os.Stderr, "tracelab: analyzed %d traces (%d spans) from %s in %.1fs\n", report.Traces, report.Spans, src, d.Seconds())
	}

	warn("", report.Warnings)

	err = writeAs(analyzeOut, *format, report,
		func(w io.Writer) error {
			return writeSARIF(w, "analyze", sarif.FromReport(report, sarif.IDs(detectors), placer), placer)
		},
		func(w io.Writer) error { return analyze.WriteText(w, report) })
	if err != nil {
		return fail(exitRuntime, "analyze: writing the report: %v", err)
	}
	if *strict && len(report.Warnings) > 0 {
		return fail(exitUsage, "analyze: --strict: the traces are broken (the warnings above; the report was written all the same); fix what produced them, or drop --strict")
	}
	return exitOK
}

// noRequest says that no trace of r serves a request, so nothing was
// analyzed and a gate on the report would pass on nothing.
func noRequest(r analyze.Report) error {
	root := ""
	if len(r.Background) > 0 {
		root = fmt.Sprintf(", most of them rooted at %q", r.Background[0].Root)
	}
	return fmt.Errorf("no request to analyze: none of the %d traces read has a root SERVER or CONSUMER span (all are start-up or background work%s); check that the source catches the service's requests (its service, operation, window or query, or the file's contents)", r.Traces, root)
}

// warn prints a line on stderr per kind of broken span or trace; side
// names a side of compare.
func warn(side string, ws []analyze.Warning) {
	for _, w := range ws {
		fmt.Fprintf(os.Stderr, "tracelab: warning: %s%s (e.g. trace %s)\n", side, w.Message(), w.ExampleTraceID)
	}
}

// defaultMaxMemory is --max-memory's default: a process within 400 MiB,
// the bound issue 39 set for a million spans.
const defaultMaxMemory = "320MiB"

// parseMaxMemory reads --max-memory: a size, or -1 for no limit (0).
func parseMaxMemory(v string) (int64, error) {
	if v == "-1" {
		return 0, nil
	}
	n, err := backend.ParseBytes(v)
	if err != nil {
		return 0, err
	}
	if n < 16<<20 {
		return 0, fmt.Errorf("%s is less than the 16MiB the analysis needs to start", v)
	}
	return n, nil
}

// memoryLimit sets the Go runtime's memory limit to runtimeShare of limit
// bytes (none when 0), so that the collector works harder as the heap
// nears it instead of letting it grow to batchGCPercent over what is
// live, unless GOMEMLIMIT says otherwise. It returns what puts the
// previous limit back.
func memoryLimit(limit int64) (restore func()) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set || limit == 0 {
		return func() {}
	}
	prev := debug.SetMemoryLimit(int64(runtimeShare * float64(limit)))
	return func() { debug.SetMemoryLimit(prev) }
}

// runtimeShare is the share of --max-memory left to what the Go runtime
// limits: the rest is for what a process's resident memory counts that
// the runtime's limit does not, the binary's pages first (at 1GiB the
// whole limit for the runtime made a peak 1.5 MiB past it).
const runtimeShare = 0.9

// liveShare is how much of --max-memory what the analysis keeps may take:
// past it, the collector would run nearly without pause and the process
// would soon pass the limit anyway.
const liveShare = 0.75

// checkMemory fails when the heap that was live at the last collection,
// less what was live before the analysis (start), passes liveShare of
// limit: what the analysis keeps (open traces, the detectors' samples).
func checkMemory(limit, start int64) error {
	if limit == 0 {
		return nil
	}
	kept := liveHeap() - start
	if float64(kept) <= liveShare*float64(limit) {
		return nil
	}
	return fmt.Errorf("the analysis keeps %d MiB, more than %.0f%% of --max-memory %d MiB (the traces still open and each detector's samples of every request read); raise --max-memory, or -1 to lift it", kept>>20, 100*liveShare, limit>>20)
}

// liveHeap is the heap live at the last collection.
func liveHeap() int64 {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	return int64(sample[0].Value.Uint64())
}
