package detect

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"tracelab/pkg/trace"
)

func init() {
	Register(NPlusOne{})
	Register(NPlusOneOrRedundant{})
}

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

// NPlusOne finds a parent span that repeats the same unit of work at least
// NPlusOneMinCalls times, one at a time, with different values each time:
// the loop over rows or items that should have been one batch request, one
// JOIN, or at least concurrent calls. The unit is an outgoing call (HTTP,
// RPC, database or cache; see trace.IsCall) or a subtree that wraps calls,
// such as a repository method around an ORM query around its JDBC
// statement; its cost is the whole subtree's time on the critical path.
// Repetitions made with identical values are redundant-call's: caching
// them is the fix, not batching. Reads whose values the spans do not show
// are NPlusOneOrRedundant's, unless the ORM that made them says the rows
// differ (loadsOnePerRow).
type NPlusOne struct{}

// ID implements Detector.
func (NPlusOne) ID() string { return "n-plus-one" }

// NPlusOneOrRedundant finds what NPlusOne does, for reads whose values the
// spans do not record (most database instrumentations by default): the
// same statement, one at a time, with placeholders and no values. That is
// one row per item, an N+1 to batch, or the same row read again, a
// redundant read to keep; the spans cannot tell, and the finding names
// both rather than claim one. Recording the values (docs/cli.md, "Detectors":
// the values of a call) turns it into one of the two.
type NPlusOneOrRedundant struct{}

// ID implements Detector.
func (NPlusOneOrRedundant) ID() string { return "n-plus-one-or-redundant" }

// Detect implements Detector.
func (d NPlusOneOrRedundant) Detect(traces []*trace.Trace) []Finding { return detectEach(d, traces) }

// Aggregator implements PerTrace.
func (d NPlusOneOrRedundant) Aggregator() Aggregator {
	return &nplusOneAggregator{id: d.ID(), undecided: true, aggs: map[nplusOneKey]*nplusOneAgg{}}
}

// nplusOneKey identifies one finding across traces.
type nplusOneKey struct {
	service string // the parent's service: the code with the loop
	request string // the request type, see requestOf
	parent  string // trace.Operation of the parent span
	call    string // the repeated call, see callLabel
}

// nplusOneTrace sums one key's occurrences within one trace (the same
// parent operation may run more than once per request).
type nplusOneTrace struct {
	units      []*trace.Span
	union      int64 // time covered by the units
	unitTime   int64 // summed unit durations
	parentTime int64 // summed parent durations
	maxConc    int
	parentID   string
	wrapped    bool // the units are spans around the calls, not the calls
	unitOp     string
	values     valueKnowledge
	callType   trace.CallType
	callee     string
}

// nplusOneAgg sums one key across traces.
type nplusOneAgg struct {
	traces                       int
	units                        int
	unitTime                     int64
	maxConc                      int
	shareParent, shareCP, factor float64
	exampleID                    string // the example trace's id
	exampleRequest               string // and the fingerprint of its root
	exampleTrace                 *nplusOneTrace
	exampleShare                 float64
}

// Detect implements Detector.
func (d NPlusOne) Detect(traces []*trace.Trace) []Finding { return detectEach(d, traces) }

// Aggregator implements PerTrace.
func (d NPlusOne) Aggregator() Aggregator {
	return &nplusOneAggregator{id: d.ID(), aggs: map[nplusOneKey]*nplusOneAgg{}}
}

type nplusOneAggregator struct {
	id        string
	undecided bool // NPlusOneOrRedundant's: the reads whose values are not known
	aggs      map[nplusOneKey]*nplusOneAgg
}

// Add implements Aggregator.
func (g *nplusOneAggregator) Add(t *trace.Trace) {
	aggs := g.aggs
	for k, o := range repeatedSequentialCalls(t, g.undecided) {
		a := aggs[k]
		if a == nil {
			a = &nplusOneAgg{}
			aggs[k] = a
		}
		share := 0.0
		if dur := t.Duration(); dur > 0 {
			share = float64(t.CriticalTimeUnder(o.units)) / float64(dur)
		}
		a.traces++
		a.units += len(o.units)
		a.unitTime += o.unitTime
		a.maxConc = max(a.maxConc, o.maxConc)
		a.shareCP += share
		if o.parentTime > 0 {
			a.shareParent += math.Min(1, float64(o.union)/float64(o.parentTime))
		}
		if o.union > 0 {
			a.factor += float64(o.unitTime) / float64(o.union)
		} else {
			a.factor++
		}
		if a.exampleTrace == nil || share > a.exampleShare || share == a.exampleShare && t.ID < a.exampleID {
			a.exampleID, a.exampleRequest, a.exampleTrace, a.exampleShare = t.ID, t.Fingerprint(t.Root), o, share
		}
	}
}

