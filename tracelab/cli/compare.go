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
	"slices"
	"strconv"
	"strings"
	"time"

	"tracelab/pkg/compare"
	"tracelab/pkg/detect"
	"tracelab/pkg/otlp"
	"tracelab/pkg/sarif"
	"tracelab/pkg/trace"
)

func init() {
	register("compare", "compare a baseline's traces with a candidate's: findings and latency", runCompare)
}

const compareUsage = `usage: tracelab compare --baseline SRC --candidate SRC [--format text|json|sarif] [--max-p95-regression P%] [--fail-on new|none]

SRC is one of:
  FILE            a trace file, in any form analyze reads (- for stdin, on
                  one side at most)
  jaeger:URL?service=S[&operation=O][&since=15m|&start=T&end=T][&limit=20][&timeout=30s]
                  traces fetched as analyze --jaeger URL --service S … does
  tempo:URL?query=TRACEQL[&since=15m|&start=T&end=T][&limit=20][&timeout=30s]
                  traces fetched as analyze --tempo URL --query TRACEQL …
                  does (URL-encode the query)

Analyzes both sides and compares them: findings resolved (baseline only),
new (candidate only) and persisting (matched by detector, service, request
and operation); and per request type p50 and p95 of the request's duration
with a 95% bootstrap confidence interval of the ratio candidate/baseline
(percentile bootstrap, 2000 resamples, fixed seed), and calls and database
round trips per request on each side.

--format json prints the comparison as pkg/compare/compare.schema.json
describes it; --format sarif writes SARIF 2.1.0 whose results carry their
baselineState (new, unchanged, absent), plus an error result of rule
p95-regression for each request type that regressed.

Fails (exit 1) when something got worse beyond the thresholds:
  --fail-on new              any finding is new (the default); none: never
                             fail on findings
  --max-p95-regression P%    a request type with at least 20 traces on each
                             side whose p95 ratio's CI has its LOWER bound
                             above 1+P, i.e. slower by more than P even at the
                             favourable end of the noise (default 10%)

Exit codes: 0 nothing got worse; 1 it did; 2 bad input (flags, an unreadable
or malformed file, a bad percentage, no traces found in the window, a query
the backend rejects); 3 the backend is not answering (refused, timeout, 5xx).`

const compareShortUsage = "usage: tracelab compare --baseline SRC --candidate SRC [--format text|json|sarif] [--max-p95-regression P%] [--fail-on new|none]"

// compareOut is where the comparison goes; tests replace it.
var compareOut io.Writer = os.Stdout

