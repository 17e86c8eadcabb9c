package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"tracelab/pkg/compare"
	"tracelab/pkg/detect"
	"tracelab/pkg/sarif"
	"tracelab/pkg/source"
)

func init() {
	register("compare", "compare a baseline's traces with a candidate's: findings and latency", runCompare)
}

const compareUsage = `usage: tracelab compare --baseline SRC --candidate SRC [--format text|json|sarif] [--repo DIR] [--sarif-map FILE] [--max-p95-regression P%] [--fail-on new|none] [--strict]

SRC is a trace file (- for stdin, one side at most), or
  jaeger:URL?service=S[&operation=O][&since=15m|&start=T&end=T][&limit=20][&timeout=30s][&max-response-bytes=256MiB]
  tempo:URL?query=TRACEQL[&since, start, end, limit, timeout, max-response-bytes as above]
each parameter (URL-encoded) as analyze's flag of that name; timeout is the deadline of
that side's whole fetch. A Jaeger or Tempo side also takes analyze's LIMITS
(&max-attr-depth=N, ...); a file side parses with their defaults.

Compares the findings (resolved, new, persisting) and per request type p50
and p95 with a 95% bootstrap interval of the ratio, calls and round trips.

--format json prints the comparison as pkg/compare/compare.schema.json
describes it; --format sarif writes SARIF 2.1.0 whose results carry their
baselineState (new, unchanged, absent), plus an error result of rule
p95-regression for each request type that regressed, each placed in the
repository as analyze places it (--repo DIR, --sarif-map FILE).

Fails (exit 1) when something got worse beyond the thresholds:
  --fail-on new              any finding is new (the default); none: never
                             fail on findings
  --max-p95-regression P%    a request type with at least 20 traces on each
                             side whose p95 ratio's CI has its LOWER bound
                             above 1+P, i.e. slower by more than P even at the
                             favourable end of the noise (default 10%)

Broken traces on a side are named on stderr, a line per kind, as analyze
names them (warning: --baseline: 3 spans end before they start);
--strict makes any of them exit 2, after the comparison.

Refuses to compare (exit 2) a side with no traces, sides of which neither
has a request (a trace with a SERVER or CONSUMER root: start-up or
background traces only), or a side whose request types carry less than
half of the other side's request traces: the rest would read as resolved
or new without having been looked at.

Exit codes: 0 nothing got worse; 1 it did; 2 bad input (as analyze's, and
the refusals above); 3 the backend is not answering (as analyze's); 130
interrupted (SIGINT), 143 terminated (SIGTERM), within a second whatever
is being read, stdin included.`

// compareOut is where the comparison goes; tests replace it.
var compareOut io.Writer = os.Stdout

func runCompare(args []string) int {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	baseline := fs.String("baseline", "", "the baseline: a trace file, jaeger:URL?service=S or tempo:URL?query=Q")
	candidate := fs.String("candidate", "", "the candidate: a trace file, jaeger:URL?service=S or tempo:URL?query=Q")
	format := fs.String("format", "text", "output format: text, json or sarif")
	sarifMap := fs.String("sarif-map", "", "SARIF: YAML/JSON file mapping each service to its path in the repository")
	repo := fs.String("repo", ".", "SARIF: the repository's root, where the spans' code is looked up and --sarif-map's paths must exist")
	strict := fs.Bool("strict", false, "exit 2 when a trace of either side is broken (any warning)")
	maxReg := fs.String("max-p95-regression", fmt.Sprintf("%g%%", 100*compare.DefaultMaxP95Regression), "allowed p95 regression beyond noise")
	failOn := fs.String("fail-on", "new", "new or none")
	if code, ok := parseFlags(fs, args, 0, compareUsage, compareOut); !ok {
		return code
	}
	if *baseline == "" || *candidate == "" {
		return fail(exitUsage, "compare: --baseline and --candidate are both required (trace files, jaeger:URL?service=S or tempo:URL?query=Q); see tracelab compare --help")
	}
	if *baseline == "-" && *candidate == "-" {
		return fail(exitUsage, "compare: --baseline and --candidate cannot both be - (stdin); give one of them as a file")
	}
	if *format != "text" && *format != "json" && *format != "sarif" {
		return fail(exitUsage, "compare: unknown --format %q; use text, json or sarif", *format)
	}
	placer, code, ok := sarifPlacer("compare", *format, *repo, *sarifMap)
	if !ok {
		return code
	}
	if *failOn != "new" && *failOn != "none" {
		return fail(exitUsage, "compare: unknown --fail-on %q; use new or none", *failOn)
	}
	maxRegression, err := parsePercent(*maxReg)
	if err != nil {
		return fail(exitUsage, "compare: --max-p95-regression %q: %v", *maxReg, err)
	}

	ctx, stop := interruptibleWithin("compare", interruptGrace)
	defer stop()
	var inputs [2]compare.Input
	detectors := detect.All()
	for i, side := range []struct{ flag, src string }{{"--baseline", *baseline}, {"--candidate", *candidate}} {
		src, err := source.ParseSRC(side.src, analyzeNow())
		if err != nil {
			return fail(exitUsage, "compare: %s: %v", side.flag, err)
		}
		src.Log = os.Stderr
		traces, err := src.Fetch(ctx)
		if err != nil {
			return fetchFailure(ctx, "compare: "+side.flag, err)
		}
		if ctx.Err() != nil {
			return fetchFailure(ctx, "compare: "+side.flag, nil)
		}
		inputs[i] = compare.NewInput(traces, detectors)
		warn(side.flag+": ", inputs[i].Report.Warnings)
	}
	if ctx.Err() != nil {
		return fetchFailure(ctx, "compare", nil)
	}
	if err := compare.CheckCoverage(inputs[0], inputs[1]); err != nil {
		return fail(exitUsage, "compare: %v", err)
	}
	res := compare.Compare(inputs[0], inputs[1],
		compare.Options{MaxP95Regression: maxRegression, FailOnNew: *failOn == "new"})

	err = writeAs(compareOut, *format, res,
		func(w io.Writer) error {
			return writeSARIF(w, "compare", sarif.FromComparison(res, sarif.IDs(detectors), maxRegression, placer), placer)
		},
		func(w io.Writer) error { return compare.WriteText(w, res) })
	if err != nil {
		return fail(exitRuntime, "compare: writing the comparison: %v", err)
	}
	if *strict && len(inputs[0].Report.Warnings)+len(inputs[1].Report.Warnings) > 0 {
		return fail(exitUsage, "compare: --strict: the traces are broken (the warnings above; the comparison was written all the same); fix what produced them, or drop --strict")
	}
	if !res.Verdict.Pass {
		return exitFail
	}
	return exitOK
}

// parsePercent reads "10%" (or "10") as 0.10.
func parsePercent(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, errors.New("not a percentage; give e.g. 10%")
	}
	if v < 0 {
		return 0, errors.New("a percentage of 0% or more")
	}
	return v / 100, nil
}
