package detect

import (
	"fmt"
	"math"

	"tracelab/pkg/trace"
)

func init() { Register(NPlusOne{}) }

// The n-plus-one thresholds. Both are about the shape of the calls, never
// about milliseconds: how much a finding matters is expressed by ranking
// on share of the critical path, not by a cut-off.
const (
	// NPlusOneMinCalls is how many calls with the same fingerprint one parent
	// must make. 5 is what all three reference tools use:
	//   - Sentry N+1 DB queries: option performance.issues.n_plus_one_db.count_threshold,
	//     default 5 (getsentry/sentry src/sentry/options/defaults.py; docs.sentry.io
	//     .../performance-issues/n-one-queries/: "usually five spans");
	//   - Digma "Suspected N+1": "at least 5 select queries on a relationship"
	//     (docs.digma.ai/digma-developer-guide/digma-features/insights/suspected-n+1);
	//   - perf-sentinel: DetectionConfig.n_plus_one_threshold, default 5
	//     (robintra/perf-sentinel crates/sentinel-core/src/config.rs).
	NPlusOneMinCalls = 5

	// NPlusOneMaxParallelism is the largest parallelism factor
	// (sum of durations / union of intervals) at which the calls still count
	// as made one at a time. The references use zero tolerance: Sentry's N+1
	// DB detector wants "sequential, non-overlapping" spans, its consecutive
	// HTTP detector starts over as soon as a span begins before the previous
	// one ended (_overlaps_last_span in detectors/consecutive_http_detector.py),
	// and perf-sentinel's serialized-calls detector requires end <= next start
	// (detect/serialized.rs). Real traces need a little slack: clocks of
	// client and server differ, and asynchronous clients often end a span a
	// moment after the next request was sent. 1.2 allows an average overlap
	// of a fifth of the calls' time, while the smallest real pool (2
	// workers) already gives about 2, so sequential and parallel stay apart.
	NPlusOneMaxParallelism = 1.2
)

// Deliberately absent, unlike the references:
//   - a total-duration floor: Sentry N+1 DB needs the repeated spans to take
//     >= 50 ms together (performance.issues.n_plus_one_db.duration_threshold,
//     default 50.0, src/sentry/options/defaults.py; its docs say 50 ms).
//   - a per-call floor: Sentry's consecutive HTTP detector only considers
//     calls longer than 500 ms (performance.issues.consecutive_http.span_duration_threshold,
//     default 500) and wants 2 s saved (min_time_saved_threshold, 2000). The
//     lab's own case, 1,600 calls of 12 ms, would never reach it.
//   - the concurrent frontend pattern: Sentry's N+1 API calls detector flags
//     >= 10 GET calls that start within 5 ms of each other (count 10,
//     concurrency_threshold 5 ms, get_detection_settings in
//     src/sentry/utils/performance_issues/performance_detection.py). Calls
//     already made in parallel do not add up on the critical path, so a
//     fan-out is not reported here.

// NPlusOne finds a parent span that makes the same outgoing call (HTTP, RPC,
// database or cache; see trace.IsCall) at least NPlusOneMinCalls times, one
// call at a time: the loop that should have been one batch request, one
// JOIN, or at least concurrent calls.
type NPlusOne struct{}

// ID implements Detector.
func (NPlusOne) ID() string { return "n-plus-one" }

// nplusOneKey identifies one finding across traces.
type nplusOneKey struct {
	service string // the parent's service: the code with the loop
	parent  string // trace.Operation of the parent span
	call    string // the repeated call, see callLabel
}

// nplusOneTrace sums one key's occurrences within one trace (the same
// parent operation may run more than once per request).
type nplusOneTrace struct {
	calls      []*trace.Span
	union      int64 // time covered by the calls
	callTime   int64 // summed call durations
	parentTime int64 // summed parent durations
	maxConc    int
	parentID   string
	callType   trace.CallType
	callee     string
}

// nplusOneAgg sums one key across traces.
type nplusOneAgg struct {
	traces                       int
	calls                        int
	callTime                     int64
	maxConc                      int
	shareParent, shareCP, factor float64
	example                      *trace.Trace
	exampleParent                string
	exampleShare                 float64
	callType                     trace.CallType
	callee                       string
}

