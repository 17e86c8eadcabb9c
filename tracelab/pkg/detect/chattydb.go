package detect

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"tracelab/pkg/trace"
)

func init() { Register(ChattyDB{}) }

// ChattyDBMinStatements is how many different statements one request must
// send to a database, one round trip after another, to be chatty. Round
// trips that repeat one statement are the other two kinds of repetition
// (n-plus-one when the values differ, redundant-call when they do not); a
// statement repeated a few times, below their thresholds, makes a request
// neither of the three. The public anchors bracket the count:
//
//   - Sentry's Consecutive DB Queries detector starts at 2 sequential
//     queries (consecutive_count_threshold 2), but only for queries of
//     30 ms or more that could run in parallel (span_duration_threshold
//     30, min_time_saved_ratio 0.1; get_detection_settings in
//     getsentry/sentry src/sentry/utils/performance_issues/performance_detection.py).
//     It asks "could these run at once?", not "are there too many?".
//   - perf-sentinel flags 3 sequential sibling calls with different
//     templates as serialized (serialized_min_sequential 3) and a trace
//     with more than 15 outgoing HTTP calls as a chatty service
//     (chatty_service_min_calls 15; robintra/perf-sentinel docs/CONFIGURATION.md,
//     crates/sentinel-core/src/detect/chatty.rs). The chatty rule ignores
//     SQL entirely.
//   - Digma's "High number of queries" insight has no fixed count: it
//     compares an endpoint's queries with the typical count of the
//     service's endpoints (digma-ai/digma-ui
//     src/components/Insights/HighNumberOfQueriesInsight/index.tsx).
//   - GitLab caps a web request at 100 SQL queries
//     (doc/development/database/query_count_limits.md): a guard rail
//     against the absurd, not a diagnosis.
//
// 5 is the count the same tools use for N+1 (see NPlusOneMinCalls), so a
// request pays for five round trips before either detector speaks. It sits
// between what an ordinary write legitimately needs (read, then write: 2,
// maybe 3 with a lock or an audit row) and case study 000's POST, which made
// 7 round trips of about 14.5 ms each, 93% of its 109 ms under load.
const ChattyDBMinStatements = 5

// ChattyDB finds requests that talk to a database in many small steps:
// ChattyDBMinStatements or more different statements, executed one after
// another, so that the request pays the network round trip each time. The
// fix is fewer, larger round trips: one statement, a batch, or a stored
// procedure.
//
// Repeats of one statement that n-plus-one or redundant-call reports (the
// same unit NPlusOneMinCalls or more times under one parent, sequential; or
// the same read with the same values) are left to them: they are set aside
// before counting, so a request is never reported twice for the same round
// trips. A request with 1 + 20 author queries is
// an N+1 and nothing else; one with 7 distinct statements plus an N+1 loop
// gets both findings, each over its own spans.
type ChattyDB struct{}

// ID implements Detector.
func (ChattyDB) ID() string { return "chatty-db" }

type chattyKey struct {
	service string // the service that talks to the database
	request string // requestOf the trace
	handler string // trace.Operation of its request span in that service
	db      string // database system and name, e.g. "postgresql orders"
}

type chattyAgg struct {
	requests                     int
	traces                       int
	calls, setAside, statements  int
	callTime                     int64
	maxConc                      int
	shareParent, shareCP, factor float64
	exampleID                    string // the example trace's id
	exampleRoot                  string // and the fingerprint of its root
	exampleRequest               *trace.Span
	exampleCalls                 []*trace.Span
	exampleStatements            []string // the example calls' operations
	exampleShare                 float64
}

// Detect implements Detector.
func (d ChattyDB) Detect(traces []*trace.Trace) []Finding { return detectEach(d, traces) }

// Aggregator implements PerTrace.
func (d ChattyDB) Aggregator() Aggregator {
	return &chattyAggregator{id: d.ID(), aggs: map[chattyKey]*chattyAgg{}}
}

