package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"tracelab/pkg/analyze"
	"tracelab/pkg/backend"
	"tracelab/pkg/detect"
	"tracelab/pkg/jaeger"
	"tracelab/pkg/otlp"
	"tracelab/pkg/sarif"
	"tracelab/pkg/tempo"
)

func init() {
	register("analyze", "analyze OTLP JSON traces from a file, Jaeger or Tempo", runAnalyze)
}

const analyzeUsage = `usage: tracelab analyze --file F|- [--format text|json|sarif]
       tracelab analyze --jaeger URL --service S [--operation O] [WINDOW] [--limit N] [--timeout D] [--format text|json|sarif]
       tracelab analyze --tempo URL --query TRACEQL [WINDOW] [--limit N] [--timeout D] [--format text|json|sarif]

Exactly one source: a file (- for stdin); Jaeger's api/v3 find-traces
(traces with a span of service S, and of operation O if given); or Tempo's
TraceQL search, then each trace it found by id.

WINDOW is --since D (default 15m: the last 15 minutes) or --start T --end T
(RFC3339, e.g. 2026-01-02T15:04:05Z). --limit is the most traces to fetch
(default 20). --timeout bounds each HTTP request (default 30s).

Reads OTLP JSON traces (Jaeger api/v3 {"result":{"resourceSpans":...}},
plain OTLP {"resourceSpans":...} or Tempo {"batches":...}; several
documents may be concatenated) and reports the pathologies found, ranked by
their share of the critical path, and per request type where the time goes.

Exit codes: 2 bad input, including no traces found in the window or a
query the backend rejects (4xx); 3 the backend is not answering (connection
refused, timeout, 5xx).

--format sarif writes SARIF 2.1.0 for CI and code-scanning tools: one rule
per detector id, one result per finding at a logical location (service,
request, operation), level error from half the critical path on.`

const analyzeShortUsage = "usage: tracelab analyze --file F|- | --jaeger URL --service S [--operation O] | --tempo URL --query TRACEQL [--since D | --start T --end T] [--limit N] [--timeout D] [--format text|json|sarif]"

// analyzeOut is where the report goes; tests replace it.
var analyzeOut io.Writer = os.Stdout

// analyzeNow is the clock --since counts back from; tests replace it.
var analyzeNow = time.Now

// What a remote source fetches unless told otherwise, in analyze's flags
// and in compare's jaeger: and tempo: sources.
const (
	defaultSince   = "15m"
	defaultLimit   = 20
	defaultTimeout = 30 * time.Second
)

// Flags of each source; a flag of one source with another is an error.
var (
	fileFlags   = []string{"file"}
	jaegerFlags = []string{"jaeger", "service", "operation"}
	tempoFlags  = []string{"tempo", "query"}
	remoteFlags = []string{"since", "start", "end", "limit", "timeout"}
)