// Findings implements Aggregator.
func (g *nplusOneAggregator) Findings() []Finding {
	id := g.id
	findings := make([]Finding, 0, len(g.aggs))
	for k, a := range g.aggs {
		n := float64(a.traces)
		o := a.exampleTrace
		f := Finding{
			Detector:            id,
			Service:             k.service,
			Request:             k.request,
			ParentOperation:     k.parent,
			Operation:           k.call,
			CallsPerTrace:       round(float64(a.units)/n, 2),
			MaxConcurrency:      a.maxConc,
			ShareOfParent:       round(a.shareParent/n, 4),
			ShareOfCriticalPath: round(a.shareCP/n, 4),
			TracesAffected:      a.traces,
			Evidence: map[string]any{
				"example_trace_id":       a.exampleID,
				"example_parent_span_id": o.parentID,
				"request":                a.exampleRequest,
				"call_type":              string(o.callType),
				"mean_call_ms":           round(float64(a.unitTime)/float64(a.units)/1e6, 3),
				"parallelism_factor":     round(a.factor/n, 3),
				"parameter_values":       o.values.String(),
			},
		}
		if o.callee != "" {
			f.Evidence["callee_service"] = o.callee
		}
		wrapped := ""
		if o.wrapped {
			// The call is not a child of the parent: name the spans to mark.
			f.Evidence["unit"] = o.unitOp
			ids := make([]string, len(o.units))
			for i, u := range o.units {
				ids[i] = u.SpanID
			}
			f.Evidence["highlight_span_ids"] = ids
			wrapped = fmt.Sprintf(", each inside %s", o.unitOp)
		}
		if g.undecided {
			f.Summary = fmt.Sprintf("%s reads %s %s times per %s, one call at a time%s (%.1f ms each on average); these calls are %.0f%% of the request's critical path. The spans do not record the values, so this is either one row per item (an N+1: fetch them in one batch or a JOIN) or the same row read again (a redundant read: read it once and keep it); record the values to tell.",
				k.service, k.call, count(f.CallsPerTrace), k.parent, wrapped, f.Evidence["mean_call_ms"], 100*f.ShareOfCriticalPath)
			findings = append(findings, f)
			continue
		}
		values := ""
		switch o.values {
		case valuesUnknown:
			values = " The spans do not record the values the calls were made with; if they repeat, cache instead."
		case valuesOnePerRow:
			values = " The spans do not record the values, but the ORM loads a row once per session: these are different rows."
		}
		f.Summary = fmt.Sprintf("%s calls %s %s times per %s, one call at a time%s (%.1f ms each on average); these calls are %.0f%% of the request's critical path. Fetch them in one batch request, or at least concurrently.%s",
			k.service, k.call, count(f.CallsPerTrace), k.parent, wrapped, f.Evidence["mean_call_ms"], 100*f.ShareOfCriticalPath, values)
		findings = append(findings, f)
	}
	Sort(findings)
	return findings
}

// repeatedSequentialCalls returns, for one trace, every repeated unit that
// n-plus-one reports, or with undecided the reads n-plus-one-or-redundant
// reports (see repeatedUnits and repeatGroup.undecided; repetitions known
// to be identical are left to redundant-call), keyed and summed per
// finding.
func repeatedSequentialCalls(t *trace.Trace, undecided bool) map[nplusOneKey]*nplusOneTrace {
	var out map[nplusOneKey]*nplusOneTrace
	for _, g := range repeatedUnits(t) {
		if g.values == valuesIdentical && isRead(t, g.calls[0][0]) || g.undecided(t) != undecided {
			continue
		}
		p, call := g.parent, g.calls[0][0]
		k := nplusOneKey{service: p.Service, request: requestOf(t), parent: t.Operation(p), call: unitLabel(t, p, g.calls[0])}
		if out == nil {
			out = map[nplusOneKey]*nplusOneTrace{}
		}
		o := out[k]
		if o == nil {
			o = &nplusOneTrace{parentID: p.SpanID, callType: t.Classify(call), values: g.values,
				wrapped: g.units[0] != call, unitOp: t.Operation(g.units[0])}
			if call.Service != p.Service {
				o.callee = call.Service
			}
			out[k] = o
		}
		iv := trace.Intervals(g.units)
		o.units = append(o.units, g.units...)
		o.union += trace.UnionLength(iv)
		for _, v := range iv {
			o.unitTime += v.End - v.Start
		}
		o.parentTime += p.Duration()
		o.maxConc = max(o.maxConc, g.maxConc)
	}
	return out
}

// unitLabel names what a unit repeats: its call's label, or the labels of
// its distinct calls joined with " + " when it makes several.
func unitLabel(t *trace.Trace, parent *trace.Span, calls []*trace.Span) string {
	var labels []string
	for _, c := range calls {
		if l := callLabel(t, parent, c); !slices.Contains(labels, l) {
			labels = append(labels, l)
		}
	}
	return strings.Join(labels, " + ")
}

// requestOf names the request a trace serves: the operation of its request
// span (trace.Request), e.g. "GET /owners/{ownerId}", or "" for a trace
// that serves none.
func requestOf(t *trace.Trace) string {
	if r := t.Request(); r != nil {
		return t.Operation(r)
	}
	return ""
}

// callLabel names the repeated call: its operation fingerprint, prefixed
// with its own service when that differs from the caller's (HotROD reports
// its simulated Redis as a separate service, "redis-manual").
func callLabel(t *trace.Trace, parent, call *trace.Span) string {
	if call.Service != "" && (parent == nil || call.Service != parent.Service) {
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
