package detect_test

import (
	"fmt"
	"strings"
	"testing"

	"tracelab/pkg/detect"
	"tracelab/pkg/trace"
)

// loopTrace builds one GET /owners/{ownerId} request of 100 ms whose
// controller repeats a unit n times: a repository span of 10 ms wrapping
// a 2 ms JDBC statement made by stmt(i), with attrs(i) added to it.
func loopTrace(id string, n int, stmt func(i int) string, attrs func(i int) map[string]string) *trace.Trace {
	ms := func(x float64) int64 { return int64(x * 1e6) }
	srv := &trace.Span{TraceID: id, SpanID: "s", Name: "GET /owners/{ownerId}", Kind: trace.KindServer, Service: "shop",
		Start: 0, End: ms(100), Attrs: trace.AttrsOf(map[string]string{"http.request.method": "GET", "http.route": "/owners/{ownerId}"})}
	ctl := &trace.Span{TraceID: id, SpanID: "c", ParentID: "s", Name: "OwnerController.show", Kind: trace.KindInternal,
		Service: "shop", Start: ms(1), End: ms(99), Attrs: trace.AttrsOf(map[string]string{})}
	spans := []*trace.Span{srv, ctl}
	for i := 0; i < n; i++ {
		at := ms(5 + 11*float64(i))
		repo := &trace.Span{TraceID: id, SpanID: fmt.Sprintf("r%d", i), ParentID: "c", Name: "VisitRepository.findByPetId",
			Kind: trace.KindInternal, Service: "shop", Start: at, End: at + ms(10), Attrs: trace.AttrsOf(map[string]string{})}
		a := map[string]string{"db.system": "postgresql", "db.statement": stmt(i)}
		for k, v := range attrs(i) {
			a[k] = v
		}
		jdbc := &trace.Span{TraceID: id, SpanID: fmt.Sprintf("j%d", i), ParentID: repo.SpanID, Name: "SELECT visits",
			Kind: trace.KindClient, Service: "shop", Start: at + ms(4), End: at + ms(6), Attrs: trace.AttrsOf(a)}
		spans = append(spans, repo, jdbc)
	}
	return trace.New(id, spans)
}

func noAttrs(int) map[string]string { return nil }

// The repeated unit is the repository span, and what the loop costs the
// request is the repository spans' time (8 x 10 ms of 100 ms), not the
// JDBC spans' alone (8 x 2 ms).
func TestNPlusOneWrappedUnitsCostTheirSubtree(t *testing.T) {
	tr := loopTrace("t1", 8, func(i int) string { return fmt.Sprintf("SELECT * FROM visits WHERE pet_id = %d", i) }, noAttrs)
	fs := nplusone([]*trace.Trace{tr})
	if len(fs) != 1 {
		t.Fatalf("want one finding, got %+v", fs)
	}
	f := fs[0]
	if f.CallsPerTrace != 8 || f.Request != "GET /owners/{ownerId}" || !strings.Contains(f.Operation, "FROM visits") {
		t.Errorf("calls %v, request %q, operation %q", f.CallsPerTrace, f.Request, f.Operation)
	}
	if f.ShareOfCriticalPath < 0.79 || f.ShareOfCriticalPath > 0.81 {
		t.Errorf("share of the critical path = %v, want 0.8 (the repository spans' time)", f.ShareOfCriticalPath)
	}
	if f.Evidence["unit"] != "VisitRepository.findByPetId" || f.Evidence["parameter_values"] != "distinct" {
		t.Errorf("unit %v, parameter values %v", f.Evidence["unit"], f.Evidence["parameter_values"])
	}
	if ids, _ := f.Evidence["highlight_span_ids"].([]string); len(ids) != 8 || ids[0] != "r0" {
		t.Errorf("highlight_span_ids = %v, want the 8 repository spans", f.Evidence["highlight_span_ids"])
	}
}