func runAnalyze(args []string) int {
	fs := flag.NewFlagSet("analyze", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported in one line below
	file := fs.String("file", "", "OTLP JSON file to analyze")
	format := fs.String("format", "text", "output format: text, json or sarif")
	sarifMap := fs.String("sarif-map", "", "SARIF: YAML/JSON file mapping each service to its path in the repository")
	jaegerURL := fs.String("jaeger", "", "Jaeger query URL")
	service := fs.String("service", "", "Jaeger: service name")
	operation := fs.String("operation", "", "Jaeger: operation name")
	tempoURL := fs.String("tempo", "", "Tempo query URL")
	traceQL := fs.String("query", "", "Tempo: TraceQL query")
	since := fs.String("since", defaultSince, "window: the last D")
	startS := fs.String("start", "", "window start, RFC3339")
	endS := fs.String("end", "", "window end, RFC3339")
	limit := fs.Int("limit", defaultLimit, "most traces to fetch")
	timeout := fs.String("timeout", defaultTimeout.String(), "timeout of each HTTP request")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(analyzeOut, analyzeUsage)
			return exitOK
		}
		return fail(exitUsage, "analyze: %v; %s", err, analyzeShortUsage)
	}
	if fs.NArg() > 0 {
		return fail(exitUsage, "analyze: unexpected argument %q; %s", fs.Arg(0), analyzeShortUsage)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var sources []string
	for _, s := range []string{"file", "jaeger", "tempo"} {
		if set[s] {
			sources = append(sources, "--"+s)
		}
	}
	switch len(sources) {
	case 0:
		return fail(exitUsage, "analyze: no source; give one of --file F|-, --jaeger URL --service S, or --tempo URL --query TRACEQL")
	case 1:
	default:
		return fail(exitUsage, "analyze: %s are different sources; give exactly one", strings.Join(sources, " and "))
	}
	source := sources[0]
	allowed := map[string]bool{"format": true}
	switch source {
	case "--file":
		for _, n := range fileFlags {
			allowed[n] = true
		}
	case "--jaeger":
		for _, n := range append(jaegerFlags, remoteFlags...) {
			allowed[n] = true
		}
	case "--tempo":
		for _, n := range append(tempoFlags, remoteFlags...) {
			allowed[n] = true
		}
	}
	for _, n := range []string{"file", "jaeger", "service", "operation", "tempo", "query", "since", "start", "end", "limit", "timeout"} {
		if set[n] && !allowed[n] {
			return fail(exitUsage, "analyze: --%s %s; it does not go with %s", n, flagOwner(n), source)
		}
	}
	if *format != "text" && *format != "json" && *format != "sarif" {
		return fail(exitUsage, "analyze: unknown --format %q; use text, json or sarif", *format)
	}
	sarifPaths, err := sarif.LoadPaths(*sarifMap)
	if err != nil {
		return fail(exitUsage, "analyze: --sarif-map %v", err)
	}

	var (
		in   io.Reader
		name string
	)
	switch source {
	case "--file":
		if *file == "" {
			return fail(exitUsage, "analyze: --file is empty: give an OTLP JSON file (Jaeger api/v3, plain OTLP or Tempo), or - for stdin")
		}
		f, code := openTraceFile("analyze", *file)
		if code != exitOK {
			return code
		}
		defer f.Close()
		in, name = f, *file
	default:
		w, code := remoteWindow("analyze", set, *since, *startS, *endS)
		if code != exitOK {
			return code
		}
		if *limit < 1 {
			return fail(exitUsage, "analyze: --limit %d: it must be at least 1", *limit)
		}
		to, err := time.ParseDuration(*timeout)
		if err != nil || to <= 0 {
			return fail(exitUsage, "analyze: --timeout %q is not a positive duration (e.g. 30s, 2m)", *timeout)
		}
		if source == "--jaeger" {
			in, name, code = fetchJaeger("analyze", *jaegerURL, *service, *operation, w, *limit, to)
		} else {
			in, name, code = fetchTempo("analyze", *tempoURL, *traceQL, w, *limit, to)
		}
		if code != exitOK {
			return code
		}
	}

	t0 := time.Now()
	traces, err := otlp.ParseReader(in)
	if err != nil {
		return fail(exitUsage, "analyze: %s: %v", name, err)
	}
	if source != "--file" && len(traces) == 0 {
		return fail(exitUsage, "analyze: no traces found for %s", name)
	}
	if d := time.Since(t0); d > 2*time.Second {
		fmt.Fprintf(os.Stderr, "tracelab: read %d traces from %s in %.1fs; analyzing\n", len(traces), name, d.Seconds())
	}
	detectors := detect.All()
	report := analyze.Analyze(traces, detectors)

	switch *format {
	case "json":
		enc := json.NewEncoder(analyzeOut)
		enc.SetIndent("", "  ")
		err = enc.Encode(report)
	case "sarif":
		err = sarif.Write(analyzeOut, report, sarif.IDs(detectors), sarifPaths)
	default:
		err = analyze.WriteText(analyzeOut, report)
	}
	if err != nil {
		return fail(exitRuntime, "analyze: writing the report: %v", err)
	}
	return exitOK
}

// flagOwner says which source a flag belongs to, for the error message.
func flagOwner(name string) string {
	for _, n := range jaegerFlags {
		if n == name {
			return "is for --jaeger"
		}
	}
	for _, n := range tempoFlags {
		if n == name {
			return "is for --tempo"
		}
	}
	for _, n := range remoteFlags {
		if n == name {
			return "is for --jaeger or --tempo"
		}
	}
	return "is a source of its own"
}

type window struct{ from, to time.Time }

func (w window) String() string {
	return w.from.UTC().Format(time.RFC3339) + " to " + w.to.UTC().Format(time.RFC3339)
}

// remoteWindow reads --since, or --start and --end.
func remoteWindow(cmd string, set map[string]bool, since, start, end string) (window, int) {
	if set["start"] || set["end"] {
		if set["since"] {
			return window{}, fail(exitUsage, "%s: --since and --start/--end both give the window; use one", cmd)
		}
		if !set["start"] || !set["end"] {
			return window{}, fail(exitUsage, "%s: --start and --end go together: give both (RFC3339, e.g. 2026-01-02T15:04:05Z), or --since D", cmd)
		}
		from, err := time.Parse(time.RFC3339, start)
		if err != nil {
			return window{}, fail(exitUsage, "%s: --start %q is not an RFC3339 time (e.g. 2026-01-02T15:04:05Z)", cmd, start)
		}
		to, err := time.Parse(time.RFC3339, end)
		if err != nil {
			return window{}, fail(exitUsage, "%s: --end %q is not an RFC3339 time (e.g. 2026-01-02T15:04:05Z)", cmd, end)
		}
		if !to.After(from) {
			return window{}, fail(exitUsage, "%s: --end %s is not after --start %s", cmd, end, start)
		}
		return window{from, to}, exitOK
	}
	d, err := time.ParseDuration(since)
	if err != nil || d <= 0 {
		return window{}, fail(exitUsage, "%s: --since %q is not a positive duration (e.g. 15m, 2h)", cmd, since)
	}
	now := analyzeNow()
	return window{now.Add(-d), now}, exitOK
}

