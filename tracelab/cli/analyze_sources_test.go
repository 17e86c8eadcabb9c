package cli

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// jaegerRecorded is a real answer of the lab's Jaeger: the traces the
// scenario runner fetched from /api/v3/traces in `make scenario-nplus1`
// (variant fixed, .state/results/nplus1-20261123T123201Z/fixed-traces.json),
// with the recording machine's host name and paths removed by
// `tracelab convert --redact`. The runner stores Jaeger's body re-encoded by otlp.Write
// (plain {"resourceSpans":…}, as `analyze --file` reads it) and no raw body
// is kept on disk, so the fake Jaeger below puts back only the api/v3
// wrapper {"result":…} around it. 3 traces of catalog GET /catalog/summary.
const jaegerRecorded = "nplus1-fixed.runner.otlp.json"

func jaegerBody(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(analyzeFixtures, jaegerRecorded))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(`{"result":` + strings.TrimSpace(string(b)) + `}`)
}

// fixedNow pins --since windows.
func fixedNow(t *testing.T) time.Time {
	now := time.Date(2026, 11, 23, 12, 40, 0, 0, time.UTC)
	prev := analyzeNow
	analyzeNow = func() time.Time { return now }
	t.Cleanup(func() { analyzeNow = prev })
	return now
}

func checkOneLine(t *testing.T, errOut string) {
	t.Helper()
	errOut = withoutSlowNotice(errOut)
	if !strings.HasPrefix(errOut, "tracelab: ") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("stderr should be one line, got %q", errOut)
	}
	if strings.Contains(errOut, "goroutine ") || strings.Contains(errOut, "panic") {
		t.Errorf("stderr has a stack trace: %q", errOut)
	}
}

// withoutSlowNotice drops the line a fetch prints once it has taken 2 s
// ("tracelab: fetching up to 20 traces of …"): progress, not part of the
// answer, and on a busy machine even a refused answer can take that long.
func withoutSlowNotice(errOut string) string {
	lines := strings.SplitAfter(errOut, "\n")
	kept := lines[:0]
	for _, l := range lines {
		if !(strings.HasPrefix(l, "tracelab: fetching ") && strings.HasSuffix(strings.TrimSuffix(l, "\n"), "…")) {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "")
}

func TestAnalyzeJaegerQueryAndHappyPath(t *testing.T) {
	now := fixedNow(t)
	body := jaegerBody(t)
	var got url.Values
	var path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, got = r.URL.Path, r.URL.Query()
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer srv.Close()

	code, out, errOut := runAnalyzeCaptured(t, "--jaeger", srv.URL+"/", "--service", "catalog", "--operation", "GET /catalog/summary", "--since", "10m", "--limit", "5")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, "Analyzed 3 traces, 15 spans.") || !strings.Contains(out, "catalog GET /catalog/summary") {
		t.Errorf("report:\n%s", out)
	}
	if path != "/api/v3/traces" {
		t.Errorf("path %q", path)
	}
	want := map[string]string{
		"query.service_name":   "catalog",
		"query.operation_name": "GET /catalog/summary",
		"query.start_time_min": now.Add(-10 * time.Minute).Format(time.RFC3339Nano),
		"query.start_time_max": now.Format(time.RFC3339Nano),
		"query.num_traces":     "5",
		"query.raw_traces":     "true",
	}
	for k, v := range want {
		if got.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, got.Get(k), v)
		}
	}

	// Defaults: the last 15 minutes, 20 traces, no operation; --start/--end as given.
	code, _, errOut = runAnalyzeCaptured(t, "--jaeger", srv.URL, "--service", "catalog")
	if code != exitOK || got.Get("query.num_traces") != "20" || got.Get("query.start_time_min") != now.Add(-15*time.Minute).Format(time.RFC3339Nano) || got.Has("query.operation_name") {
		t.Errorf("defaults: exit %d (%q), query %v", code, errOut, got)
	}
	code, _, errOut = runAnalyzeCaptured(t, "--jaeger", srv.URL, "--service", "catalog", "--start", "2026-11-23T12:32:01Z", "--end", "2026-11-23T13:33:01+01:00")
	if code != exitOK || got.Get("query.start_time_min") != "2026-11-23T12:32:01Z" || got.Get("query.start_time_max") != "2026-11-23T12:33:01Z" {
		t.Errorf("--start/--end: exit %d (%q), query %v", code, errOut, got)
	}
}

