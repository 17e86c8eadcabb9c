package detect_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"tracelab/internal/tracegen"
	"tracelab/pkg/detect"
	"tracelab/pkg/trace"
)

func nplusone(traces []*trace.Trace) []detect.Finding {
	return detect.NPlusOne{}.Detect(traces)
}

func find(fs []detect.Finding, op string) (detect.Finding, bool) {
	for _, f := range fs {
		if f.Operation == op {
			return f, true
		}
	}
	return detect.Finding{}, false
}

func TestRegistry(t *testing.T) {
	d, ok := detect.ByID("n-plus-one")
	if !ok || d.ID() != "n-plus-one" {
		t.Fatalf("n-plus-one is not registered")
	}
	found := false
	for _, d := range detect.All() {
		found = found || d.ID() == "n-plus-one"
	}
	if !found {
		t.Error("All() lacks n-plus-one")
	}
}

// HotROD: driver's sequential Redis loop is an N+1; frontend's fan-out to
// route through a worker pool of 3 is not.
func TestNPlusOneHotROD(t *testing.T) {
	traces := loadFixture(t, "hotrod-dispatch.jaeger.json")
	if len(traces) != 2 {
		t.Fatalf("%d traces, want 2", len(traces))
	}
	fs := nplusone(traces)
	if len(fs) != 1 {
		t.Fatalf("want exactly the GetDriver finding, got %d: %+v", len(fs), fs)
	}
	f := fs[0]
	if f.Service != "driver" || f.ParentOperation != "driver.DriverService/FindNearest" || f.Operation != "redis-manual GetDriver" {
		t.Errorf("finding = %s / %s / %s", f.Service, f.ParentOperation, f.Operation)
	}
	if f.CallsPerTrace != 12 || f.MaxConcurrency != 1 || f.TracesAffected != 2 {
		t.Errorf("calls %v, max concurrency %d, traces %d; want 12, 1, 2", f.CallsPerTrace, f.MaxConcurrency, f.TracesAffected)
	}
	if f.ShareOfParent < 0.8 || f.ShareOfCriticalPath < 0.1 || f.ShareOfCriticalPath > 0.5 {
		t.Errorf("share of parent %v, of critical path %v", f.ShareOfParent, f.ShareOfCriticalPath)
	}
	if id := f.Evidence["example_trace_id"]; id != traces[0].ID && id != traces[1].ID {
		t.Errorf("example_trace_id = %v", id)
	}
	if f.Evidence["callee_service"] != "redis-manual" {
		t.Errorf("callee_service = %v", f.Evidence["callee_service"])
	}
	// The fan-out is there, repeated enough, but in parallel: not reported.
	const route = "GET 0.0.0.0:8083/route?dropoff&pickup"
	for _, tr := range traces {
		var calls []*trace.Span
		for _, c := range tr.Children(tr.Root) {
			if tr.Operation(c) == route {
				calls = append(calls, c)
			}
		}
		if m := trace.MaxConcurrency(trace.Intervals(calls)); len(calls) != 10 || m != 3 {
			t.Errorf("trace %s: %d route calls, max concurrency %d; want 10 through a pool of 3", tr.ID, len(calls), m)
		}
	}
	if _, ok := find(fs, route); ok {
		t.Error("the parallel route fan-out was reported as an N+1")
	}
}

// Django/Rails: the author query repeated with different literals merges
// into one fingerprint.
func TestNPlusOneORM(t *testing.T) {
	fs := nplusone(loadFixture(t, "django-nplus1.otlp.json"))
	want := `postgresql SELECT "books_author"."id", "books_author"."name" FROM "books_author" WHERE "books_author"."id" = ? LIMIT ?`
	f, ok := find(fs, want)
	if !ok || len(fs) != 1 {
		t.Fatalf("want one finding for %s, got %+v", want, fs)
	}
	if f.Service != "books" || f.ParentOperation != "GET /books/" || f.CallsPerTrace != 10 || f.MaxConcurrency != 1 {
		t.Errorf("finding = %+v", f)
	}
	if f.Evidence["call_type"] != "db" {
		t.Errorf("call_type = %v", f.Evidence["call_type"])
	}
}

func TestNPlusOneIgnoresFewRepeats(t *testing.T) {
	if fs := nplusone(loadFixture(t, "few-calls.tempo.json")); len(fs) != 0 {
		t.Errorf("4 and 3 repeats are below the threshold, got %+v", fs)
	}
}

