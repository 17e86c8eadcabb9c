package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"tracelab/pkg/compare"
	"tracelab/pkg/detect"
	"tracelab/pkg/otlp"
	"tracelab/pkg/trace"
)

func init() {
	register("compare", "compare a baseline's traces with a candidate's: findings and latency", runCompare)
}

const compareUsage = `usage: tracelab compare --baseline SRC --candidate SRC [--format text|json] [--max-p95-regression P%] [--fail-on new|none]

SRC is a trace file (any form analyze reads; - for stdin on one side at
most) or jaeger:URL?service=S[&operation=O][&since=15m|&start=T&end=T]
[&limit=20][&timeout=30s], which fetches traces as analyze --jaeger does.

Analyzes both sides and compares them: findings resolved (baseline only),
new (candidate only) and persisting (matched by detector, service, request
and operation); and per request type p50 and p95 of the request's duration
with a 95% bootstrap confidence interval of the ratio candidate/baseline
(percentile bootstrap, 2000 resamples, fixed seed), and calls and database
round trips per request on each side.

Fails (exit 1) when something got worse beyond the thresholds:
  --fail-on new              any finding is new (the default); none: never
                             fail on findings
  --max-p95-regression P%    a request type on both sides whose p95 ratio's
                             CI has its LOWER bound above 1+P, i.e. slower by
                             more than P even at the favourable end of the
                             noise (default 10%)

Exit codes: 0 nothing got worse; 1 it did; 2 bad input (flags, an unreadable
or malformed file, a bad percentage, no traces found in Jaeger's window, a
query Jaeger rejects); 3 Jaeger is not answering (refused, timeout, 5xx).`

const compareShortUsage = "usage: tracelab compare --baseline SRC --candidate SRC [--format text|json] [--max-p95-regression P%] [--fail-on new|none]"

// compareOut is where the comparison goes; tests replace it.
var compareOut io.Writer = os.Stdout

func runCompare(args []string) int {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	baseline := fs.String("baseline", "", "the baseline: a trace file or jaeger:URL?service=S")
	candidate := fs.String("candidate", "", "the candidate: a trace file or jaeger:URL?service=S")
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
		return fail(exitUsage, "compare: --baseline and --candidate are both required (trace files or jaeger:URL?service=S); %s", compareShortUsage)
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

// readTraces reads one side: a trace file (- for stdin) or
// jaeger:URL?service=S&... (see compareUsage).
func readTraces(flagName, src string) ([]*trace.Trace, int) {
	cmd := "compare: " + flagName
	if rest, ok := strings.CutPrefix(src, "jaeger:"); ok {
		in, name, code := jaegerSource(cmd, rest)
		if code != exitOK {
			return nil, code
		}
		traces, err := otlp.ParseReader(in)
		if err != nil {
			return nil, fail(exitUsage, "%s: %s: %v", cmd, name, err)
		}
		if len(traces) == 0 {
			return nil, fail(exitUsage, "%s: no traces found for %s", cmd, name)
		}
		return traces, exitOK
	}
	f, code := openTraceFile(cmd, src)
	if code != exitOK {
		return nil, code
	}
	defer f.Close()
	traces, err := otlp.ParseReader(f)
	if err != nil {
		return nil, fail(exitUsage, "%s %s: %v", cmd, src, err)
	}
	return traces, exitOK
}

// jaegerParams are the query parameters of a jaeger: source, named after
// analyze's flags.
var jaegerParams = map[string]bool{"service": true, "operation": true, "since": true, "start": true, "end": true, "limit": true, "timeout": true}

// jaegerSource fetches the traces of jaeger:URL?service=S&... the way
// analyze --jaeger URL --service S ... does.
func jaegerSource(cmd, raw string) (io.Reader, string, int) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, "", fail(exitUsage, "%s: jaeger:%s is not jaeger:http(s)://HOST:PORT?service=S[&operation=O][&since=15m|&start=T&end=T][&limit=20][&timeout=30s]", cmd, raw)
	}
	q := u.Query()
	if q.Get("service") == "" {
		return nil, "", fail(exitUsage, "%s: jaeger:%s needs ?service=S (the service whose traces to fetch)", cmd, raw)
	}
	set := map[string]bool{}
	for k, v := range q {
		if !jaegerParams[k] {
			return nil, "", fail(exitUsage, "%s: the jaeger: source has an unknown parameter %q; use service, operation, since, start, end, limit, timeout", cmd, k)
		}
		if len(v) != 1 {
			return nil, "", fail(exitUsage, "%s: the jaeger: source gives %q %d times", cmd, k, len(v))
		}
		set[k] = true
	}
	since := "15m"
	if set["since"] {
		since = q.Get("since")
	}
	w, code := remoteWindow(cmd, set, since, q.Get("start"), q.Get("end"))
	if code != exitOK {
		return nil, "", code
	}
	limit := 20
	if set["limit"] {
		if limit, err = strconv.Atoi(q.Get("limit")); err != nil || limit < 1 {
			return nil, "", fail(exitUsage, "%s: limit=%q: it must be a whole number, at least 1", cmd, q.Get("limit"))
		}
	}
	timeout := 30 * time.Second
	if set["timeout"] {
		if timeout, err = time.ParseDuration(q.Get("timeout")); err != nil || timeout <= 0 {
			return nil, "", fail(exitUsage, "%s: timeout=%q is not a positive duration (e.g. 30s, 2m)", cmd, q.Get("timeout"))
		}
	}
	u.RawQuery = ""
	return fetchJaeger(cmd, u.String(), q.Get("service"), q.Get("operation"), w, limit, timeout)
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
