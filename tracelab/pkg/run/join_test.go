package run

import (
	"testing"

	"tracelab/pkg/load"
	"tracelab/pkg/trace"
)

// A request joins its trace by the trace id of its traceparent; what the
// client waited beyond the root span, from its send, is outside any span.
func TestJoinByTraceID(t *testing.T) {
	root := &trace.Span{TraceID: "aa", SpanID: "01", ParentID: "ff", Name: "GET /x", Kind: trace.KindServer, Service: "svc",
		Start: 1_000_000_000, End: 1_030_000_000} // 30 ms
	traces := []*trace.Trace{trace.New("aa", []*trace.Span{root})}
	records := []load.Record{
		// Due at 100 ms, sent 2 ms late, answered 50 ms after it was due.
		{Name: "a", TraceID: "aa", ScheduledMs: 100, SentMs: 102, LatencyMs: 50, Status: 200},
		// Never reached the service: no trace.
		{Name: "b", TraceID: "bb", ScheduledMs: 110, SentMs: 110, LatencyMs: 5, Error: "connection refused"},
	}
	joined := join(records, traces)
	if got := joined[0]; got.ServerMs == nil || *got.ServerMs != 30 || *got.OutsideMs != 18 {
		t.Errorf("joined %+v; want server 30 ms and 48 - 30 = 18 ms outside", got)
	}
	if joined[1].ServerMs != nil || joined[1].OutsideMs != nil {
		t.Errorf("a request without a trace got server figures: %+v", joined[1])
	}
	m, samples := joinedMetrics(joined)
	if m["joined_requests"] != 1 || m["outside_p50_ms"] != 18 || m["server_p50_ms"] != 30 {
		t.Errorf("metrics %v", m)
	}
	// The client's latencies count every request, the failed one too.
	if m["p50_ms"] != 27.5 || samples["p95_ms"] == nil {
		t.Errorf("client p50 %v; want the median of 50 and 5", m["p50_ms"])
	}
}