// The lab's own case study 003: 1,600 sequential price calls of ~12 ms.
func TestNPlusOneLabSequential(t *testing.T) {
	spans := tracegen.LabTrace(tracegen.LabOptions{Items: 1600, Seed: 1})
	// Through the wire format and back, as in `tracelab analyze`.
	traces := throughTheWire(t, spans)
	fs := nplusone(traces)
	if len(fs) != 1 {
		t.Fatalf("want one finding, got %+v", fs)
	}
	f := fs[0]
	if f.Service != "catalog" || f.ParentOperation != "GET /catalog/summary" || f.Operation != "GET 127.0.0.1:18081/prices/{id}" {
		t.Errorf("finding = %s / %s / %s", f.Service, f.ParentOperation, f.Operation)
	}
	if f.CallsPerTrace != 1600 || f.MaxConcurrency != 1 || f.TracesAffected != 1 {
		t.Errorf("calls %v, max concurrency %d, traces %d", f.CallsPerTrace, f.MaxConcurrency, f.TracesAffected)
	}
	if f.ShareOfCriticalPath < 0.9 || f.ShareOfParent < 0.9 {
		t.Errorf("share of critical path %v, of parent %v; want >= 0.9", f.ShareOfCriticalPath, f.ShareOfParent)
	}
	if !strings.Contains(f.Summary, "1600 times") || !strings.Contains(f.Summary, "critical path") {
		t.Errorf("summary = %q", f.Summary)
	}
	if f.Evidence["example_trace_id"] != traces[0].ID {
		t.Errorf("example_trace_id = %v, want %s", f.Evidence["example_trace_id"], traces[0].ID)
	}
}

func TestNPlusOneLabBatchIsClean(t *testing.T) {
	traces := trace.Group(tracegen.LabTrace(tracegen.LabOptions{Items: 1600, Batch: true, Seed: 1}))
	if fs := nplusone(traces); len(fs) != 0 {
		t.Errorf("the batch fix still reports %+v", fs)
	}
}

// callsTrace builds one parent with n calls to the same endpoint, laid out
// by start(i) and a fixed duration.
func callsTrace(id string, n int, dur int64, start func(i int) int64) *trace.Trace {
	root := &trace.Span{TraceID: id, SpanID: "r", Name: "GET /x", Kind: trace.KindServer, Service: "svc",
		Attrs: trace.AttrsOf(map[string]string{"http.request.method": "GET", "http.route": "/x"})}
	spans := []*trace.Span{root}
	for i := 0; i < n; i++ {
		s := start(i)
		spans = append(spans, &trace.Span{TraceID: id, SpanID: fmt.Sprintf("c%d", i), ParentID: "r", Name: "GET", Kind: trace.KindClient,
			Service: "svc", Start: s, End: s + dur,
			Attrs: trace.AttrsOf(map[string]string{"http.request.method": "GET", "url.full": fmt.Sprintf("http://dep:9/things/%d", 100+i)})})
		root.End = max(root.End, s+dur+5)
	}
	return trace.New(id, spans)
}

func TestNPlusOneThresholds(t *testing.T) {
	back2back := func(i int) int64 { return int64(i) * 10 }
	cases := []struct {
		name  string
		tr    *trace.Trace
		found bool
	}{
		{"4 sequential calls: below N", callsTrace("a", 4, 10, back2back), false},
		{"5 sequential calls: N", callsTrace("b", 5, 10, back2back), true},
		// Each call overlaps the next by 1 of its 10 units: factor ~1.1.
		{"slight overlap still counts as one at a time", callsTrace("c", 10, 11, back2back), true},
		{"pool of 2", callsTrace("d", 20, 10, func(i int) int64 { return int64(i/2) * 10 }), false},
		{"all at once", callsTrace("e", 20, 10, func(int) int64 { return 0 }), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := nplusone([]*trace.Trace{c.tr})
			if got := len(fs) == 1; got != c.found {
				t.Errorf("found = %v, want %v (%+v)", got, c.found, fs)
			}
		})
	}
}

func TestNPlusOneAggregatesAcrossTraces(t *testing.T) {
	var spans []*trace.Span
	for i, items := range []int{100, 200, 300} {
		spans = append(spans, tracegen.LabTrace(tracegen.LabOptions{Items: items, Seed: int64(i + 1),
			Start: time.Date(2025, 1, 1, 0, 0, i, 0, time.UTC)})...)
	}
	spans = append(spans, tracegen.LabTrace(tracegen.LabOptions{Items: 300, Batch: true, Seed: 9})...)
	traces := trace.Group(spans)
	fs := nplusone(traces)
	if len(fs) != 1 {
		t.Fatalf("want one finding across traces, got %d", len(fs))
	}
	f := fs[0]
	if f.TracesAffected != 3 || f.CallsPerTrace != 200 {
		t.Errorf("traces %d, calls per trace %v; want 3, 200", f.TracesAffected, f.CallsPerTrace)
	}
	// The 300-call request has the largest share, so it is the example.
	var want string
	for _, tr := range traces {
		if len(tr.Spans) == 1+2*301 {
			want = tr.ID
		}
	}
	if f.Evidence["example_trace_id"] != want {
		t.Errorf("example_trace_id = %v, want %s", f.Evidence["example_trace_id"], want)
	}
}

func TestSortRanksByShareOfCriticalPath(t *testing.T) {
	fs := []detect.Finding{
		{Detector: "n-plus-one", Operation: "a", ShareOfCriticalPath: 0.2},
		{Detector: "n-plus-one", Operation: "b", ShareOfCriticalPath: 0.9},
		{Detector: "chatty-db", Operation: "c", ShareOfCriticalPath: 0.5},
	}
	detect.Sort(fs)
	if fs[0].Operation != "b" || fs[1].Operation != "c" || fs[2].Operation != "a" {
		t.Errorf("order = %s %s %s", fs[0].Operation, fs[1].Operation, fs[2].Operation)
	}
}
