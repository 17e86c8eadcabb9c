package explorer

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tracelab/internal/tracegen"
	"tracelab/pkg/analyze"
	"tracelab/pkg/detect"
	"tracelab/pkg/otlp"
	"tracelab/pkg/result"
	"tracelab/pkg/trace"
)

const items = 20 // price calls of each baseline trace

// labRun writes a run of the nplus1 shape into dir/run: a baseline of
// sequential price calls and a fixed variant with one batch call, each
// analyzed, as a scenario run leaves them.
func labRun(t *testing.T, dir string) {
	t.Helper()
	run := filepath.Join(dir, "nplus1-20261207T000000Z")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	res := result.Result{Scenario: "nplus1", Profile: "smoke", Runtime: "local", StartedAt: time.Now(), Verdict: "pass"}
	for i, variant := range []string{"baseline", "fixed"} {
		var traces []*trace.Trace
		for n := 0; n < 5; n++ {
			traces = append(traces, trace.Group(tracegen.LabTrace(tracegen.LabOptions{Items: items, Batch: variant == "fixed",
				Seed: int64(10*i + n), Start: time.Now().Add(time.Duration(n) * time.Second)}))...)
		}
		f, err := os.Create(filepath.Join(run, variant+"-traces.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := otlp.Write(f, traces); err != nil {
			t.Fatal(err)
		}
		f.Close()
		vr := result.VariantResult{Variant: variant, TracesFile: "/elsewhere/" + variant + "-traces.json",
			Analysis: analyze.Analyze(traces, detect.All())}
		client := 1.5
		vr.Requests = []result.Request{{OutsideMs: &client}}
		vr.Requests[0].TraceID, vr.Requests[0].LatencyMs = traces[0].ID, float64(traces[0].Duration())/1e6+client
		res.Variants = append(res.Variants, vr)
	}
	data, _ := json.Marshal(res)
	if err := os.WriteFile(filepath.Join(run, "result.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func serve(t *testing.T) *httptest.Server {
	t.Helper()
	dir := t.TempDir()
	labRun(t, dir)
	srv := httptest.NewServer(New(Config{Results: dir, Root: filepath.Join("..", "..", "..")}))
	t.Cleanup(srv.Close)
	return srv
}

// get decodes a JSON answer into v and returns its status.
func get(t *testing.T, srv *httptest.Server, path string, v any) int {
	t.Helper()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("%s: %v in %.200s", path, err, body)
		}
	}
	return resp.StatusCode
}

const run = "/api/runs/nplus1-20261207T000000Z"

// The saved run is listed, and found in its folder even though its
// result.json names its traces' files elsewhere (a results folder moved).
func TestRunsAreListedFromTheirFiles(t *testing.T) {
	srv := serve(t)
	var runs []RunSummary
	if code := get(t, srv, "/api/runs", &runs); code != 200 || len(runs) != 1 {
		t.Fatalf("status %d, %d runs", code, len(runs))
	}
	r := runs[0]
	if r.Scenario != "nplus1" || len(r.Variants) != 2 || !r.Variants[0].Traces || len(r.Variants[0].Findings) == 0 {
		t.Errorf("run %+v", r)
	}
}

// The search filters by finding, duration and service; a trace with the
// finding is tagged with it, and the fix's traces are not.
func TestSearchFilters(t *testing.T) {
	srv := serve(t)
	var all, nplus1, slow, none SearchResult
	get(t, srv, run+"/traces", &all)
	get(t, srv, run+"/traces?finding=n-plus-one", &nplus1)
	if all.Total != 10 || nplus1.Total != 5 {
		t.Fatalf("%d traces in all, %d with n-plus-one; want 10 and 5", all.Total, nplus1.Total)
	}
	for _, tr := range nplus1.Traces {
		if tr.Variant != "baseline" || len(tr.Findings) != 1 {
			t.Errorf("trace %s of %s, findings %v", tr.ID, tr.Variant, tr.Findings)
		}
	}
	get(t, srv, run+"/traces?min_ms=200", &slow)
	for _, tr := range slow.Traces {
		if tr.DurationMs < 200 {
			t.Errorf("min_ms=200 listed a %.1f ms trace", tr.DurationMs)
		}
	}
	get(t, srv, run+"/traces?service=nobody", &none)
	if none.Total != 0 || len(all.Services) != 2 || len(all.Findings) == 0 {
		t.Errorf("service=nobody matched %d; services %v, findings %v", none.Total, all.Services, all.Findings)
	}
}

// A trace's view: rows in depth-first order with their subtree sizes; the
// run of price calls folded past the first and last three; the finding on
// each price call; the critical path; the client's wait.
func TestTraceView(t *testing.T) {
	srv := serve(t)
	var found SearchResult
	get(t, srv, run+"/traces?variant=baseline&sort=start", &found)
	var tv TraceView
	id := found.Traces[0].ID
	for _, tr := range found.Traces {
		if tr.ClientMs != nil {
			id = tr.ID
		}
	}
	if code := get(t, srv, run+"/traces/baseline/"+id, &tv); code != 200 {
		t.Fatalf("status %d", code)
	}
	if len(tv.Spans) != 2*items+3 || tv.Spans[0].Parent != -1 || tv.Spans[0].Size != len(tv.Spans) {
		t.Fatalf("%d rows, root %+v", len(tv.Spans), tv.Spans[0])
	}
	for i, s := range tv.Spans[1:] {
		if p := tv.Spans[s.Parent]; s.Parent > i || s.Depth != p.Depth+1 {
			t.Fatalf("row %d: parent %d at depth %d, its own %d", i+1, s.Parent, p.Depth, s.Depth)
		}
	}
	if len(tv.Folds) != 1 || tv.Folds[0].Count != items-6 {
		t.Fatalf("folds %+v; want one of %d calls", tv.Folds, items-6)
	}
	if f := tv.Folds[0]; !strings.Contains(f.Op, "/prices/") || f.To-f.From+1 != 2*(items-6) {
		t.Errorf("the fold %+v does not cover %d calls and their server spans", f, items-6)
	}
	if len(tv.Findings) != 1 || tv.Findings[0].Detector != "n-plus-one" || len(tv.Findings[0].Rows) != items {
		t.Errorf("findings %+v; want n-plus-one on %d rows", tv.Findings, items)
	}
	if len(tv.Critical) == 0 || tv.Client == nil || *tv.Client.OutsideMs != 1.5 {
		t.Errorf("critical path %d sections, client %+v", len(tv.Critical), tv.Client)
	}
	var span SpanDetail
	get(t, srv, run+"/traces/baseline/"+id+"/spans/"+tv.Spans[tv.Findings[0].Rows[0]].ID, &span)
	if span.Kind != "CLIENT" || !strings.Contains(span.Attributes["url.full"], "/prices/") || span.Resource["service.name"] != "catalog" {
		t.Errorf("span details %+v", span)
	}
}

// TraceQL panels select the run's traces with the lab's evaluator.
func TestTraceQLSelectsTheFix(t *testing.T) {
	srv := serve(t)
	var res SearchResult
	get(t, srv, run+`/traceql?q=`+queryEscape(`{ resource.service.name = "catalog" && span.url.full =~ ".*/prices/batch" }`), &res)
	if res.Total != 5 {
		t.Fatalf("%d traces", res.Total)
	}
	for _, tr := range res.Traces {
		if tr.Variant != "fixed" {
			t.Errorf("the batch query selected a %s trace", tr.Variant)
		}
	}
}

// Bad input is one line of JSON with the status that says whose fault.
func TestBadRequestsSayWhy(t *testing.T) {
	srv := serve(t)
	for path, want := range map[string]int{
		"/api/runs/nope/traces":                     404,
		run + "/traces?variant=nope":                404,
		run + "/traces/baseline/0123456789abcdef":   404,
		run + "/traceql?q=" + queryEscape("{ nope"): 400,
		"/api/promql": 400,
		"/api/promql?expr=traces_service_graph_x":     422,
		"/api/promql?expr=up":                         503, // no Prometheus configured
		"/api/dashboards/..%2f..%2fetc%2fpasswd.json": 400,
		"/api/runs/live/traces":                       400,
	} {
		var body map[string]string
		if code := get(t, srv, path, &body); code != want || body["error"] == "" {
			t.Errorf("%s: %d %q; want %d with an error", path, code, body["error"], want)
		}
	}
}

// The page and the dashboards come from the binary and the checkout.
func TestPageAndDashboards(t *testing.T) {
	srv := serve(t)
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), "tracelab explorer") || !strings.Contains(string(page), "app.js") {
		t.Errorf("the page: %.200s", page)
	}
	var ds []DashboardEntry
	get(t, srv, "/api/dashboards", &ds)
	if len(ds) < 6 {
		t.Fatalf("%d dashboards", len(ds))
	}
	var d map[string]any
	if code := get(t, srv, "/api/dashboards/nplus1.json", &d); code != 200 || d["panels"] == nil {
		t.Errorf("nplus1.json: status %d", code)
	}
}

func queryEscape(s string) string { return url.QueryEscape(s) }
