package analyze

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"tracelab/internal/tracegen"
	"tracelab/pkg/detect"
	"tracelab/pkg/trace"
)

func labTraces() []*trace.Trace {
	var spans []*trace.Span
	for i := 0; i < 3; i++ {
		spans = append(spans, tracegen.LabTrace(tracegen.LabOptions{Items: 200, Seed: int64(i + 1), Start: time.Unix(1700000000+int64(i), 0)})...)
	}
	spans = append(spans, tracegen.ORMTrace(7, time.Unix(1700000100, 0), 20)...)
	return trace.Group(spans)
}

func TestAnalyzeJSONShape(t *testing.T) {
	rep := Analyze(labTraces(), detect.All())
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	if len(top) != 6 || top["traces"] == nil || top["spans"] == nil || top["findings"] == nil || top["requests"] == nil || top["background"] == nil || top["warnings"] == nil {
		t.Fatalf("top-level keys = %v, want traces, spans, findings, requests, background, warnings", keys(top))
	}
	if string(top["traces"]) != "4" || string(top["spans"]) != "1231" {
		t.Errorf("traces = %s, spans = %s; want 4, 1231", top["traces"], top["spans"])
	}
	var findings []map[string]any
	if err := json.Unmarshal(top["findings"], &findings); err != nil || len(findings) != 2 {
		t.Fatalf("findings = %s (%v)", top["findings"], err)
	}
	for _, k := range []string{"detector", "service", "parent_operation", "operation", "calls_per_trace", "max_concurrency",
		"share_of_parent", "share_of_critical_path", "traces_affected", "summary", "evidence", "request"} {
		if _, ok := findings[0][k]; !ok {
			t.Errorf("finding lacks %q: %v", k, findings[0])
		}
	}
	// Ranked by share of the critical path: the price loop (~95%) before
	// the ORM loop.
	if findings[0]["service"] != "catalog" || findings[1]["service"] != "books" {
		t.Errorf("ranking = %v then %v", findings[0]["service"], findings[1]["service"])
	}
}

func TestAnalyzeEmptyIsNotNull(t *testing.T) {
	b, err := json.Marshal(Analyze(nil, detect.All()))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"traces":0,"spans":0,"findings":[],"requests":[],"background":[],"warnings":[]}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	// A clean request: findings stay an empty list.
	rep := Analyze(trace.Group(tracegen.LabTrace(tracegen.LabOptions{Items: 50, Batch: true, Seed: 1})), detect.All())
	b, _ = json.Marshal(rep)
	if !strings.Contains(string(b), `"findings":[]`) {
		t.Errorf("findings not [] in %s", b)
	}
}

func TestRequestStats(t *testing.T) {
	rep := Analyze(labTraces(), detect.All())
	if len(rep.Requests) != 2 {
		t.Fatalf("%d request types, want 2", len(rep.Requests))
	}
	rq := rep.Requests[0] // three catalog requests come before one books request
	if rq.Request != "catalog GET /catalog/summary" || rq.Traces != 3 {
		t.Fatalf("first request = %q x%d", rq.Request, rq.Traces)
	}
	// root + (items + 1 list call) x (client + server)
	if rq.SpansPerTrace != 1+2*201 || rq.CallsPerTrace != 201 {
		t.Errorf("spans/trace %v, calls/trace %v; want 403, 201", rq.SpansPerTrace, rq.CallsPerTrace)
	}
	if rq.MeanDurationMs < 2500 || rq.MeanDurationMs > 3200 {
		t.Errorf("mean duration %v ms", rq.MeanDurationMs)
	}
	var total float64
	for _, seg := range rq.CriticalPath {
		total += seg.Share
	}
	// Every operation fits in the top ten here, so the shares add up.
	if math.Abs(total-1) > 0.001 {
		t.Errorf("critical path shares add up to %v, want 1: %+v", total, rq.CriticalPath)
	}
	top := rq.CriticalPath[0]
	if top.Service != "pricing" || top.Operation != "GET /prices/{id}" || top.Share < 0.7 {
		t.Errorf("top segment = %+v, want pricing's price handler", top)
	}
	for i := 1; i < len(rq.CriticalPath); i++ {
		if rq.CriticalPath[i].MeanMs > rq.CriticalPath[i-1].MeanMs {
			t.Errorf("critical path not sorted: %+v", rq.CriticalPath)
		}
	}
}