func runCompare(args []string) int {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	baseline := fs.String("baseline", "", "the baseline: a trace file, jaeger:URL?service=S or tempo:URL?query=Q")
	candidate := fs.String("candidate", "", "the candidate: a trace file, jaeger:URL?service=S or tempo:URL?query=Q")
	format := fs.String("format", "text", "output format: text, json or sarif")
	sarifMap := fs.String("sarif-map", "", "SARIF: YAML/JSON file mapping each service to its path in the repository")
	maxReg := fs.String("max-p95-regression", fmt.Sprintf("%g%%", 100*compare.DefaultMaxP95Regression), "allowed p95 regression beyond noise")
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
		return fail(exitUsage, "compare: --baseline and --candidate are both required (trace files, jaeger:URL?service=S or tempo:URL?query=Q); %s", compareShortUsage)
	}
	if *baseline == "-" && *candidate == "-" {
		return fail(exitUsage, "compare: --baseline and --candidate cannot both be - (stdin); give one of them as a file")
	}
	if *format != "text" && *format != "json" && *format != "sarif" {
		return fail(exitUsage, "compare: unknown --format %q; use text, json or sarif", *format)
	}
	sarifPaths, err := sarif.LoadPaths(*sarifMap)
	if err != nil {
		return fail(exitUsage, "compare: --sarif-map %v", err)
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

	switch *format {
	case "json":
		enc := json.NewEncoder(compareOut)
		enc.SetIndent("", "  ")
		err = enc.Encode(res)
	case "sarif":
		err = sarif.WriteComparison(compareOut, res, sarif.IDs(detectors), maxRegression, sarifPaths)
	default:
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

// readTraces reads one side: a trace file (- for stdin),
// jaeger:URL?service=S&... or tempo:URL?query=Q&... (see compareUsage).
func readTraces(flagName, src string) ([]*trace.Trace, int) {
	cmd := "compare: " + flagName
	for _, b := range remoteBackends {
		rest, ok := strings.CutPrefix(src, b.scheme+":")
		if !ok {
			continue
		}
		in, name, code := remoteSource(cmd, b, rest)
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

// remoteBackend is a query source of compare: its scheme, its own
// parameters (named after analyze's flags, the first one required) and how
// it fetches. Every source also takes remoteFlags.
type remoteBackend struct {
	scheme string
	params []string
	fetch  func(cmd, url string, p url.Values, w window, limit int, timeout time.Duration) (io.Reader, string, int)
}

var remoteBackends = []remoteBackend{
	{"jaeger", jaegerFlags[1:], func(cmd, u string, p url.Values, w window, limit int, timeout time.Duration) (io.Reader, string, int) {
		return fetchJaeger(cmd, u, p.Get("service"), p.Get("operation"), w, limit, timeout)
	}},
	{"tempo", tempoFlags[1:], func(cmd, u string, p url.Values, w window, limit int, timeout time.Duration) (io.Reader, string, int) {
		return fetchTempo(cmd, u, p.Get("query"), w, limit, timeout)
	}},
}

// remoteSource fetches the traces of <scheme>:URL?param=...&... the way
// analyze --<scheme> URL --param ... does.
func remoteSource(cmd string, b remoteBackend, raw string) (io.Reader, string, int) {
	form := fmt.Sprintf("%s:http(s)://HOST:PORT?%s=…[&since=15m|&start=T&end=T][&limit=20][&timeout=30s]", b.scheme, b.params[0])
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, "", fail(exitUsage, "%s: %s:%s is not %s", cmd, b.scheme, raw, form)
	}
	q := u.Query()
	if strings.TrimSpace(q.Get(b.params[0])) == "" {
		return nil, "", fail(exitUsage, "%s: %s:%s needs ?%s=… (%s)", cmd, b.scheme, raw, b.params[0], form)
	}
	known := append(append([]string(nil), b.params...), remoteFlags...)
	set := map[string]bool{}
	for k, v := range q {
		if !slices.Contains(known, k) {
			return nil, "", fail(exitUsage, "%s: the %s: source has an unknown parameter %q; use %s", cmd, b.scheme, k, strings.Join(known, ", "))
		}
		if len(v) != 1 {
			return nil, "", fail(exitUsage, "%s: the %s: source gives %q %d times", cmd, b.scheme, k, len(v))
		}
		set[k] = true
	}
	since := defaultSince
	if set["since"] {
		since = q.Get("since")
	}
	w, code := remoteWindow(cmd, set, since, q.Get("start"), q.Get("end"))
	if code != exitOK {
		return nil, "", code
	}
	limit := defaultLimit
	if set["limit"] {
		if limit, err = strconv.Atoi(q.Get("limit")); err != nil || limit < 1 {
			return nil, "", fail(exitUsage, "%s: limit=%q: it must be a whole number, at least 1", cmd, q.Get("limit"))
		}
	}
	timeout := defaultTimeout
	if set["timeout"] {
		if timeout, err = time.ParseDuration(q.Get("timeout")); err != nil || timeout <= 0 {
			return nil, "", fail(exitUsage, "%s: timeout=%q is not a positive duration (e.g. 30s, 2m)", cmd, q.Get("timeout"))
		}
	}
	u.RawQuery = ""
	return b.fetch(cmd, u.String(), q, w, limit, timeout)
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