// What the repetitions were called with decides between n-plus-one and
// redundant-call; reads whose values nobody recorded are
// n-plus-one-or-redundant's, writes stay n-plus-one's.
func TestRepetitionValuesDecideTheDetector(t *testing.T) {
	same := func(int) string { return "SELECT id, name FROM types ORDER BY name" }
	placeholder := func(int) string { return "SELECT * FROM visits WHERE pet_id = ?" }
	cases := []struct {
		name              string
		stmt              func(int) string
		attrs             func(int) map[string]string
		nplus1, redundant bool
		undecided         bool
		values            string
	}{
		{"a statement without parameters, re-run", same, noAttrs, false, true, false, ""},
		{"placeholders, values not recorded", placeholder, noAttrs, false, false, true, ""},
		{"a write with placeholders, values not recorded", func(int) string { return "UPDATE visits SET seen = true WHERE pet_id = ?" },
			noAttrs, true, false, false, "not recorded"},
		{"placeholders, the same value recorded", placeholder, func(int) map[string]string {
			return map[string]string{"db.query.parameter.0": "7"}
		}, false, true, false, ""},
		{"placeholders, distinct values recorded", placeholder, func(i int) map[string]string {
			return map[string]string{"db.query.parameter.0": fmt.Sprint(i)}
		}, true, false, false, "distinct"},
		{"the same write, re-run", func(int) string { return "UPDATE counters SET n = n + 1" }, noAttrs, true, false, false, "identical"},
	}
	for _, c := range cases {
		tr := []*trace.Trace{loopTrace("t", 7, c.stmt, c.attrs)}
		np := nplusone(tr)
		rc := detect.RedundantCall{}.Detect(tr)
		un := detect.NPlusOneOrRedundant{}.Detect(tr)
		if (len(np) == 1) != c.nplus1 || (len(rc) == 1) != c.redundant || (len(un) == 1) != c.undecided {
			t.Errorf("%s: n-plus-one %d, redundant-call %d, n-plus-one-or-redundant %d findings; want %v, %v, %v",
				c.name, len(np), len(rc), len(un), c.nplus1, c.redundant, c.undecided)
			continue
		}
		if c.nplus1 && np[0].Evidence["parameter_values"] != c.values {
			t.Errorf("%s: parameter_values %v, want %s", c.name, np[0].Evidence["parameter_values"], c.values)
		}
		if c.redundant && (rc[0].CallsPerTrace != 7 || rc[0].ShareOfCriticalPath < 0.69 || rc[0].ShareOfCriticalPath > 0.71) {
			t.Errorf("%s: redundant calls %v, share %v; want 7 and the repository spans' 0.7", c.name, rc[0].CallsPerTrace, rc[0].ShareOfCriticalPath)
		}
	}
}

// Fewer than RedundantMinCalls identical reads are no finding.
func TestRedundantCallThreshold(t *testing.T) {
	same := func(int) string { return "SELECT id, name FROM types ORDER BY name" }
	if fs := (detect.RedundantCall{}).Detect([]*trace.Trace{loopTrace("t", detect.RedundantMinCalls-1, same, noAttrs)}); len(fs) != 0 {
		t.Errorf("%d reads: want no finding, got %s", detect.RedundantMinCalls-1, fs[0].Summary)
	}
	if fs := (detect.RedundantCall{}).Detect([]*trace.Trace{loopTrace("t", detect.RedundantMinCalls, same, noAttrs)}); len(fs) != 1 {
		t.Errorf("%d reads: want one finding, got %d", detect.RedundantMinCalls, len(fs))
	}
}

// A read whose span is the only one of its service in the trace (a client
// traced as a service of its own) has no request span in that service:
// it is still judged, named with its service.
func TestRedundantCallOfAServiceWithoutARequestSpan(t *testing.T) {
	srv := &trace.Span{TraceID: "t", SpanID: "s", Name: "GET /", Kind: trace.KindServer, Service: "front", Start: 0, End: 100e6,
		Attrs: trace.AttrsOf(map[string]string{"http.request.method": "GET", "http.route": "/"})}
	spans := []*trace.Span{srv}
	for i := 0; i < 4; i++ {
		spans = append(spans, &trace.Span{TraceID: "t", SpanID: fmt.Sprintf("c%d", i), ParentID: "s", Name: "GET", Kind: trace.KindClient,
			Service: "front-http-client", Start: int64(i+1) * 10e6, End: int64(i+1)*10e6 + 5e6,
			Attrs: trace.AttrsOf(map[string]string{"http.request.method": "GET", "url.full": "http://config:8080/flags"})})
	}
	fs := detect.RedundantCall{}.Detect([]*trace.Trace{trace.New("t", spans)})
	if len(fs) != 1 || fs[0].Operation != "front-http-client GET config:8080/flags" || fs[0].Request != "GET /" {
		t.Fatalf("got %+v", fs)
	}
}
