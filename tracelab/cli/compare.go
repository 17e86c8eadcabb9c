package cli

import (
	"encoding/json"
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
	"tracelab/pkg/otlp"
	"tracelab/pkg/trace"
)

func init() {
	register("compare", "compare a baseline's traces with a candidate's: findings and latency", runCompare)
}

const compareUsage = `usage: tracelab compare --baseline F --candidate F [--format text|json] [--max-p95-regression P%] [--fail-on new|none]

Analyzes two trace files (any form analyze reads; - for stdin on one side at
most) and compares them: findings resolved (baseline only), new (candidate
only) and persisting (matched by detector, service, request and operation);
and per request type p50 and p95 of the request's duration with a 95%
bootstrap confidence interval of the ratio candidate/baseline (percentile
bootstrap, 2000 resamples, fixed seed), and calls and database round trips
per request on each side.

Fails (exit 1) when something got worse beyond the thresholds:
  --fail-on new              any finding is new (the default); none: never
                             fail on findings
  --max-p95-regression P%    a request type on both sides whose p95 ratio's
                             CI has its LOWER bound above 1+P, i.e. slower by
                             more than P even at the favourable end of the
                             noise (default 10%)

Exit codes: 0 nothing got worse; 1 it did; 2 bad input (flags, an unreadable
or malformed file, a bad percentage).`

const compareShortUsage = "usage: tracelab compare --baseline F --candidate F [--format text|json] [--max-p95-regression P%] [--fail-on new|none]"

// compareOut is where the comparison goes; tests replace it.
var compareOut io.Writer = os.Stdout

func runCompare(args []string) int {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	baseline := fs.String("baseline", "", "the baseline's trace file")
	candidate := fs.String("candidate", "", "the candidate's trace file")
	format := fs.String("format", "text", "output format: text or json")
	maxReg := fs.String("max-p95-regression", "10%", "allowed p95 regression beyond noise")
	failOn := fs.String("fail-on", "new", "new or none")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(compareOut, compareUsage)
			return exitOK
		}
		return fail(exitUsage, "compare: %v; %s", err, compareShortUsage)
	}
	if fs.NArg() > 0 {
		return fail(exitUsage, "compare: unexpected argument %q; %s", fs.Arg(0), compareShortUsage)
	}
	if *baseline == "" || *candidate == "" {
		return fail(exitUsage, "compare: --baseline and --candidate are both required (trace files); %s", compareShortUsage)
	}
	if *baseline == "-" && *candidate == "-" {
		return fail(exitUsage, "compare: --baseline and --candidate cannot both be - (stdin); give one of them as a file")
	}
	if *format != "text" && *format != "json" {
		return fail(exitUsage, "compare: unknown --format %q; use text or json", *format)
	}
	if *failOn != "new" && *failOn != "none" {
		return fail(exitUsage, "compare: unknown --fail-on %q; use new or none", *failOn)
	}
	maxRegression, err := parsePercent(*maxReg)
	if err != nil {
		return fail(exitUsage, "compare: --max-p95-regression %q: %v", *maxReg, err)
	}

	base, code := readTraces("--baseline", *baseline)
	if code != exitOK {
		return code
	}
	cand, code := readTraces("--candidate", *candidate)
	if code != exitOK {
		return code
	}
	detectors := detect.All()
	res := compare.Compare(compare.NewInput(base, detectors), compare.NewInput(cand, detectors),
		compare.Options{MaxP95Regression: maxRegression, FailOnNew: *failOn == "new"})

	if *format == "json" {
		enc := json.NewEncoder(compareOut)
		enc.SetIndent("", "  ")
		err = enc.Encode(res)
	} else {
		err = writeComparison(compareOut, res)
	}
	if err != nil {
		return fail(exitRuntime, "compare: writing the comparison: %v", err)
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

func readTraces(flagName, file string) ([]*trace.Trace, int) {
	f, code := openTraceFile("compare: "+flagName, file)
	if code != exitOK {
		return nil, code
	}
	defer f.Close()
	traces, err := otlp.ParseReader(f)
	if err != nil {
		return nil, fail(exitUsage, "compare: %s %s: %v", flagName, file, err)
	}
	return traces, exitOK
}

func writeComparison(w io.Writer, r compare.Result) error {
	var b strings.Builder
	if r.Verdict.Pass {
		b.WriteString("verdict: pass\n")
	} else {
		b.WriteString("verdict: FAIL\n")
		for _, reason := range r.Verdict.Reasons {
			fmt.Fprintf(&b, "  - %s\n", reason)
		}
	}
	fmt.Fprintf(&b, "\nfindings: %d resolved, %d new, %d persisting\n", len(r.Resolved), len(r.New), len(r.Persisting))
	for _, group := range []struct {
		name string
		fs   []detect.Finding
	}{{"resolved", r.Resolved}, {"new", r.New}, {"persisting", r.Persisting}} {
		for _, f := range group.fs {
			fmt.Fprintf(&b, "  %-10s %s  %s", group.name, f.Detector, f.Service)
			if f.Request != "" {
				fmt.Fprintf(&b, "  %s", f.Request)
			}
			fmt.Fprintf(&b, "  %s\n", f.Operation)
		}
	}
	fmt.Fprintf(&b, "\nrequests (baseline -> candidate):\n")
	for _, q := range r.Requests {
		fmt.Fprintf(&b, "  %s\n", q.Request)
		fmt.Fprintf(&b, "    traces   %s -> %s\n", sideValue(q.Baseline, func(s *compare.Side) string { return strconv.Itoa(s.Traces) }),
			sideValue(q.Candidate, func(s *compare.Side) string { return strconv.Itoa(s.Traces) }))
		for _, p := range []struct {
			name  string
			get   func(*compare.Side) float64
			ratio *compare.Ratio
		}{{"p50", func(s *compare.Side) float64 { return s.P50Ms }, q.P50Ratio}, {"p95", func(s *compare.Side) float64 { return s.P95Ms }, q.P95Ratio}} {
			get := p.get
			fmt.Fprintf(&b, "    %s      %s -> %s ms", p.name,
				sideValue(q.Baseline, func(s *compare.Side) string { return fmt.Sprintf("%.1f", get(s)) }),
				sideValue(q.Candidate, func(s *compare.Side) string { return fmt.Sprintf("%.1f", get(s)) }))
			if p.ratio != nil {
				fmt.Fprintf(&b, "  %.2f× (95%% CI %.2f–%.2f×)", p.ratio.Value, p.ratio.Low, p.ratio.High)
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "    calls    %s -> %s per request\n",
			sideValue(q.Baseline, func(s *compare.Side) string { return fmt.Sprintf("%g", s.CallsPerRequest) }),
			sideValue(q.Candidate, func(s *compare.Side) string { return fmt.Sprintf("%g", s.CallsPerRequest) }))
		fmt.Fprintf(&b, "    db       %s -> %s round trips per request\n",
			sideValue(q.Baseline, func(s *compare.Side) string { return fmt.Sprintf("%g", s.DBCallsPerRequest) }),
			sideValue(q.Candidate, func(s *compare.Side) string { return fmt.Sprintf("%g", s.DBCallsPerRequest) }))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// sideValue formats a side's value, or "-" for a side the request type is
// missing from.
func sideValue(s *compare.Side, f func(*compare.Side) string) string {
	if s == nil {
		return "-"
	}
	return f(s)
}