// backendURL checks a --jaeger or --tempo URL and drops a trailing slash.
func backendURL(cmd, flagName, raw string) (string, int) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
		return "", fail(exitUsage, "%s: --%s %q is not an http(s) URL like http://localhost:16686", cmd, flagName, raw)
	}
	return strings.TrimRight(raw, "/"), exitOK
}

// backendFailure maps a backend error to its exit code: the backend
// refusing the request (4xx) is bad input, no answer or a 5xx is the
// environment.
func backendFailure(cmd string, err error) int {
	if he := (*backend.HTTPError)(nil); errors.As(err, &he) && he.Rejected() {
		return fail(exitUsage, "%s: %v", cmd, err)
	}
	return fail(exitRuntime, "%s: %v", cmd, err)
}

func fetchJaeger(cmd, rawURL, service, operation string, w window, limit int, timeout time.Duration) (io.Reader, string, int) {
	base, code := backendURL(cmd, "jaeger", rawURL)
	if code != exitOK {
		return nil, "", code
	}
	if service == "" {
		return nil, "", fail(exitUsage, "%s: --jaeger needs --service S (the service whose traces to fetch)", cmd)
	}
	c := jaeger.New(base)
	c.HTTP.Timeout = timeout
	name := fmt.Sprintf("service %q", service)
	if operation != "" {
		name += fmt.Sprintf(" operation %q", operation)
	}
	name += fmt.Sprintf(" in Jaeger at %s, %s", base, w)
	t0 := time.Now()
	stop := slowNotice(fmt.Sprintf("fetching up to %d traces of %s", limit, name))
	body, err := c.Find(context.Background(), jaeger.Query{Service: service, Operation: operation, From: w.from, To: w.to, Limit: limit})
	stop()
	if err != nil {
		return nil, "", backendFailure(cmd, err)
	}
	if d := time.Since(t0); d > 2*time.Second {
		fmt.Fprintf(os.Stderr, "tracelab: fetched %.1f MB from Jaeger in %.1fs\n", float64(len(body))/1e6, d.Seconds())
	}
	return bytes.NewReader(body), name, exitOK
}

func fetchTempo(cmd, rawURL, traceQL string, w window, limit int, timeout time.Duration) (io.Reader, string, int) {
	base, code := backendURL(cmd, "tempo", rawURL)
	if code != exitOK {
		return nil, "", code
	}
	if strings.TrimSpace(traceQL) == "" {
		return nil, "", fail(exitUsage, "%s: --tempo needs --query TRACEQL, e.g. --query '{ resource.service.name = \"catalog\" }'", cmd)
	}
	c := tempo.New(base)
	c.HTTP.Timeout = timeout
	name := fmt.Sprintf("%s in Tempo at %s, %s", traceQL, base, w)
	ctx := context.Background()
	stop := slowNotice("searching " + name)
	found, err := c.Search(ctx, traceQL, w.from, w.to, limit)
	stop()
	if err != nil {
		return nil, "", backendFailure(cmd, err)
	}
	if len(found) == 0 {
		return nil, "", fail(exitUsage, "%s: no traces found for %s", cmd, name)
	}
	ids := make([]string, len(found))
	for i, t := range found {
		ids[i] = t.TraceID
	}
	// At most a line a second, and a last one if any was printed.
	last, printed := time.Now(), false
	progress := func(done, total int) {
		if time.Since(last) < time.Second && !(printed && done == total) {
			return
		}
		fmt.Fprintf(os.Stderr, "tracelab: fetched %d/%d traces from Tempo\n", done, total)
		last, printed = time.Now(), true
	}
	docs, missing, err := c.Traces(ctx, ids, progress)
	if err != nil {
		return nil, "", backendFailure(cmd, err)
	}
	if missing > 0 {
		fmt.Fprintf(os.Stderr, "tracelab: Tempo no longer holds %d of the %d traces its search found; analyzing the rest\n", missing, len(ids))
	}
	if len(docs) == 0 {
		return nil, "", fail(exitUsage, "%s: no traces found for %s", cmd, name)
	}
	return bytes.NewReader(bytes.Join(docs, []byte("\n"))), name, exitOK
}

// slowNotice prints msg on stderr if the call it wraps takes over 2 s;
// call the returned func when it ends.
func slowNotice(msg string) (stop func()) {
	t := time.AfterFunc(2*time.Second, func() { fmt.Fprintf(os.Stderr, "tracelab: %s…\n", msg) })
	return func() { t.Stop() }
}

// unwrapPathError drops the "open <path>:" prefix the message already has.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