func TestCriticalPathBreakdownIsCapped(t *testing.T) {
	// HotROD has more than ten distinct operations on its path.
	var spans []*trace.Span
	spans = append(spans, tracegen.HotRODTrace(1, time.Unix(1700000000, 0))...)
	rep := Analyze(trace.Group(spans), nil)
	if n := len(rep.Requests[0].CriticalPath); n != MaxPathSegments {
		t.Errorf("%d segments, want %d", n, MaxPathSegments)
	}
	if len(rep.Findings) != 0 {
		t.Errorf("no detectors, yet findings %+v", rep.Findings)
	}
}

func TestWriteText(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteText(&buf, Analyze(labTraces(), detect.All())); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"Analyzed 4 traces, 1,231 spans.",
		"Findings (2), most costly first:",
		"1. n-plus-one:",
		"operation  GET 127.0.0.1:18081/prices/{id}",
		"200 calls per trace, max concurrency 1",
		"catalog GET /catalog/summary",
		"critical path (mean per trace):",
		"pricing GET /prices/{id}",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	buf.Reset()
	if err := WriteText(&buf, Analyze(nil, nil)); err != nil || !strings.Contains(buf.String(), "Findings: none.") {
		t.Errorf("empty report: %q, %v", buf.String(), err)
	}
}

func keys(m map[string]json.RawMessage) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

func TestRequestStatsCountsDBCalls(t *testing.T) {
	rep := Analyze(labTraces(), nil)
	got := map[string]RequestStats{}
	for _, rq := range rep.Requests {
		got[rq.Request] = rq
	}
	// One list query and one author query per book, all to PostgreSQL;
	// the catalog request calls only HTTP.
	if rq := got["books GET /books/"]; rq.DBCallsPerTrace != 21 || rq.CallsPerTrace != 21 {
		t.Errorf("books: %v db calls of %v calls per trace, want 21 of 21", rq.DBCallsPerTrace, rq.CallsPerTrace)
	}
	if rq := got["catalog GET /catalog/summary"]; rq.DBCallsPerTrace != 0 || rq.CallsPerTrace != 201 {
		t.Errorf("catalog: %v db calls of %v calls per trace, want 0 of 201", rq.DBCallsPerTrace, rq.CallsPerTrace)
	}
	// A cache read and a pool checkout are calls, but not database round
	// trips.
	spans := tracegen.ORMTrace(8, time.Unix(1700000200, 0), 5)
	spans = append(spans, &trace.Span{TraceID: spans[0].TraceID, SpanID: "cafe0000000000ff", ParentID: spans[0].SpanID, Kind: trace.KindClient,
		Service: "books", Name: "GET", Start: spans[0].Start, End: spans[0].Start + 1000,
		Attrs: trace.AttrsOf(map[string]string{"db.system": "redis", "db.statement": "GET author:12"})},
		&trace.Span{TraceID: spans[0].TraceID, SpanID: "cafe0000000000fe", ParentID: spans[0].SpanID, Kind: trace.KindInternal,
			Service: "books", Name: "DataSource.getConnection", Start: spans[0].Start, End: spans[0].Start + 1000,
			Attrs: trace.AttrsOf(map[string]string{"db.system": "postgresql", "code.function": "getConnection"})})
	rq := Analyze(trace.Group(spans), nil).Requests[0]
	if rq.DBCallsPerTrace != 6 || rq.CallsPerTrace != 8 {
		t.Errorf("with a cache read and a checkout: %v db calls of %v calls, want 6 of 8", rq.DBCallsPerTrace, rq.CallsPerTrace)
	}
	b, _ := json.Marshal(rq)
	if !strings.Contains(string(b), `"db_calls_per_trace":6`) {
		t.Errorf("JSON lacks db_calls_per_trace: %s", b)
	}
}