func TestAnalyzeJaegerFailures(t *testing.T) {
	notFound := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Jaeger v2's answer when nothing matches.
		http.Error(w, `{"error":{"httpCode":404,"message":"No traces found"}}`, http.StatusNotFound)
	}))
	defer notFound.Close()
	serverError := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"httpCode":500,"message":"cannot query storage:\nbadger closed"}}`, http.StatusInternalServerError)
	}))
	defer serverError.Close()
	badRequest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"httpCode":400,"message":"malformed parameter query.num_traces"}}`, http.StatusBadRequest)
	}))
	defer badRequest.Close()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + ln.Addr().String()
	ln.Close()

	for _, tc := range []struct {
		name, url string
		code      int
		want      string
	}{
		{"404 is no traces", notFound.URL, exitUsage, "no traces found for service \"catalog\" in Jaeger at " + notFound.URL},
		{"500", serverError.URL, exitRuntime, "Jaeger at " + serverError.URL + "/api/v3/traces answered 500 Internal Server Error: cannot query storage: badger closed"},
		{"400", badRequest.URL, exitUsage, "malformed parameter query.num_traces"},
		{"closed port", closed, exitRuntime, "Jaeger is not answering at " + closed + ": "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runAnalyzeCaptured(t, "--jaeger", tc.url, "--service", "catalog")
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errOut, tc.code, tc.want)
			}
			if out != "" {
				t.Errorf("stdout %q", out)
			}
			checkOneLine(t, errOut)
		})
	}
}

// hangingServer accepts requests and never answers until the test ends.
func hangingServer(t *testing.T) *httptest.Server {
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-done:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv
}

func TestAnalyzeBackendTimeout(t *testing.T) {
	srv := hangingServer(t)
	for _, args := range [][]string{
		{"--jaeger", srv.URL, "--service", "catalog", "--timeout", "200ms"},
		{"--tempo", srv.URL, "--query", "{}", "--timeout", "200ms"},
	} {
		t0 := time.Now()
		code, _, errOut := runAnalyzeCaptured(t, args...)
		if d := time.Since(t0); d > 5*time.Second {
			t.Errorf("%v took %s", args, d)
		}
		if code != exitRuntime || !strings.Contains(errOut, "is not answering at "+srv.URL) || !strings.Contains(errOut, "no answer in time") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
		checkOneLine(t, errOut)
	}
}

// tempoFixtures are hand-written after Tempo's documented answers; see
// testdata/tempo/README.md.
const tempoFixtures = "../testdata/tempo"

// fakeTempo answers /api/search with search (the fixture when empty) and
// /api/traces/<id> with the fixture of that id.
type fakeTempo struct {
	mu      sync.Mutex
	search  url.Values
	fetched []string
}

func (f *fakeTempo) serve(t *testing.T, searchBody string) *httptest.Server {
	t.Helper()
	if searchBody == "" {
		b, err := os.ReadFile(filepath.Join(tempoFixtures, "search.json"))
		if err != nil {
			t.Fatal(err)
		}
		searchBody = string(b)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		switch {
		case r.URL.Path == "/api/search":
			f.search = r.URL.Query()
			w.Write([]byte(searchBody))
		case strings.HasPrefix(r.URL.Path, "/api/traces/"):
			id := strings.TrimPrefix(r.URL.Path, "/api/traces/")
			f.fetched = append(f.fetched, id)
			b, err := os.ReadFile(filepath.Join(tempoFixtures, "trace-"+filepath.Base(id)+".json"))
			if err != nil {
				http.Error(w, "trace not found", http.StatusNotFound)
				return
			}
			w.Write(b)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestAnalyzeTempoSearchThenByID(t *testing.T) {
	now := fixedNow(t)
	f := &fakeTempo{}
	srv := f.serve(t, "")
	query := `{ resource.service.name = "petclinic" && span.db.system = "postgresql" }`
	code, out, errOut := runAnalyzeCaptured(t, "--tempo", srv.URL, "--query", query, "--since", "1h", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, `"traces": 2`) || !strings.Contains(out, `"detector": "n-plus-one"`) {
		t.Errorf("report:\n%s", out)
	}
	if got := f.search.Get("q"); got != query {
		t.Errorf("q = %q", got)
	}
	start, end := strconv.FormatInt(now.Add(-time.Hour).Unix(), 10), strconv.FormatInt(now.Unix(), 10)
	if f.search.Get("start") != start || f.search.Get("end") != end || f.search.Get("limit") != "20" {
		t.Errorf("search query %v (now %d)", f.search, now.Unix())
	}
	if strings.Join(f.fetched, " ") != "2f3e0cee77ae5dc9c17ade3689eb2e54 4a9c1d0e5b7f3a2c8e6d4b1a0f9e8d7c" {
		t.Errorf("fetched %v", f.fetched)
	}
}

func TestAnalyzeTempoLimit(t *testing.T) {
	fixedNow(t)
	f := &fakeTempo{}
	// Tempo may answer more than limit (it stops per block); only limit are fetched.
	srv := f.serve(t, "")
	code, out, errOut := runAnalyzeCaptured(t, "--tempo", srv.URL, "--query", "{}", "--limit", "1", "--start", "2023-05-22T17:58:00Z", "--end", "2023-05-22T17:59:00.5Z")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if f.search.Get("limit") != "1" || f.search.Get("start") != "1684778280" || f.search.Get("end") != "1684778341" {
		t.Errorf("search query %v", f.search)
	}
	if len(f.fetched) != 1 || !strings.Contains(out, "Analyzed 1 traces") {
		t.Errorf("fetched %v, report:\n%s", f.fetched, out)
	}
}

func TestAnalyzeTempoFailures(t *testing.T) {
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Tempo's answer to malformed TraceQL: 400 with the parse error as text.
		http.Error(w, "invalid TraceQL query: parse error at line 1, col 3: syntax error: unexpected IDENTIFIER", http.StatusBadRequest)
	}))
	defer bad.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream connect error", http.StatusBadGateway)
	}))
	defer down.Close()
	empty := (&fakeTempo{}).serve(t, `{"traces":[],"metrics":{"inspectedBytes":"0"}}`)
	gone := (&fakeTempo{}).serve(t, `{"traces":[{"traceID":"0000000000000000000000000000dead","rootServiceName":"petclinic"}]}`)

	for _, tc := range []struct {
		name, url string
		code      int
		want      string
	}{
		{"400 malformed TraceQL", bad.URL, exitUsage, "Tempo at " + bad.URL + "/api/search answered 400 Bad Request: invalid TraceQL query: parse error at line 1, col 3: syntax error: unexpected IDENTIFIER"},
		{"502", down.URL, exitRuntime, "Tempo at " + down.URL + "/api/search answered 502 Bad Gateway: upstream connect error"},
		{"empty search", empty.URL, exitUsage, "no traces found for { foo } in Tempo at " + empty.URL},
		{"found but gone", gone.URL, exitUsage, "no traces found for { foo } in Tempo at " + gone.URL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runAnalyzeCaptured(t, "--tempo", tc.url, "--query", "{ foo }")
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errOut, tc.code, tc.want)
			}
			if out != "" {
				t.Errorf("stdout %q", out)
			}
			if tc.name != "found but gone" {
				checkOneLine(t, errOut)
			}
		})
	}
}

func TestAnalyzeSourceFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "no source"},
		{[]string{"--format", "json"}, "no source"},
		{[]string{"--file", "x.json", "--jaeger", "http://j"}, "--file and --jaeger are different sources"},
		{[]string{"--jaeger", "http://j", "--tempo", "http://t"}, "--jaeger and --tempo are different sources"},
		{[]string{"--jaeger", "http://j", "--service", "s", "--query", "{}"}, "--query is for --tempo; it does not go with --jaeger"},
		{[]string{"--tempo", "http://t", "--query", "{}", "--service", "s"}, "--service is for --jaeger; it does not go with --tempo"},
		{[]string{"--file", "x.json", "--since", "5m"}, "--since is for --jaeger or --tempo; it does not go with --file"},
		{[]string{"--jaeger", "http://j"}, "--jaeger needs --service"},
		{[]string{"--tempo", "http://t"}, "--tempo needs --query"},
		{[]string{"--jaeger", "localhost:16686", "--service", "s"}, "is not an http(s) URL"},
		{[]string{"--jaeger", "http://j", "--service", "s", "--since", "fortnight"}, `--since "fortnight" is not a positive duration`},
		{[]string{"--jaeger", "http://j", "--service", "s", "--since", "-5m"}, "is not a positive duration"},
		{[]string{"--jaeger", "http://j", "--service", "s", "--start", "2026-01-02T03:04:05Z"}, "--start and --end go together"},
		{[]string{"--jaeger", "http://j", "--service", "s", "--end", "2026-01-02T03:04:05Z"}, "--start and --end go together"},
		{[]string{"--jaeger", "http://j", "--service", "s", "--start", "yesterday", "--end", "2026-01-02T03:04:05Z"}, `--start "yesterday" is not an RFC3339 time`},
		{[]string{"--jaeger", "http://j", "--service", "s", "--start", "2026-01-02T03:04:05Z", "--end", "2026-01-02 04:00"}, "--end \"2026-01-02 04:00\" is not an RFC3339 time"},
		{[]string{"--jaeger", "http://j", "--service", "s", "--start", "2026-01-02T03:04:05Z", "--end", "2026-01-02T03:00:00Z"}, "is not after --start"},
		{[]string{"--tempo", "http://t", "--query", "{}", "--since", "5m", "--start", "2026-01-02T03:04:05Z", "--end", "2026-01-02T04:04:05Z"}, "use one"},
		{[]string{"--tempo", "http://t", "--query", "{}", "--limit", "0"}, `--limit "0": it must be a whole number, at least 1`},
		{[]string{"--tempo", "http://t", "--query", "{}", "--timeout", "0s"}, "--timeout \"0s\" is not a positive duration"},
	} {
		code, out, errOut := runAnalyzeCaptured(t, tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) || out != "" {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", tc.args, code, errOut, tc.want)
		}
		checkOneLine(t, errOut)
	}
}
