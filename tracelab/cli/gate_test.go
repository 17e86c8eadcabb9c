package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"tracelab/pkg/otlp"
	"tracelab/pkg/trace"
)

// The cases of issue 25 where tracelab as a CI gate failed open or
// unbounded: each ends with its exit code and one line.

// spansWithoutTraceID parse to no trace at all: the parser drops spans it
// cannot place in a tree.
const spansWithoutTraceID = `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"catalog"}}]},"scopeSpans":[{"spans":[
 {"spanId":"0102030405060708","name":"GET /catalog/summary","kind":2,"startTimeUnixNano":"1000","endTimeUnixNano":"9000"}]}]}]}`

func wantOneLineExit(t *testing.T, what string, code int, out, errOut string, wantCode int, wantMsg string) {
	t.Helper()
	if code != wantCode || !strings.Contains(errOut, wantMsg) {
		t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", what, code, errOut, wantCode, wantMsg)
	}
	if out != "" {
		t.Errorf("%s: stdout %q, want nothing", what, out)
	}
	checkOneLine(t, errOut)
}

func TestAnalyzeFailsClosedOnNoTraces(t *testing.T) {
	for name, content := range map[string]string{
		"spans without a traceId": spansWithoutTraceID,
		"no resourceSpans":        `{"resourceSpans":[]}`,
	} {
		p := writeAnalyzeInput(t, "traces.json", content)
		code, out, errOut := runAnalyzeCaptured(t, "--file", p)
		wantOneLineExit(t, name, code, out, errOut, exitUsage, "no traces in "+p)
	}
	// Backends alike: a 200 whose spans have no traceId.
	jaeger := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"result":` + spansWithoutTraceID + `}`))
	}))
	defer jaeger.Close()
	code, out, errOut := runAnalyzeCaptured(t, "--jaeger", jaeger.URL, "--service", "catalog")
	wantOneLineExit(t, "Jaeger", code, out, errOut, exitUsage, "no traces found for service \"catalog\"")
	tempo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/search" {
			w.Write([]byte(`{"traces":[{"traceID":"2f3e0cee77ae5dc9c17ade3689eb2e54"}]}`))
			return
		}
		w.Write([]byte(strings.Replace(spansWithoutTraceID, "resourceSpans", "batches", 1)))
	}))
	defer tempo.Close()
	code, out, errOut = runAnalyzeCaptured(t, "--tempo", tempo.URL, "--query", "{}")
	wantOneLineExit(t, "Tempo", code, out, errOut, exitUsage, "no traces found for {} in Tempo")
}

// subsetOf writes the traces of src whose request type is request.
func subsetOf(t *testing.T, src, request string) string {
	t.Helper()
	traces, err := otlp.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var keep []*trace.Trace
	for _, tr := range traces {
		if r := tr.Request(); r != nil && tr.Fingerprint(r) == request {
			keep = append(keep, tr)
		}
	}
	if len(keep) == 0 {
		t.Fatalf("no trace of %q in %s", request, src)
	}
	var buf bytes.Buffer
	if err := otlp.Write(&buf, keep); err != nil {
		t.Fatal(err)
	}
	return writeAnalyzeInput(t, "subset.json", buf.String())
}

// The gate fails (non-zero, and not 1, which would read as a regression)
// on a candidate that holds nothing or next to nothing of the baseline,
// instead of passing with every baseline finding "resolved".
func TestCompareGateFailsOnEmptyOrNearEmptyCandidate(t *testing.T) {
	petclinic := filepath.Join("..", "testdata", "corpus", "petclinic-batch-off", "traces.json")
	empty := writeAnalyzeInput(t, "empty.json", `{"resourceSpans":[]}`)
	noIDs := writeAnalyzeInput(t, "no-ids.json", spansWithoutTraceID)
	// 1 of petclinic's 94 traces, a request type the baseline has.
	nearEmpty := subsetOf(t, petclinic, "petclinic GET /owners/find")
	for _, tc := range []struct {
		name, base, cand, want string
	}{
		{"empty candidate", nplus1Baseline, empty, "compare: --candidate: no traces in " + empty},
		{"candidate spans without traceId", nplus1Baseline, noIDs, "compare: --candidate: no traces in " + noIDs},
		{"empty baseline", empty, nplus1Fixed, "compare: --baseline: no traces in " + empty},
		{"near-empty candidate", petclinic, nearEmpty, "compare: the candidate has 1 of the baseline's"},
		{"unrelated service", petclinic, nplus1Fixed, "compare: the candidate has 0 of the baseline's"},
	} {
		for _, format := range []string{"text", "json"} {
			code, out, errOut := runCompareCaptured(t, "--baseline", tc.base, "--candidate", tc.cand, "--format", format)
			if code == exitOK {
				t.Errorf("%s: the gate passed", tc.name)
			}
			wantOneLineExit(t, tc.name, code, out, errOut, exitUsage, tc.want)
		}
	}
	// The baseline against itself passes: the rule refuses coverage, not
	// small sides.
	if code, _, errOut := runCompareCaptured(t, "--baseline", nearEmpty, "--candidate", nearEmpty); code != exitOK {
		t.Errorf("near-empty against itself: exit %d, %s", code, errOut)
	}
}

// slowTempo finds n traces and answers each after delay.
func slowTempo(t *testing.T, n int, delay time.Duration) *httptest.Server {
	trace, err := os.ReadFile(filepath.Join(tempoFixtures, "trace-2f3e0cee77ae5dc9c17ade3689eb2e54.json"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/search" {
			var ids []string
			for i := range n {
				ids = append(ids, fmt.Sprintf(`{"traceID":"%032x"}`, i+1))
			}
			fmt.Fprintf(w, `{"traces":[%s]}`, strings.Join(ids, ","))
			return
		}
		select {
		case <-time.After(delay):
			w.Write(trace)
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// --timeout is the deadline of the whole fetch, not of each request: 20
// traces at 1 s each with --timeout 5s end by 5 s (it took 80 s with 4 s
// traces before).
func TestTimeoutIsTheWholeFetchsDeadline(t *testing.T) {
	srv := slowTempo(t, 20, time.Second)
	t0 := time.Now()
	code, out, errOut := runAnalyzeCaptured(t, "--tempo", srv.URL, "--query", "{}", "--timeout", "5s")
	d := time.Since(t0)
	if d < 4500*time.Millisecond || d > 6*time.Second {
		t.Errorf("took %s with --timeout 5s", d)
	}
	if code != exitRuntime || out != "" || !strings.Contains(errOut, "no answer in time") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 3, no answer in time", code, out, errOut)
	}
	// The progress lines come first; the error is the last line, alone.
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	checkOneLine(t, lines[len(lines)-1]+"\n")
}

// tooManyRequests answers 429 (with Retry-After) the first `refusals`
// requests, then serves as next does; refusals < 0 refuses forever.
func tooManyRequests(t *testing.T, refusals int32, next http.Handler) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if i := n.Add(1); refusals < 0 || i <= refusals {
			w.Header().Set("Retry-After", "0")
			http.Error(w, "rate limited", http.StatusTooManyRequests)
			return
		}
		next.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestTooManyRequestsIsRetried(t *testing.T) {
	body := jaegerBody(t)
	jaeger, tries := tooManyRequests(t, 2, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	code, out, errOut := runAnalyzeCaptured(t, "--jaeger", jaeger.URL, "--service", "catalog")
	if code != exitOK || !strings.Contains(out, "Analyzed 3 traces") || tries.Load() != 3 {
		t.Errorf("Jaeger: exit %d after %d requests, stderr %q", code, tries.Load(), errOut)
	}
	f := &fakeTempo{}
	fake := f.serve(t, "")
	tempo, tries := tooManyRequests(t, 1, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, fake.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	code, out, errOut = runAnalyzeCaptured(t, "--tempo", tempo.URL, "--query", "{}", "--since", "1h")
	if code != exitOK || !strings.Contains(out, "Analyzed 2 traces") {
		t.Errorf("Tempo: exit %d after %d requests, stderr %q", code, tries.Load(), errOut)
	}
}

func TestTooManyRequestsForeverExits3WithinTheDeadline(t *testing.T) {
	never := http.NotFoundHandler()
	for _, args := range [][]string{{"--jaeger", "", "--service", "catalog"}, {"--tempo", "", "--query", "{}"}} {
		srv, tries := tooManyRequests(t, -1, never)
		args[1] = srv.URL
		t0 := time.Now()
		code, out, errOut := runAnalyzeCaptured(t, append(args, "--timeout", "1500ms")...)
		if d := time.Since(t0); d > 2*time.Second {
			t.Errorf("%s: took %s with --timeout 1500ms", args[0], d)
		}
		if tries.Load() < 3 {
			t.Errorf("%s: %d requests; want retries", args[0], tries.Load())
		}
		wantOneLineExit(t, args[0], code, out, errOut, exitRuntime, "answered 429 Too Many Requests: rate limited (tried ")
	}
}

// endless answers a 200 that never ends: the start of a valid document,
// then resources without spans, as fast as the client reads.
func endless(prefix string) http.Handler {
	chunk := []byte(strings.Repeat(`{"resource":{},"scopeSpans":[]},`, 2048))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/search" {
			w.Write([]byte(`{"traces":[{"traceID":"2f3e0cee77ae5dc9c17ade3689eb2e54"}]}`))
			return
		}
		w.Write([]byte(prefix))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
}

// An answer past --max-response-bytes is one line, exit 2, and only the
// limit's worth is ever read (it took 3.9 GiB within 30 s before).
func TestAnswerLargerThanTheLimitExits2WithBoundedMemory(t *testing.T) {
	jaeger := httptest.NewServer(endless(`{"result":{"resourceSpans":[`))
	defer jaeger.Close()
	tempo := httptest.NewServer(endless(`{"batches":[`))
	defer tempo.Close()
	for _, args := range [][]string{
		{"--jaeger", jaeger.URL, "--service", "catalog"},
		{"--tempo", tempo.URL, "--query", "{}"},
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		code, out, errOut := runAnalyzeCaptured(t, append(args, "--max-response-bytes", "4MiB")...)
		runtime.ReadMemStats(&after)
		wantOneLineExit(t, args[0], code, out, errOut, exitUsage, "answered more than 4 MiB, the most one answer may hold")
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 128<<20 {
			t.Errorf("%s: allocated %d MiB for a 4 MiB limit", args[0], alloc>>20)
		}
	}
	code, out, errOut := runAnalyzeCaptured(t, "--jaeger", jaeger.URL, "--service", "s", "--max-response-bytes", "lots")
	wantOneLineExit(t, "bad size", code, out, errOut, exitUsage, `--max-response-bytes: "lots" is not a positive size`)
}

// The same garbage 200 gives the same exit code from both backends: 2, as
// the same bytes in a file do. Trying again later does not mend it; the URL
// most often names something other than the query API.
func TestGarbageAnswerSameExitForEveryBackend(t *testing.T) {
	garbage := "<html><body>Please sign in</body></html>"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(garbage)) }))
	defer srv.Close()
	// Tempo's search is fine, the trace is garbage.
	tempoTrace := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/search" {
			w.Write([]byte(`{"traces":[{"traceID":"2f3e0cee77ae5dc9c17ade3689eb2e54"}]}`))
			return
		}
		w.Write([]byte(garbage))
	}))
	defer tempoTrace.Close()
	file := writeAnalyzeInput(t, "garbage.json", garbage)
	for _, args := range [][]string{
		{"--jaeger", srv.URL, "--service", "catalog"},
		{"--tempo", srv.URL, "--query", "{}"},
		{"--tempo", tempoTrace.URL, "--query", "{}"},
		{"--file", file},
	} {
		code, out, errOut := runAnalyzeCaptured(t, args...)
		want := "cannot read"
		if args[0] == "--file" {
			want = "not OTLP JSON"
		}
		wantOneLineExit(t, strings.Join(args, " "), code, out, errOut, exitUsage, want)
	}
	code, out, errOut := runCompareCaptured(t, "--baseline", nplus1Baseline, "--candidate", "tempo:"+srv.URL+"?query=%7B%7D")
	wantOneLineExit(t, "compare", code, out, errOut, exitUsage, "Tempo at "+srv.URL+"/api/search gave an answer tracelab cannot read")
}

// startupOnly is a trace that serves no request: its root is INTERNAL, as
// an application's start-up is.
const startupOnly = `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"catalog"}}]},"scopeSpans":[{"spans":[
 {"traceId":"5b8efff798038103d269b633813fc60c","spanId":"0102030405060708","name":"startup","kind":1,"startTimeUnixNano":"1000","endTimeUnixNano":"9000"},
 {"traceId":"5b8efff798038103d269b633813fc60c","spanId":"0102030405060709","parentSpanId":"0102030405060708","name":"SELECT catalog","kind":3,"startTimeUnixNano":"2000","endTimeUnixNano":"3000","attributes":[{"key":"db.system","value":{"stringValue":"postgresql"}}]}]}]}]}`

// Sides that hold traces but no request on either side compare nothing:
// the gate refuses (exit 2, one line) instead of printing "verdict: pass".
func TestCompareGateFailsClosedWhenNoRequestIsCompared(t *testing.T) {
	base := writeAnalyzeInput(t, "base.json", startupOnly)
	cand := writeAnalyzeInput(t, "cand.json", startupOnly)
	for _, format := range []string{"text", "json", "sarif"} {
		code, out, errOut := runCompareCaptured(t, "--baseline", base, "--candidate", cand, "--format", format)
		wantOneLineExit(t, "start-up traces only, "+format, code, out, errOut, exitUsage,
			"compare: no request to compare: neither side has a trace whose root is a SERVER or CONSUMER span (the baseline's 1 and the candidate's 1 traces")
	}
}

// manyTracesJaeger answers n traces of one span each, whatever the query
// asks for: a backend that ignores query.num_traces.
func manyTracesJaeger(t *testing.T, n int) *httptest.Server {
	var body bytes.Buffer
	body.WriteString(`{"result":{"resourceSpans":[`)
	for i := range n {
		if i > 0 {
			body.WriteByte(',')
		}
		fmt.Fprintf(&body, `{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"catalog"}}]},"scopeSpans":[{"spans":[{"traceId":"%032x","spanId":"%016x","name":"GET /catalog/summary","kind":2,"startTimeUnixNano":"%d","endTimeUnixNano":"%d"}]}]}`, i+1, i+1, 1000+i, 2000+i)
	}
	body.WriteString(`]}}`)
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(body.Bytes())
	}))
}

// --limit N analyzes at most N traces, however many the backend answers,
// and says on stderr that it left the rest.
func TestLimitLimitsWhatIsAnalyzed(t *testing.T) {
	jaeger := manyTracesJaeger(t, 5000)
	defer jaeger.Close()
	code, out, errOut := runAnalyzeCaptured(t, "--jaeger", jaeger.URL, "--service", "catalog", "--limit", "20", "--format", "json")
	var rep struct{ Traces, Spans int }
	if code != exitOK || json.Unmarshal([]byte(out), &rep) != nil || rep.Traces != 20 || rep.Spans != 20 {
		t.Fatalf("--limit 20 against 5,000 traces: exit %d, %d traces and %d spans analyzed; want 20; stderr %q", code, rep.Traces, rep.Spans, errOut)
	}
	if !strings.Contains(errOut, "more traces answered than the limit of 20; analyzing the first 20, dropped 4980 spans of the others") {
		t.Errorf("stderr %q; want the traces left said", errOut)
	}
	// compare's jaeger: sides alike.
	src := "jaeger:" + jaeger.URL + "?service=catalog&limit=7"
	code, out, errOut = runCompareCaptured(t, "--baseline", src, "--candidate", src, "--format", "json")
	res := compareJSON(t, out)
	if code != exitOK || len(res.Requests) != 1 || res.Requests[0].Baseline.Traces != 7 || res.Requests[0].Candidate.Traces != 7 {
		t.Errorf("compare with limit=7: exit %d, %+v; stderr %q", code, res.Requests, errOut)
	}
}

// brokenTraces holds one of each kind of broken trace, beside a clean one:
// span ids 11-12 a cycle, 21 its own parent, 31 twice with different
// names, a trace id of 16 hex digits, a span id "xyz", span 61 ending
// before it starts and span 71 starting at a negative time.
func brokenTraces() string {
	const tid = "5b8efff798038103d269b633813fc60c"
	span := func(traceID, id, parent, name string, start, end int) string {
		return fmt.Sprintf(`{"traceId":%q,"spanId":%q,"parentSpanId":%q,"name":%q,"kind":2,"startTimeUnixNano":"%d","endTimeUnixNano":"%d"}`, traceID, id, parent, name, start, end)
	}
	tids := func(n int) string { return fmt.Sprintf("%032x", n) }
	spans := []string{
		span(tid, "0000000000000001", "", "GET /ok", 1000, 9000),
		span(tids(1), "0000000000000011", "0000000000000012", "a", 1000, 2000),
		span(tids(1), "0000000000000012", "0000000000000011", "b", 1100, 1900),
		span(tids(2), "0000000000000021", "0000000000000021", "GET /self", 1000, 2000),
		span(tids(3), "0000000000000031", "", "GET /dup", 1000, 2000),
		span(tids(3), "0000000000000031", "", "GET /other", 1000, 2000),
		span("0102030405060708", "0000000000000041", "", "GET /short-trace-id", 1000, 2000),
		span(tids(5), "xyz", "", "GET /bad-span-id", 1000, 2000),
		span(tids(6), "0000000000000061", "", "GET /reversed", 2000, 1000),
		span(tids(7), "0000000000000071", "", "GET /negative", -5, 1000),
	}
	return `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"catalog"}}]},"scopeSpans":[{"spans":[` + strings.Join(spans, ",") + `]}]}]}`
}

// Broken traces are named: a warning line per kind on stderr, the report's
// warnings, and with --strict exit 2 after the report.
func TestBrokenTracesAreNamed(t *testing.T) {
	p := writeAnalyzeInput(t, "broken.json", brokenTraces())
	code, out, errOut := runAnalyzeCaptured(t, "--file", p, "--format", "json")
	var rep struct {
		Warnings []struct {
			Kind           string `json:"kind"`
			Count          int    `json:"count"`
			ExampleTraceID string `json:"example_trace_id"`
		} `json:"warnings"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatalf("exit %d, stderr %q, stdout %.300q", code, errOut, out)
	}
	got := map[string]int{}
	for _, w := range rep.Warnings {
		got[w.Kind] = w.Count
		if w.ExampleTraceID == "" {
			t.Errorf("%s: no example trace", w.Kind)
		}
	}
	want := map[string]int{"parent-cycle": 1, "self-parent": 1, "duplicate-span-id": 1, "bad-trace-id": 1, "bad-span-id": 1, "end-before-start": 1, "negative-time": 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("warnings %v, want %v", got, want)
	}
	for _, line := range []string{
		"tracelab: warning: 1 cycle in parent links, cut at its earliest span (e.g. trace " + fmt.Sprintf("%032x", 1) + ")",
		"tracelab: warning: 1 span ends before it starts (e.g. trace " + fmt.Sprintf("%032x", 6) + ")",
		"tracelab: warning: 1 trace has an id that is not 32 hex digits (e.g. trace 0102030405060708)",
	} {
		if !strings.Contains(errOut, line+"\n") {
			t.Errorf("stderr lacks %q:\n%s", line, errOut)
		}
	}
	if n := strings.Count(errOut, "\n"); n != 7 {
		t.Errorf("%d lines on stderr, want 7 (one per kind):\n%s", n, errOut)
	}

	code, out, errOut = runAnalyzeCaptured(t, "--file", p, "--strict")
	if code != exitUsage || !strings.Contains(out, "Analyzed 8 traces") || !strings.HasSuffix(errOut, "drop --strict\n") {
		t.Errorf("--strict: exit %d, stderr %q, stdout %.100q; want exit 2 after the report", code, errOut, out)
	}
	if code, _, errOut := runAnalyzeCaptured(t, "--file", nplus1Fixed, "--strict"); code != exitOK || errOut != "" {
		t.Errorf("--strict on clean traces: exit %d, stderr %q", code, errOut)
	}
	// compare names each side's, and with --strict exits 2 after the
	// comparison, as analyze does; clean sides pass --strict.
	broken := writeAnalyzeInput(t, "broken-nplus1.json", strings.Replace(readFile(t, nplus1Fixed), `"spanId":"`, `"spanId":"zz`, 1))
	code, _, errOut = runCompareCaptured(t, "--baseline", broken, "--candidate", nplus1Fixed)
	if code != exitOK || !strings.Contains(errOut, "tracelab: warning: --baseline: 1 span has a span or parent id") {
		t.Errorf("compare: exit %d, stderr %q", code, errOut)
	}
	code, out, errOut = runCompareCaptured(t, "--baseline", broken, "--candidate", nplus1Fixed, "--strict")
	if code != exitUsage || !strings.Contains(out, "verdict") || !strings.HasSuffix(errOut, "drop --strict\n") {
		t.Errorf("compare --strict: exit %d, stderr %q, stdout %.100q; want exit 2 after the comparison", code, errOut, out)
	}
	if code, _, errOut := runCompareCaptured(t, "--baseline", nplus1Fixed, "--candidate", nplus1Fixed, "--strict"); code != exitOK || errOut != "" {
		t.Errorf("compare --strict on clean traces: exit %d, stderr %q", code, errOut)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// analyze used as a gate fails closed too: traces that serve no request
// leave nothing analyzed, which is exit 2 with one line, in every format,
// rather than an empty report (an empty SARIF would close every alert).
func TestAnalyzeFailsClosedWhenNoRequestIsAnalyzed(t *testing.T) {
	p := writeAnalyzeInput(t, "startup.json", startupOnly)
	for _, args := range [][]string{{}, {"--format", "json"}, {"--format", "sarif"}, {"--strict"}} {
		code, out, errOut := runAnalyzeCaptured(t, append([]string{"--file", p}, args...)...)
		wantOneLineExit(t, "start-up traces only "+strings.Join(args, " "), code, out, errOut, exitUsage,
			`analyze: no request to analyze: none of the 1 traces read has a root SERVER or CONSUMER span (all are start-up or background work, most of them rooted at "catalog startup")`)
	}
}