// A trace with no SERVER or CONSUMER root (an application's start-up) is
// background: counted apart, never a request type, never a finding, even
// when it runs a dozen different statements one after another.
func TestBackgroundTracesAreReportedApart(t *testing.T) {
	startup := []*trace.Span{{TraceID: "b", SpanID: "r", Name: "DataSourceInitializer.runScripts", Kind: trace.KindInternal,
		Service: "clinic", Start: 0, End: 20e6, Attrs: trace.AttrsOf(map[string]string{})}}
	for i := 0; i < 12; i++ {
		startup = append(startup, &trace.Span{TraceID: "b", SpanID: fmt.Sprintf("s%d", i), ParentID: "r", Name: "INSERT",
			Kind: trace.KindClient, Service: "clinic", Start: int64(i) * 1e6, End: int64(i)*1e6 + 9e5,
			Attrs: trace.AttrsOf(map[string]string{"db.system": "h2", "db.statement": fmt.Sprintf("INSERT INTO t%d VALUES (1)", i)})})
	}
	spans := append(startup, tracegen.LabTrace(tracegen.LabOptions{Items: 50, Batch: true, Seed: 1})...)
	rep := Analyze(trace.Group(spans), detect.All())
	if len(rep.Findings) != 0 {
		t.Errorf("findings on a start-up trace: %+v", rep.Findings)
	}
	if len(rep.Requests) != 1 || rep.Requests[0].Request != "catalog GET /catalog/summary" {
		t.Errorf("requests = %+v, want only the catalog request", rep.Requests)
	}
	if len(rep.Background) != 1 || rep.Background[0].Root != "clinic DataSourceInitializer.runScripts" || rep.Background[0].Traces != 1 || rep.Background[0].Spans != 13 {
		t.Errorf("background = %+v", rep.Background)
	}
	if rep.Traces != 2 {
		t.Errorf("traces = %d, want 2 (background ones count)", rep.Traces)
	}
}

// Broken spans are counted per kind over every trace, with an example, and
// a finding whose example trace is broken says how broken it is.
func TestAnalyzeReportsBrokenTraces(t *testing.T) {
	spans := tracegen.LabTrace(tracegen.LabOptions{Items: 50, Seed: 1, Start: time.Unix(1700000000, 0)})
	// Two price calls end before they start, and one names itself as its
	// parent.
	var calls []*trace.Span
	for _, s := range spans {
		if s.Kind == trace.KindClient {
			calls = append(calls, s)
		}
	}
	calls[3].End = calls[3].Start - 1
	calls[4].End = calls[4].Start - 1
	calls[5].ParentID = calls[5].SpanID
	traces := trace.Group(spans)
	rep := Analyze(traces, detect.All())
	id := traces[0].ID
	want := []Warning{{"self-parent", 1, id}, {"end-before-start", 2, id}}
	if !reflect.DeepEqual(rep.Warnings, want) {
		t.Errorf("warnings %+v, want %+v", rep.Warnings, want)
	}
	if got := rep.Warnings[1].Message(); got != "2 spans end before they start" {
		t.Errorf("message %q", got)
	}
	if got := rep.Warnings[0].Message(); got != "1 span is its own parent" {
		t.Errorf("message %q", got)
	}
	if len(rep.Findings) == 0 {
		t.Fatal("no finding")
	}
	for _, f := range rep.Findings {
		if f.Evidence["trace_warnings"] != 3 {
			t.Errorf("%s: evidence %v; want trace_warnings 3", f.Detector, f.Evidence)
		}
	}
	if err := reportSchema(t).Validate(reportJSON(t, rep)); err != nil {
		t.Errorf("a report with warnings does not validate: %v", err)
	}
	// The same traces unbroken: no warning, no trace_warnings.
	clean := Analyze(trace.Group(tracegen.LabTrace(tracegen.LabOptions{Items: 50, Seed: 1, Start: time.Unix(1700000000, 0)})), detect.All())
	if len(clean.Warnings) != 0 || len(clean.Findings) == 0 || clean.Findings[0].Evidence["trace_warnings"] != nil {
		t.Errorf("clean: warnings %v, findings %v", clean.Warnings, clean.Findings)
	}
}

// The schema's warning kinds are trace.BrokenKinds.
func TestReportSchemaWarningKinds(t *testing.T) {
	var doc struct {
		Defs struct {
			Warning struct {
				Properties struct {
					Kind struct {
						Enum []string `json:"enum"`
					} `json:"kind"`
				} `json:"properties"`
			} `json:"warning"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(ReportSchema, &doc); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, k := range trace.BrokenKinds {
		kinds = append(kinds, k.Name)
	}
	if !reflect.DeepEqual(doc.Defs.Warning.Properties.Kind.Enum, kinds) {
		t.Errorf("report.schema.json's warning kinds are %v; trace.BrokenKinds are %v", doc.Defs.Warning.Properties.Kind.Enum, kinds)
	}
}
