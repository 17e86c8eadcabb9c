package detect_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"tracelab/internal/tracegen"
	"tracelab/pkg/analyze"
	"tracelab/pkg/detect"
	"tracelab/pkg/trace"
)

func chatty(traces []*trace.Trace) []detect.Finding {
	return detect.ChattyDB{}.Detect(traces)
}

// Case study 000's POST: 7 sequential statements of ~14.5 ms each after a
// 4 ms call, one client at a time.
func TestChattyDBCaseStudy(t *testing.T) {
	for _, newSemconv := range []bool{false, true} {
		traces := trace.Group(ordersLoad(ordersOptions{VUs: 1, Loops: 2, Requests: 50, StmtMs: 14.5, NewSemconv: newSemconv, Seed: 7}))
		fs := chatty(traces)
		if len(fs) != 1 {
			t.Fatalf("new semconv %v: want one finding, got %+v", newSemconv, fs)
		}
		f := fs[0]
		if f.Service != "orders" || f.ParentOperation != "POST /orders" || f.Operation != "postgresql orders" {
			t.Errorf("finding = %s / %s / %s", f.Service, f.ParentOperation, f.Operation)
		}
		if f.CallsPerTrace != 7 || f.MaxConcurrency != 1 || f.TracesAffected != 50 {
			t.Errorf("round trips %v, max concurrency %d, traces %d; want 7, 1, 50", f.CallsPerTrace, f.MaxConcurrency, f.TracesAffected)
		}
		// 7 × 14.5 ms of a ~107 ms request: the case's 93% in the wait.
		if f.ShareOfCriticalPath < 0.85 || f.ShareOfCriticalPath > 0.97 || f.ShareOfParent < 0.85 {
			t.Errorf("share of critical path %v, of parent %v", f.ShareOfCriticalPath, f.ShareOfParent)
		}
		ev := f.Evidence
		if ev["round_trips_per_request"] != 7.0 || ev["distinct_statements"] != 6.0 || ev["parallelism_factor"].(float64) > 1.01 {
			t.Errorf("evidence = %v", ev)
		}
		if ms := ev["mean_round_trip_ms"].(float64); ms < 13 || ms > 16 {
			t.Errorf("mean round trip %v ms, want ~14.5", ms)
		}
		if st := ev["example_statements"].([]string); len(st) != 7 || !strings.HasPrefix(st[0], "postgresql SELECT id, name, status FROM customer") {
			t.Errorf("example statements = %q", st)
		}
		if _, ok := ev["repeated_round_trips"]; ok {
			t.Errorf("no N+1 here, yet repeated_round_trips = %v", ev["repeated_round_trips"])
		}
		if !strings.Contains(f.Summary, "7 round trips to postgresql orders per POST /orders") {
			t.Errorf("summary = %q", f.Summary)
		}
	}
}

func TestChattyDBStatementCounts(t *testing.T) {
	cases := []struct {
		name     string
		o        ordersOptions
		found    bool
		perTrace float64
	}{
		{"single round trip (the fix)", ordersOptions{Statements: 1}, false, 0},
		{"two round trips", ordersOptions{Statements: 2}, false, 0},
		{"four: below K", ordersOptions{Statements: 4}, false, 0},
		{"five: K", ordersOptions{Statements: 5}, true, 5},
		{"seven sequential", ordersOptions{Statements: 7}, true, 7},
		{"seven at once", ordersOptions{Statements: 7, Parallel: true}, false, 0},
		// Under load, with the event loop blocked as well: still 7 each.
		{"seven under load", ordersOptions{Statements: 7, VUs: 16, Loops: 2, Blocking: true}, true, 7},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := c.o
			o.VUs, o.Loops, o.Requests, o.Seed = max(o.VUs, 1), max(o.Loops, 2), 40, 8
			fs := chatty(trace.Group(ordersLoad(o)))
			if got := len(fs) == 1; got != c.found {
				t.Fatalf("found = %v, want %v (%+v)", got, c.found, fs)
			}
			if c.found && fs[0].CallsPerTrace != c.perTrace {
				t.Errorf("round trips per request = %v, want %v", fs[0].CallsPerTrace, c.perTrace)
			}
		})
	}
}

// dbTrace builds one request: for each statement a JDBC span, laid out
// back to back, optionally wrapped in an ORM-level span.
func dbTrace(id string, stmts []string, orm bool) *trace.Trace {
	root := &trace.Span{TraceID: id, SpanID: "r", Name: "POST /orders", Kind: trace.KindServer, Service: "orders",
		Attrs: trace.AttrsOf(map[string]string{"http.request.method": "POST", "http.route": "/orders"})}
	spans := []*trace.Span{root}
	at := int64(1_000_000)
	for i, q := range stmts {
		parent := root.SpanID
		if orm {
			o := &trace.Span{TraceID: id, SpanID: fmt.Sprintf("o%d", i), ParentID: root.SpanID, Name: "Session.persist", Kind: trace.KindClient,
				Service: "orders", Start: at, End: at + 2_200_000,
				Attrs: trace.AttrsOf(map[string]string{"db.system": "postgresql", "db.operation": "persist", "db.sql.table": fmt.Sprintf("entity%d", i)})}
			spans = append(spans, o)
			parent = o.SpanID
		}
		spans = append(spans, &trace.Span{TraceID: id, SpanID: fmt.Sprintf("s%d", i), ParentID: parent, Name: "postgresql", Kind: trace.KindClient,
			Service: "orders", Start: at + 100_000, End: at + 2_100_000, Attrs: trace.AttrsOf(map[string]string{"db.system": "postgresql", "db.statement": q})})
		at += 2_500_000
	}
	root.End = at + 1_000_000
	return trace.New(id, spans)
}

