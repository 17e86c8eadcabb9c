package run

import (
	"tracelab/pkg/bootstrap"
	"tracelab/pkg/load"
	"tracelab/pkg/result"
	"tracelab/pkg/trace"
)

// join pairs each request the load sent with its trace, by the trace id
// of its traceparent: the client's latency beside the server's root span.
// What lies between them, outside any span, is where a request waited
// that no trace shows: a full accept backlog, a busy event loop, the
// network (docs/results.md, "outside spans").
func join(records []load.Record, traces []*trace.Trace) []result.Request {
	byID := make(map[string]*trace.Trace, len(traces))
	for _, t := range traces {
		byID[t.ID] = t
	}
	out := make([]result.Request, len(records))
	for i, rec := range records {
		rq := result.Request{Record: rec}
		if t := byID[rec.TraceID]; t != nil && t.Root != nil {
			sent := rec.LatencyMs - rec.WaitMs() // the latency from the send
			server := float64(t.Root.Duration()) / 1e6
			rq.ServerMs = &server
			// A server span may end a little after the client has its
			// answer (the agent ends it once the response is written; up to
			// 13 ms later was seen here under load): no time outside, then.
			outside := max(0, sent-server)
			rq.OutsideMs = &outside
		}
		out[i] = rq
	}
	return out
}

// joinedMetrics are the client-side samples the judge resamples for
// latency ratios, and the server's and the outside time beside them.
func joinedMetrics(requests []result.Request) (map[string]float64, map[string]bootstrap.Sample) {
	var client, server, outside []float64
	for _, rq := range requests {
		client = append(client, rq.LatencyMs)
		if rq.ServerMs != nil {
			server = append(server, *rq.ServerMs)
			outside = append(outside, *rq.OutsideMs)
		}
	}
	samples := map[string]bootstrap.Sample{}
	metrics := map[string]float64{"joined_requests": float64(len(server))}
	add := func(name string, values []float64) {
		if len(values) == 0 {
			return
		}
		for suffix, s := range map[string]bootstrap.Sample{
			"p50_ms": bootstrap.NewQuantile(values, 0.50), "p95_ms": bootstrap.NewQuantile(values, 0.95), "mean_ms": bootstrap.MeanOf(values)} {
			samples[name+suffix] = s
			metrics[name+suffix] = s.Estimate()
		}
	}
	add("", client)
	add("server_", server)
	add("outside_", outside)
	return metrics, samples
}