// Detect implements Detector.
func (d NPlusOne) Detect(traces []*trace.Trace) []Finding {
	aggs := map[nplusOneKey]*nplusOneAgg{}
	for _, t := range traces {
		for k, o := range repeatedSequentialCalls(t) {
			a := aggs[k]
			if a == nil {
				a = &nplusOneAgg{}
				aggs[k] = a
			}
			share := 0.0
			if dur := t.Duration(); dur > 0 {
				share = float64(t.CriticalTimeUnder(o.calls)) / float64(dur)
			}
			a.traces++
			a.calls += len(o.calls)
			a.callTime += o.callTime
			a.maxConc = max(a.maxConc, o.maxConc)
			a.shareCP += share
			if o.parentTime > 0 {
				a.shareParent += math.Min(1, float64(o.union)/float64(o.parentTime))
			}
			if o.union > 0 {
				a.factor += float64(o.callTime) / float64(o.union)
			} else {
				a.factor++
			}
			if a.example == nil || share > a.exampleShare || share == a.exampleShare && t.ID < a.example.ID {
				a.example, a.exampleShare, a.exampleParent = t, share, o.parentID
			}
			a.callType, a.callee = o.callType, o.callee
		}
	}

	findings := make([]Finding, 0, len(aggs))
	for k, a := range aggs {
		n := float64(a.traces)
		f := Finding{
			Detector:            d.ID(),
			Service:             k.service,
			ParentOperation:     k.parent,
			Operation:           k.call,
			CallsPerTrace:       round(float64(a.calls)/n, 2),
			MaxConcurrency:      a.maxConc,
			ShareOfParent:       round(a.shareParent/n, 4),
			ShareOfCriticalPath: round(a.shareCP/n, 4),
			TracesAffected:      a.traces,
			Evidence: map[string]any{
				"example_trace_id":       a.example.ID,
				"example_parent_span_id": a.exampleParent,
				"request":                a.example.Fingerprint(a.example.Root),
				"call_type":              string(a.callType),
				"mean_call_ms":           round(float64(a.callTime)/float64(a.calls)/1e6, 3),
				"parallelism_factor":     round(a.factor/n, 3),
			},
		}
		if a.callee != "" {
			f.Evidence["callee_service"] = a.callee
		}
		f.Summary = fmt.Sprintf("%s calls %s %s times per %s, one call at a time (%.1f ms each on average); these calls are %.0f%% of the request's critical path. Fetch them in one batch request, or at least concurrently.",
			k.service, k.call, count(f.CallsPerTrace), k.parent, f.Evidence["mean_call_ms"], 100*f.ShareOfCriticalPath)
		findings = append(findings, f)
	}
	Sort(findings)
	return findings
}

// repeatedSequentialCalls returns, for one trace, every group of at least
// NPlusOneMinCalls same-fingerprint calls under one parent that ran one at
// a time, keyed and summed per finding.
func repeatedSequentialCalls(t *trace.Trace) map[nplusOneKey]*nplusOneTrace {
	var out map[nplusOneKey]*nplusOneTrace
	for _, p := range t.Spans {
		kids := t.Children(p)
		if len(kids) < NPlusOneMinCalls {
			continue
		}
		type callKey struct{ service, op string } // the call's fingerprint
		groups := map[callKey][]*trace.Span{}
		for _, c := range kids {
			if trace.IsCall(c) {
				k := callKey{c.Service, t.Operation(c)}
				groups[k] = append(groups[k], c)
			}
		}
		for _, calls := range groups {
			if len(calls) < NPlusOneMinCalls {
				continue
			}
			iv := trace.Intervals(calls)
			factor := trace.ParallelismFactor(iv)
			if factor > NPlusOneMaxParallelism {
				continue // a fan-out: the calls overlap, their cost does not add up
			}
			k := nplusOneKey{service: p.Service, parent: t.Operation(p), call: callLabel(t, p, calls[0])}
			if out == nil {
				out = map[nplusOneKey]*nplusOneTrace{}
			}
			o := out[k]
			if o == nil {
				o = &nplusOneTrace{parentID: p.SpanID, callType: trace.Classify(calls[0])}
				if calls[0].Service != p.Service {
					o.callee = calls[0].Service
				}
				out[k] = o
			}
			o.calls = append(o.calls, calls...)
			o.union += trace.UnionLength(iv)
			for _, v := range iv {
				o.callTime += v.End - v.Start
			}
			o.parentTime += p.Duration()
			o.maxConc = max(o.maxConc, trace.MaxConcurrency(iv))
		}
	}
	return out
}

// callLabel names the repeated call: its operation fingerprint, prefixed
// with its own service when that differs from the caller's (HotROD reports
// its simulated Redis as a separate service, "redis-manual").
func callLabel(t *trace.Trace, parent, call *trace.Span) string {
	if call.Service != "" && call.Service != parent.Service {
		return t.Fingerprint(call)
	}
	return t.Operation(call)
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

func count(x float64) string {
	if x == math.Trunc(x) {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.1f", x)
}