// An ORM span over each JDBC statement is the same round trip seen twice:
// 4 statements stay 4, below K.
func TestChattyDBCountsNestedSpansOnce(t *testing.T) {
	stmts := []string{"SELECT 1", "SELECT 2", "INSERT INTO a VALUES (1)", "UPDATE b SET c = 1"}
	if fs := chatty([]*trace.Trace{dbTrace("a", stmts, true)}); len(fs) != 0 {
		t.Errorf("4 statements, each under an ORM span, reported as %+v", fs)
	}
	fs := chatty([]*trace.Trace{dbTrace("b", append(stmts, "DELETE FROM d"), true)})
	if len(fs) != 1 || fs[0].CallsPerTrace != 5 {
		t.Errorf("5 statements under ORM spans: want 5 round trips, got %+v", fs)
	}
}

// A loop of one query is n-plus-one's: chatty-db does not repeat it.
func TestChattyDBLeavesNPlusOneAlone(t *testing.T) {
	traces := trace.Group(tracegen.ORMTrace(3, time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC), 20))
	if fs := chatty(traces); len(fs) != 0 {
		t.Errorf("1 list query + 20 author queries reported as chatty: %+v", fs)
	}
	if fs := nplusone(traces); len(fs) != 1 {
		t.Fatalf("premise: n-plus-one reports the author loop, got %+v", fs)
	}

	// Six distinct statements plus a loop of eight: both detectors speak,
	// each about its own round trips.
	var stmts []string
	for i := 0; i < 6; i++ {
		stmts = append(stmts, fmt.Sprintf("UPDATE t%d SET x = 1", i))
	}
	for i := 0; i < 8; i++ {
		stmts = append(stmts, fmt.Sprintf("SELECT price FROM product WHERE id = %d", 100+i))
	}
	tr := []*trace.Trace{dbTrace("c", stmts, false)}
	fs := chatty(tr)
	if len(fs) != 1 || fs[0].CallsPerTrace != 6 || fs[0].Evidence["repeated_round_trips"] != 8.0 {
		t.Errorf("want 6 chatty round trips and 8 set aside, got %+v", fs)
	}
	if np := nplusone(tr); len(np) != 1 || np[0].CallsPerTrace != 8 {
		t.Errorf("n-plus-one should report the 8 look-ups, got %+v", np)
	}
}

// ordersDetectors are the two detectors the orders scenarios are about;
// other detectors' opinions of these traces are their own tests' business.
func ordersDetectors(fs []detect.Finding) string {
	var ids []string
	for _, f := range fs {
		if f.Detector == "chatty-db" || f.Detector == "event-loop-blocking" {
			ids = append(ids, f.Detector)
		}
	}
	return strings.Join(ids, ",")
}

// Both orders pathologies at once, through the analyzer: each detector
// reports its own, and the request stats count the database round trips.
func TestOrdersBaselineFindsBoth(t *testing.T) {
	traces := trace.Group(ordersLoad(ordersOptions{VUs: 16, Loops: 2, Requests: 300, Blocking: true, Seed: 9}))
	rep := analyze.Analyze(traces, detect.All())
	if ids := ordersDetectors(rep.Findings); ids != "chatty-db,event-loop-blocking" {
		t.Errorf("findings = %s, want chatty-db and event-loop-blocking", ids)
	}
	for _, f := range rep.Findings {
		if ids, _ := f.Evidence["highlight_span_ids"].([]string); f.Detector == "chatty-db" && len(ids) != 7 {
			t.Errorf("chatty-db highlights %d spans of its example, want the 7 round trips", len(ids))
		}
	}
	// Calls: customers, the connection checkout, 7 statements.
	if len(rep.Requests) != 1 || rep.Requests[0].DBCallsPerTrace != 7 || rep.Requests[0].CallsPerTrace != 9 {
		t.Errorf("requests = %+v, want 7 database round trips of 9 calls per trace", rep.Requests)
	}

	fixed := trace.Group(ordersLoad(ordersOptions{VUs: 16, Loops: 2, Requests: 300, Statements: 1, Seed: 9}))
	rep = analyze.Analyze(fixed, detect.All())
	if ids := ordersDetectors(rep.Findings); ids != "" {
		t.Errorf("reactive client and one statement, yet findings %s", ids)
	}
	if rep.Requests[0].DBCallsPerTrace != 1 {
		t.Errorf("db calls per trace = %v, want 1", rep.Requests[0].DBCallsPerTrace)
	}
}