type chattyAggregator struct {
	id   string
	aggs map[chattyKey]*chattyAgg
}

// Add implements Aggregator.
func (g *chattyAggregator) Add(t *trace.Trace) {
	aggs := g.aggs
	// One trace's critical-path share sums over its chatty requests.
	shares := map[*chattyAgg]float64{}
	for _, r := range chattyRequests(t) {
		k := chattyKey{service: r.calls[0].Service, request: requestOf(t), db: dbLabel(r.calls[0])}
		if r.span != nil {
			k.handler = t.Operation(r.span)
		}
		a := aggs[k]
		if a == nil {
			a = &chattyAgg{}
			aggs[k] = a
		}
		iv := trace.Intervals(r.calls)
		union := trace.UnionLength(iv)
		a.requests++
		a.calls += len(r.calls)
		a.setAside += r.setAside
		a.maxConc = max(a.maxConc, trace.MaxConcurrency(iv))
		a.factor += trace.ParallelismFactor(iv)
		distinct := map[string]bool{}
		for _, c := range r.calls {
			a.callTime += c.Duration()
			distinct[t.Operation(c)] = true
		}
		a.statements += len(distinct)
		if r.span != nil && r.span.Duration() > 0 {
			a.shareParent += math.Min(1, float64(union)/float64(r.span.Duration()))
		}
		// The spans that wrap each round trip alone (repository and
		// ORM spans) are part of its cost.
		share := 0.0
		if dur := t.Duration(); dur > 0 {
			share = float64(t.CriticalTimeUnder(wrappers(t, r.calls))) / float64(dur)
		}
		shares[a] += share
		if a.exampleCalls == nil || share > a.exampleShare || share == a.exampleShare && t.ID < a.exampleID {
			a.exampleID, a.exampleRoot, a.exampleRequest, a.exampleCalls, a.exampleShare = t.ID, t.Fingerprint(t.Root), r.span, r.calls, share
			a.exampleStatements = make([]string, len(r.calls))
			for i, c := range r.calls {
				a.exampleStatements[i] = clipText(t.Operation(c), 60)
			}
		}
	}
	for a, s := range shares {
		a.traces++
		a.shareCP += s
	}
}

// Findings implements Aggregator.
func (g *chattyAggregator) Findings() []Finding {
	findings := make([]Finding, 0, len(g.aggs))
	for k, a := range g.aggs {
		n := float64(a.requests)
		statements := a.exampleStatements
		f := Finding{
			Detector:            g.id,
			Service:             k.service,
			Request:             k.request,
			ParentOperation:     k.handler,
			Operation:           k.db,
			CallsPerTrace:       round(float64(a.calls)/n, 2),
			MaxConcurrency:      a.maxConc,
			ShareOfParent:       round(a.shareParent/n, 4),
			ShareOfCriticalPath: round(a.shareCP/float64(a.traces), 4),
			TracesAffected:      a.traces,
			Evidence: map[string]any{
				"example_trace_id":        a.exampleID,
				"request":                 a.exampleRoot,
				"round_trips_per_request": round(float64(a.calls)/n, 2),
				"distinct_statements":     round(float64(a.statements)/n, 2),
				"mean_round_trip_ms":      meanMs(a.callTime, a.calls),
				"parallelism_factor":      round(a.factor/n, 3),
				"example_statements":      statements,
				"requests_affected":       a.requests,
			},
		}
		if a.setAside > 0 {
			// Not counted above: n-plus-one or redundant-call reports them.
			f.Evidence["repeated_round_trips"] = round(float64(a.setAside)/n, 2)
		}
		if a.exampleRequest != nil {
			f.Evidence["example_parent_span_id"] = a.exampleRequest.SpanID
		}
		// The round trips are different statements, so no one operation
		// names them: the report highlights the example's spans by id.
		ids := make([]string, len(a.exampleCalls))
		for i, c := range a.exampleCalls {
			ids[i] = c.SpanID
		}
		f.Evidence["highlight_span_ids"] = ids
		in := ""
		if k.handler != "" {
			in = " per " + k.handler
		}
		f.Summary = fmt.Sprintf("%s makes %s round trips to %s%s, one after another (%.1f ms each on average); they are %.0f%% of the request's critical path. Do the same work in one statement or one batched round trip.",
			k.service, count(f.CallsPerTrace), k.db, in, f.Evidence["mean_round_trip_ms"], 100*f.ShareOfCriticalPath)
		findings = append(findings, f)
	}
	Sort(findings)
	return findings
}

