package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tracelab/pkg/compare"
)

// runCompareCaptured runs the command in-process and returns its exit
// code, stdout and stderr.
func runCompareCaptured(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runCaptured(t, &compareOut, runCompare, args...)
}

var (
	nplus1Baseline = filepath.Join("..", "testdata", "corpus", "lab-nplus1-baseline", "traces.json")
	nplus1Fixed    = filepath.Join("..", "testdata", "corpus", "lab-nplus1-fixed", "traces.json")
	// 301 traces a side: enough for a p95 to be judged (nplus1 has 2 or 3).
	chattyBaseline = filepath.Join("..", "testdata", "corpus", "lab-chatty-db-baseline", "traces.json")
	chattyFixed    = filepath.Join("..", "testdata", "corpus", "lab-chatty-db-fixed", "traces.json")
)

func compareJSON(t *testing.T, out string) compare.Result {
	t.Helper()
	var r compare.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	return r
}

func TestCompareFixResolvesNPlusOne(t *testing.T) {
	code, out, errOut := runCompareCaptured(t, "--baseline", nplus1Baseline, "--candidate", nplus1Fixed, "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d, want 0; stderr %q\n%s", code, errOut, out)
	}
	r := compareJSON(t, out)
	if len(r.Resolved) != 1 || r.Resolved[0].Detector != "n-plus-one" || r.Resolved[0].Service != "catalog" {
		t.Errorf("resolved = %+v, want catalog's n-plus-one", r.Resolved)
	}
	if len(r.New) != 0 || !r.Verdict.Pass {
		t.Errorf("new %+v, verdict %+v", r.New, r.Verdict)
	}
	if len(r.Requests) != 1 {
		t.Fatalf("requests = %+v, want catalog GET /catalog/summary only", r.Requests)
	}
	q := r.Requests[0]
	if q.Request != "catalog GET /catalog/summary" || q.Baseline == nil || q.Candidate == nil || q.P95Ratio == nil {
		t.Fatalf("request %+v", q)
	}
	if q.Baseline.Traces != 2 || q.Baseline.CallsPerRequest < 200 || q.Candidate.CallsPerRequest > 5 {
		t.Errorf("sides %+v %+v: want 2 baseline traces, 200+ calls before, a few after", *q.Baseline, *q.Candidate)
	}
	if q.P95Ratio.High >= 1 {
		t.Errorf("p95 ratio %+v: the fix is faster", *q.P95Ratio)
	}

	// The JSON keys the README documents.
	var top map[string]json.RawMessage
	_ = json.Unmarshal([]byte(out), &top)
	for _, k := range []string{"resolved", "new", "persisting", "requests", "verdict"} {
		if _, ok := top[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	for _, k := range []string{`"p50_ms"`, `"p95_ms"`, `"calls_per_request"`, `"db_calls_per_request"`, `"p50_ratio"`, `"low"`, `"high"`, `"detector"`, `"reasons"`} {
		if !strings.Contains(out, k) {
			t.Errorf("JSON lacks %s", k)
		}
	}
}

func TestCompareRegressionFails(t *testing.T) {
	code, out, _ := runCompareCaptured(t, "--baseline", chattyFixed, "--candidate", chattyBaseline, "--format", "json")
	if code != exitFail {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	r := compareJSON(t, out)
	if len(r.New) != 1 || r.New[0].Detector != "chatty-db" || len(r.Resolved) != 0 {
		t.Errorf("new %+v resolved %+v, want the chatty-db new", r.New, r.Resolved)
	}
	if r.Verdict.Pass || len(r.Verdict.Reasons) != 2 {
		t.Errorf("verdict %+v, want a failure for the new finding and the p95", r.Verdict)
	}

	// --fail-on none still fails on the 4× p95; a huge allowance passes.
	if code, _, _ := runCompareCaptured(t, "--baseline", chattyFixed, "--candidate", chattyBaseline, "--fail-on", "none"); code != exitFail {
		t.Errorf("--fail-on none: exit %d, want 1 (p95 regression)", code)
	}
	if code, _, errOut := runCompareCaptured(t, "--baseline", chattyFixed, "--candidate", chattyBaseline, "--fail-on", "none", "--max-p95-regression", "5000%"); code != exitOK {
		t.Errorf("--fail-on none --max-p95-regression 5000%%: exit %d, want 0; %s", code, errOut)
	}
}

func TestCompareText(t *testing.T) {
	code, out, _ := runCompareCaptured(t, "--baseline", nplus1Fixed, "--candidate", nplus1Baseline)
	if code != exitFail {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"verdict: FAIL", "new finding: n-plus-one", "0 resolved, 1 new, 0 persisting", "catalog GET /catalog/summary", "p95", "95% CI"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
}

func TestCompareBadInput(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.json")
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := [][]string{
		{"--baseline", nplus1Baseline, "--candidate", nplus1Fixed, "--bogus"},
		{"--baseline", nplus1Baseline},
		{"--baseline", "-", "--candidate", "-"},
		{"--baseline", missing, "--candidate", nplus1Fixed},
		{"--baseline", nplus1Baseline, "--candidate", bad},
		{"--baseline", nplus1Baseline, "--candidate", nplus1Fixed, "--max-p95-regression", "ten"},
		{"--baseline", nplus1Baseline, "--candidate", nplus1Fixed, "--max-p95-regression", "-5%"},
		{"--baseline", nplus1Baseline, "--candidate", nplus1Fixed, "--fail-on", "worse"},
		{"--baseline", nplus1Baseline, "--candidate", nplus1Fixed, "--format", "yaml"},
		{"--baseline", nplus1Baseline, "--candidate", nplus1Fixed, "extra"},
	}
	for _, args := range cases {
		code, out, errOut := runCompareCaptured(t, args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
		if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "tracelab: compare:") {
			t.Errorf("%v: stderr %q, want one line", args, errOut)
		}
		if out != "" {
			t.Errorf("%v: stdout %q, want nothing", args, out)
		}
	}
}

func TestParsePercent(t *testing.T) {
	for in, want := range map[string]float64{"10%": 0.10, "10": 0.10, "0%": 0, "2.5%": 0.025} {
		if got, err := parsePercent(in); err != nil || got != want {
			t.Errorf("parsePercent(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
}

func TestCompareJaegerSource(t *testing.T) {
	body := jaegerBody(t) // 3 traces of the fixed nplus1 variant
	var got url.Values
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.Query()
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer srv.Close()

	code, out, errOut := runCompareCaptured(t, "--baseline", nplus1Baseline, "--candidate", "jaeger:"+srv.URL+"?service=catalog&limit=5&since=10m", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if got.Get("query.service_name") != "catalog" || got.Get("query.num_traces") != "5" {
		t.Errorf("Jaeger query %v", got)
	}
	r := compareJSON(t, out)
	if len(r.Resolved) != 1 || r.Requests[0].Candidate == nil || r.Requests[0].Candidate.Traces != 3 {
		t.Errorf("resolved %+v, requests %+v", r.Resolved, r.Requests)
	}

	// A Jaeger that does not answer: exit 3, one line.
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	code, _, errOut = runCompareCaptured(t, "--baseline", "jaeger:"+deadURL+"?service=catalog", "--candidate", nplus1Fixed)
	if code != exitRuntime {
		t.Errorf("dead Jaeger: exit %d, want 3; %q", code, errOut)
	}
	checkOneLine(t, errOut)

	for _, src := range []string{
		"jaeger:" + srv.URL, // no service
		"jaeger:" + srv.URL + "?service=catalog&bogus=1",     // unknown parameter
		"jaeger:" + srv.URL + "?service=catalog&limit=0",     // bad limit
		"jaeger:" + srv.URL + "?service=catalog&since=never", // bad window
		"jaeger:localhost:16686?service=catalog",             // not a URL
	} {
		code, _, errOut := runCompareCaptured(t, "--baseline", nplus1Baseline, "--candidate", src)
		if code != exitUsage {
			t.Errorf("%s: exit %d, want 2; %q", src, code, errOut)
		}
		checkOneLine(t, errOut)
	}
}

func TestCompareTempoSource(t *testing.T) {
	fixedNow(t)
	f := &fakeTempo{}
	srv := f.serve(t, "") // two petclinic traces with an N+1
	query := `{ resource.service.name = "petclinic" }`
	src := "tempo:" + srv.URL + "?" + url.Values{"query": {query}, "since": {"1h"}, "limit": {"5"}}.Encode()
	code, out, errOut := runCompareCaptured(t, "--baseline", src, "--candidate", src, "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if f.search.Get("q") != query || f.search.Get("limit") != "5" || len(f.fetched) != 4 {
		t.Errorf("search %v, fetched %v", f.search, f.fetched)
	}
	if r := compareJSON(t, out); len(r.Persisting) == 0 || r.Persisting[0].Service != "petclinic" || len(r.Resolved)+len(r.New) != 0 {
		t.Errorf("persisting %+v, resolved %+v, new %+v: want petclinic's findings on both sides", r.Persisting, r.Resolved, r.New)
	}

	for _, src := range []string{
		"tempo:" + srv.URL, // no query
		"tempo:" + srv.URL + "?query=%7B%7D&service=x",                  // a Jaeger parameter
		"tempo:" + srv.URL + "?query=%7B%7D&start=2026-01-01T00:00:00Z", // start without end
	} {
		code, _, errOut := runCompareCaptured(t, "--baseline", src, "--candidate", nplus1Fixed)
		if code != exitUsage {
			t.Errorf("%s: exit %d, want 2; %q", src, code, errOut)
		}
		checkOneLine(t, errOut)
	}
}

// SARIF keeps compare's exit codes and says which finding is new.
func TestCompareSARIF(t *testing.T) {
	code, out, errOut := runCompareCaptured(t, "--baseline", chattyFixed, "--candidate", chattyBaseline, "--format", "sarif")
	if code != exitFail {
		t.Fatalf("exit %d, want 1; stderr %q", code, errOut)
	}
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Results []struct {
				RuleID        string `json:"ruleId"`
				BaselineState string `json:"baselineState"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil || log.Version != "2.1.0" || len(log.Runs) != 1 {
		t.Fatalf("not a SARIF 2.1.0 log (%v):\n%s", err, out)
	}
	var got []string
	for _, r := range log.Runs[0].Results {
		got = append(got, r.RuleID+":"+r.BaselineState)
	}
	if strings.Join(got, " ") != "chatty-db:new p95-regression:" {
		t.Errorf("results %v, want the new chatty-db and the p95 regression", got)
	}
}