// chattyRequest is one request's database round trips.
type chattyRequest struct {
	span     *trace.Span // the request, see requestSpan; nil if the calls have none
	calls    []*trace.Span
	setAside int // round trips left to n-plus-one and redundant-call
}

// chattyRequests returns the requests of one trace that made at least
// ChattyDBMinStatements different statements in sequential database round
// trips, not counting those n-plus-one and redundant-call report.
func chattyRequests(t *trace.Trace) []chattyRequest {
	repeated := repeatedCalls(t)

	type reqKey struct {
		span    *trace.Span
		service string
		db      string
	}
	byRequest := map[reqKey]*chattyRequest{}
	var order []reqKey
	for _, s := range t.Spans {
		if !t.OwnCall(s) || !isDBRoundTrip(t, s) {
			continue
		}
		r := requestSpan(t, s)
		k := reqKey{r, s.Service, dbLabel(s)}
		cr := byRequest[k]
		if cr == nil {
			cr = &chattyRequest{span: r}
			byRequest[k] = cr
			order = append(order, k)
		}
		if repeated[s] {
			cr.setAside++
			continue
		}
		cr.calls = append(cr.calls, s)
	}

	var out []chattyRequest
	for _, k := range order {
		cr := byRequest[k]
		distinct := map[string]bool{}
		for _, c := range cr.calls {
			distinct[t.Operation(c)] = true
		}
		if len(distinct) < ChattyDBMinStatements {
			continue
		}
		// Statements sent concurrently (several connections, or a
		// pipelining driver) cost one round trip of wall time together,
		// not one each: not chatty in the sense that hurts. The slack is
		// the one n-plus-one allows.
		if trace.ParallelismFactor(trace.Intervals(cr.calls)) > NPlusOneMaxParallelism {
			continue
		}
		out = append(out, *cr)
	}
	return out
}

// IsDBRoundTrip reports whether s is a database round trip: a database
// call (trace.CallDB) other than a connection checkout. The OpenTelemetry
// Java agent wraps DataSource.getConnection in a span that carries
// db.system (INTERNAL, code.function getConnection); with a pool (Agroal in
// Quarkus, HikariCP in Spring) it hands out an open connection without
// reaching the database: 0.2 ms in the lab's orders traces. Only a pool
// that has to open a new connection makes it a round trip, and then not a
// chatty one.
func IsDBRoundTrip(s *trace.Span) bool {
	return trace.Classify(s) == trace.CallDB && !isConnectionCheckout(s)
}

// isDBRoundTrip is IsDBRoundTrip with t's cached call types.
func isDBRoundTrip(t *trace.Trace, s *trace.Span) bool {
	return t.Classify(s) == trace.CallDB && !isConnectionCheckout(s)
}

func isConnectionCheckout(s *trace.Span) bool {
	return strings.HasSuffix(s.Attr("code.function.name", "code.function"), "getConnection")
}

// dbLabel names the database a call goes to: its system and, when known,
// its name, e.g. "postgresql orders".
func dbLabel(s *trace.Span) string {
	label := s.Attr("db.system.name", "db.system")
	if ns := s.Attr("db.namespace", "db.name"); ns != "" {
		label += " " + ns
	}
	return label
}

// clipText shortens s to at most n bytes without splitting a character.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
