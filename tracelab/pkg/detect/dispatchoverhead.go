package detect

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"tracelab/pkg/trace"
)

func init() { Register(DispatchOverhead{}) }

// The dispatch-overhead thresholds. The gap measured is the time between a
// server span's start and the start of its first handler span: the servlet
// filters and the framework's handler lookup, before any application code.
//
// What Spring MVC on Tomcat normally spends there is small and known:
// PathPattern matching takes microseconds (Spring's own benchmark has it at
// 6-8x the throughput of AntPathMatcher,
// spring.io/blog/2020/06/30/url-matching-with-pathpattern-in-spring-mvc),
// and Tomcat, a few filters and the OpenTelemetry Java agent's span
// bookkeeping add a few hundred microseconds: 0.2-0.27 ms at the least on
// the lab's PathPattern gateway with 1,925 routes, a table far larger than
// most. Ordinary dispatch stays well under 0.5 ms. A service is flagged when
// dispatch is most of its requests and beyond that cost in one of two ways:
// long in itself, or long next to its handler. The second holds better on a
// busy machine, where milliseconds alone do not: the same PathPattern
// gateway showed median gaps from 0.35 to 1 ms depending on what else ran,
// overlapping the 0.98 to 1.32 ms of its AntPathMatcher variant.
const (
	// DispatchMinShare is the median share of the server span spent before
	// the handler. In case study 004 the filter chain, request matching
	// included, was ~40% of the gateway's CPU profile, and switching the
	// matcher halved the latency: dispatch was at least half of a request.
	DispatchMinShare = 0.5

	// DispatchNormalMs is the ceiling of ordinary dispatch (above): a
	// median gap below it is never reported, whatever the ratios.
	DispatchNormalMs = 0.5

	// DispatchSlowMs flags a median gap four times that ceiling whatever
	// the handler does: 3 ms of filters and handler mapping before a 1.2 ms
	// controller is slow dispatch even though the controller works.
	// Milliseconds measure the code only when the request did not wait for
	// the CPU behind others of its service, so this rule is judged on the
	// requests that started while no other was in progress, and only when
	// at least DispatchMinRequests did. A saturated service has none: in a
	// CI run on a busy machine, the PathPattern gateway ran 64 requests at
	// once at the median, its gap grew from 0.6 ms to 2.6 ms, and 4 of its
	// 2,897 requests ran alone (their gap/handler ratio stayed at 7.2).
	DispatchSlowMs = 4 * DispatchNormalMs

	// DispatchMinGapToHandler flags a gap that many times the handler's
	// median. It is the ratio of the two ceilings of ordinary work, the
	// dispatch ceiling over what the cheapest instrumented handler costs:
	// argument binding, a trivial method and writing a small body under the
	// agent's controller span take 0.05-0.1 ms (0.036-0.096 ms at the 10th
	// percentile on the lab's gateway, whose handler does almost nothing).
	// 0.5 / 0.0625 = 8: a gap more than 8 times its handler is more than
	// ordinary dispatch would cost even in front of the cheapest handler.
	//
	// The ratio is judged on the least loaded requests (leastLoaded), not
	// on all: a service's own queue stretches the long gap more than the
	// short handler, since a request waiting for the CPU is more likely to
	// be set aside during the longer span. In 42 of 52 variant runs of the
	// lab's gateway recorded on 2026-11-26 and 27 (both matchers, with and
	// without a CPU hog), the median ratio of the most loaded quarter of
	// the requests was higher than the least loaded quarter's (by 12% in
	// the median run), in 5 it was lower, in 5 within 2%.
	//
	// A known limit: the 0.05-0.1 ms premise holds on a JVM still
	// compiling. Once its JIT has finished, the lab's controller spans take
	// 0.01-0.045 ms and the PathPattern gateway reads 12-17 times, so the
	// ratio alone does not tell the two matchers apart on compiled JVMs
	// (scenarios/antpath/README.md, "The JIT").
	DispatchMinGapToHandler = 8

	// DispatchMinRequests is how many measured requests a service needs
	// before a median means anything; 20 makes the median's rank error
	// about a tenth of the sample.
	DispatchMinRequests = 20
)

// DispatchOverhead finds services whose requests spend a large share of their
// time before the handler starts: the pattern of a large route table matched
// by a slow matcher (Spring MVC's AntPathMatcher, case study 004), or of a
// heavy filter chain. It needs handler spans (the OpenTelemetry Java agent's
// controller spans, OTEL_INSTRUMENTATION_COMMON_EXPERIMENTAL_CONTROLLER_TELEMETRY_ENABLED):
// requests without one are skipped.
//
// The finding is one per service, since every route of a service goes
// through the same filters and handler mapping; its evidence breaks the gap
// down per route (http.route) and by load, measured as how many requests of
// the service were in progress when each one started.
type DispatchOverhead struct{}

// ID implements Detector.
func (DispatchOverhead) ID() string { return "dispatch-overhead" }

// dispatchSample is what one server span with a handler span under it
// tells: numbers and names, not the spans, so that the trace can be dropped
// once read (see PerTrace).
type dispatchSample struct {
	traceID, serverID string // the trace and the server span
	rootStart         int64  // the trace's root start, with traceID and at: the order of Group
	at                int    // the server span's place in its trace
	start, end        int64  // the server span, ns
	handler           string // the handler span's operation
	handlerScope      string // and its instrumentation scope
	route             string
	gap               int64   // handler start - server start, ns
	share             float64 // gap / server span duration
	toHandler         float64 // gap / handler span duration
	cpShare           float64 // gap / trace duration
	concurrency       int     // server spans of the service in progress at this one's start
}

// Detect implements Detector.
func (d DispatchOverhead) Detect(traces []*trace.Trace) []Finding { return detectEach(d, traces) }

// Aggregator implements PerTrace.
func (d DispatchOverhead) Aggregator() Aggregator {
	return &dispatchAggregator{id: d.ID(), byService: map[string][]*dispatchSample{}, strs: map[string]string{}}
}

type dispatchAggregator struct {
	id        string
	byService map[string][]*dispatchSample
	strs      map[string]string // the names samples share, held once: a sample is kept per request read
}

func (a *dispatchAggregator) str(s string) string {
	if v, ok := a.strs[s]; ok {
		return v
	}
	v := strings.Clone(s) // not a substring that would keep a span's strings alive
	a.strs[v] = v
	return v
}

func (a *dispatchAggregator) Add(t *trace.Trace) {
	for i, s := range t.Spans {
		if s.Kind != trace.KindServer {
			continue
		}
		h := firstHandler(t, s)
		if h == nil || s.Duration() <= 0 {
			continue
		}
		gap := max(0, h.Start-s.Start)
		// The span id is copied: the parser cuts it from one string with
		// the span's long values, which a substring would keep alive.
		smp := &dispatchSample{traceID: t.ID, serverID: strings.Clone(s.SpanID), rootStart: t.Root.Start, at: i,
			start: s.Start, end: s.End, handler: a.str(t.Operation(h)), handlerScope: a.str(handlerName(h)), gap: gap,
			route: a.str(routeOf(t, s)), share: math.Min(1, float64(gap)/float64(s.Duration()))}
		// A handler span of zero length (clock resolution) counts as 1 µs.
		smp.toHandler = float64(gap) / float64(max(h.Duration(), 1000))
		if dur := t.Duration(); dur > 0 {
			smp.cpShare = math.Min(1, float64(gap)/float64(dur))
		}
		a.byService[s.Service] = append(a.byService[s.Service], smp)
	}
}

func (a *dispatchAggregator) Findings() []Finding {
	var findings []Finding
	for service, samples := range a.byService {
		if len(samples) < DispatchMinRequests {
			continue
		}
		// The traces may have come in any order; the quartiles by load
		// break ties by this one.
		sort.Slice(samples, func(i, j int) bool {
			x, y := samples[i], samples[j]
			if x.rootStart != y.rootStart {
				return x.rootStart < y.rootStart
			}
			if x.traceID != y.traceID {
				return x.traceID < y.traceID
			}
			return x.at < y.at
		})
		gaps := make([]float64, len(samples))
		shares := make([]float64, len(samples))
		for i, s := range samples {
			gaps[i] = float64(s.gap) / 1e6
			shares[i] = s.share
		}
		gapP50, shareP50 := quantile(gaps, 0.5), quantile(shares, 0.5)
		if shareP50 < DispatchMinShare || gapP50 < DispatchNormalMs {
			continue
		}
		setConcurrency(samples)
		alone := aloneGaps(samples)
		slowAlone := len(alone) >= DispatchMinRequests && quantile(alone, 0.5) >= DispatchSlowMs
		judged, loadLimit := leastLoaded(samples)
		toHandler := make([]float64, len(judged))
		for i, s := range judged {
			toHandler[i] = s.toHandler
		}
		toHandlerP50 := quantile(toHandler, 0.5)
		if !slowAlone && toHandlerP50 < DispatchMinGapToHandler {
			continue
		}
		f := dispatchFinding(a.id, service, samples, gaps, gapP50, shareP50)
		f.Evidence["gap_to_handler"] = round(toHandlerP50, 2)
		f.Evidence["gap_to_handler_requests"] = len(judged)
		f.Evidence["gap_to_handler_max_concurrency"] = loadLimit
		f.Evidence["requests_alone"] = len(alone)
		if len(alone) > 0 {
			f.Evidence["gap_alone_p50_ms"] = round(quantile(alone, 0.5), 3)
		}
		findings = append(findings, f)
	}
	Sort(findings)
	return findings
}

func dispatchFinding(id, service string, samples []*dispatchSample, gaps []float64, gapP50, shareP50 float64) Finding {
	var shareSum, cpSum float64
	example := samples[0]
	handlers, scopes := map[string]int{}, map[string]int{}
	for _, s := range samples {
		shareSum += s.share
		cpSum += s.cpShare
		if s.gap > example.gap || s.gap == example.gap && s.traceID < example.traceID {
			example = s
		}
		handlers[s.handler]++
		scopes[s.handlerScope]++
	}
	n := float64(len(samples))
	f := Finding{
		Detector:            id,
		Service:             service,
		Operation:           "dispatch before the handler (filters and handler mapping)",
		ShareOfParent:       round(shareSum/n, 4),
		ShareOfCriticalPath: round(cpSum/n, 4),
		TracesAffected:      distinctTraces(samples),
		Evidence: map[string]any{
			"requests":           len(samples),
			"gap_p50_ms":         round(gapP50, 3),
			"gap_p95_ms":         round(quantile(gaps, 0.95), 3),
			"share_of_request":   round(shareP50, 4),
			"routes":             routeBreakdown(samples),
			"handler_operations": len(handlers),
			// Which spans were taken as the handler, so a reader can check.
			"handler_spans":    mostCommonKey(scopes),
			"example_trace_id": example.traceID,
			"example_gap_ms":   round(float64(example.gap)/1e6, 3),
			// The gap is no span of its own: it is the server span's time
			// before its handler, so the report highlights the server span.
			"highlight_span_ids": []string{example.serverID},
		},
	}
	for k, v := range loadGrowth(samples) {
		f.Evidence[k] = v
	}
	growth := ""
	if g, ok := f.Evidence["gap_growth"].(float64); ok {
		growth = fmt.Sprintf(" Against load: %.2f ms when %v or fewer requests were in progress, %.2f ms at %v or more (%.1fx).",
			f.Evidence["gap_low_load_ms"], f.Evidence["low_load_concurrency"], f.Evidence["gap_high_load_ms"], f.Evidence["high_load_concurrency"], g)
	}
	f.Summary = fmt.Sprintf("%s spends a median %.2f ms (%.0f%% of a request) between accepting a request and starting its handler, in its filters and handler mapping.%s Look at how it matches routes (AntPathMatcher, regex patterns) and at its filter chain.",
		service, gapP50, 100*shareP50, growth)
	return f
}

// handlerScopes are the instrumentations known to write a span for the
// framework's handler, the application's own method for the route, as a
// child of the server span (docs/cli.md, "Detectors":
// which frameworks write a handler span): the OpenTelemetry Java agent's controller spans (Spring MVC and
// WebFlux, JAX-RS, Struts, Grails; on by default, or with
// OTEL_INSTRUMENTATION_COMMON_EXPERIMENTAL_CONTROLLER_TELEMETRY_ENABLED in
// agent 2.x).
var handlerScopes = []string{
	"io.opentelemetry.spring-webmvc-", "io.opentelemetry.spring-webflux-",
	"io.opentelemetry.jaxrs-", "io.opentelemetry.struts-", "io.opentelemetry.grails-",
}

// IsHandlerSpan reports whether s is a framework's handler span: one of
// handlerScopes', or Express's request handler span (express.type
// request_handler; its middleware spans come before it, and are dispatch).
// Any other INTERNAL child of a server span may be work the handler does
// (a repository call), or work done after it (ASGI's "http send" spans of
// FastAPI and Starlette, written once the handler has returned): taking
// one for the handler would call the handler's own time dispatch.
func IsHandlerSpan(s *trace.Span) bool {
	if s.Kind != trace.KindInternal {
		return false
	}
	for _, p := range handlerScopes {
		if strings.HasPrefix(s.Scope, p) {
			return true
		}
	}
	return s.Attr("express.type") == "request_handler"
}

// firstHandler is the earliest child of a server span, in the same
// service, that IsHandlerSpan: nil when its framework writes none, and
// then the request is not judged.
func firstHandler(t *trace.Trace, s *trace.Span) *trace.Span {
	for _, c := range t.Children(s) { // sorted by start
		if c.Service == s.Service && IsHandlerSpan(c) {
			return c
		}
	}
	return nil
}

func routeOf(t *trace.Trace, s *trace.Span) string {
	if r := s.Attr("http.route"); r != "" {
		if m := s.Attr("http.request.method", "http.method"); m != "" {
			return m + " " + r
		}
		return r
	}
	return t.Operation(s)
}

// setConcurrency counts, for each sample, the server spans of the same set
// in progress at its start, itself included: a sweep over sorted starts and
// ends.
func setConcurrency(samples []*dispatchSample) {
	ends := make([]int64, len(samples))
	order := make([]*dispatchSample, len(samples))
	copy(order, samples)
	for i, s := range samples {
		ends[i] = s.end
	}
	sort.Slice(order, func(i, j int) bool { return order[i].start < order[j].start })
	sort.Slice(ends, func(i, j int) bool { return ends[i] < ends[j] })
	e := 0
	for i, s := range order {
		for e < len(ends) && ends[e] <= s.start {
			e++
		}
		s.concurrency = i + 1 - e
	}
}

// loadGrowth compares the gap of the requests that started with the fewest
// others in progress (bottom quarter) with those that started with the most
// (top quarter), and gives the rank correlation of gap and concurrency.
// Nothing is reported when the load did not vary.
func loadGrowth(samples []*dispatchSample) map[string]any {
	sorted := make([]*dispatchSample, len(samples))
	copy(sorted, samples)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].concurrency < sorted[j].concurrency })
	q := len(sorted) / 4
	low, high := sorted[:max(q, 1)], sorted[len(sorted)-max(q, 1):]
	out := map[string]any{
		"concurrency_p50": sorted[len(sorted)/2].concurrency,
		"concurrency_max": sorted[len(sorted)-1].concurrency,
	}
	lowC, highC := low[len(low)-1].concurrency, high[0].concurrency
	if lowC >= highC {
		return out
	}
	lowGap, highGap := medianGap(low), medianGap(high)
	out["low_load_concurrency"] = lowC
	out["high_load_concurrency"] = highC
	out["gap_low_load_ms"] = round(lowGap, 3)
	out["gap_high_load_ms"] = round(highGap, 3)
	if lowGap > 0 {
		out["gap_growth"] = round(highGap/lowGap, 2)
	}
	xs := make([]float64, len(samples))
	ys := make([]float64, len(samples))
	for i, s := range samples {
		xs[i], ys[i] = float64(s.concurrency), float64(s.gap)
	}
	out["gap_concurrency_spearman"] = round(spearman(xs, ys), 3)
	return out
}

// routeBreakdown is the gap per route, the slowest first, at most 10 routes.
func routeBreakdown(samples []*dispatchSample) []map[string]any {
	byRoute := map[string][]*dispatchSample{}
	for _, s := range samples {
		byRoute[s.route] = append(byRoute[s.route], s)
	}
	type row struct {
		route      string
		n          int
		gap, share float64
	}
	rows := make([]row, 0, len(byRoute))
	for r, ss := range byRoute {
		shares := make([]float64, len(ss))
		for i, s := range ss {
			shares[i] = s.share
		}
		rows = append(rows, row{r, len(ss), medianGap(ss), quantile(shares, 0.5)})
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].gap != rows[j].gap {
			return rows[i].gap > rows[j].gap
		}
		return rows[i].route < rows[j].route
	})
	out := make([]map[string]any, 0, min(len(rows), 10))
	for _, r := range rows[:min(len(rows), 10)] {
		out = append(out, map[string]any{"route": r.route, "requests": r.n, "gap_p50_ms": round(r.gap, 3), "share_of_request": round(r.share, 4)})
	}
	return out
}

// leastLoaded is the least loaded quarter of the requests: those that
// started with at most as many of their service's requests in progress as
// the quarter's last one (ties included), and that number. On a service
// that is never saturated, they are the requests that ran alone. When they
// are too few for a median (DispatchMinRequests), it is every request.
func leastLoaded(ss []*dispatchSample) ([]*dispatchSample, int) {
	load := make([]float64, len(ss))
	highest := 0
	for i, s := range ss {
		load[i] = float64(s.concurrency)
		highest = max(highest, s.concurrency)
	}
	limit := int(quantile(load, 0.25))
	var out []*dispatchSample
	for _, s := range ss {
		if s.concurrency <= limit {
			out = append(out, s)
		}
	}
	if len(out) < DispatchMinRequests {
		return ss, highest
	}
	return out, limit
}

// aloneGaps are the gaps, in ms, of the requests that started while no
// other request of their service was in progress (setConcurrency first).
func aloneGaps(ss []*dispatchSample) []float64 {
	var g []float64
	for _, s := range ss {
		if s.concurrency == 1 {
			g = append(g, float64(s.gap)/1e6)
		}
	}
	return g
}

func medianGap(ss []*dispatchSample) float64 {
	g := make([]float64, len(ss))
	for i, s := range ss {
		g[i] = float64(s.gap) / 1e6
	}
	return quantile(g, 0.5)
}

func distinctTraces(ss []*dispatchSample) int {
	seen := map[string]bool{}
	for _, s := range ss {
		seen[s.traceID] = true
	}
	return len(seen)
}

// spearman is the rank correlation of xs and ys (ties get their mean rank).
func spearman(xs, ys []float64) float64 {
	rx, ry := ranks(xs), ranks(ys)
	var mx, my float64
	for i := range rx {
		mx += rx[i]
		my += ry[i]
	}
	n := float64(len(rx))
	mx, my = mx/n, my/n
	var sxy, sxx, syy float64
	for i := range rx {
		dx, dy := rx[i]-mx, ry[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}

func ranks(xs []float64) []float64 {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	r := make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && xs[idx[j+1]] == xs[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			r[idx[k]] = float64(i+j)/2 + 1
		}
		i = j + 1
	}
	return r
}

// handlerName says which instrumentation wrote a handler span.
func handlerName(h *trace.Span) string {
	if h.Attr("express.type") == "request_handler" {
		return "Express request handler spans (express.type request_handler)"
	}
	return "controller spans of " + h.Scope
}

// mostCommonKey is the key with the highest count, the smallest on a tie.
func mostCommonKey(counts map[string]int) string {
	best, n := "", 0
	for k, c := range counts {
		if c > n || c == n && k < best {
			best, n = k, c
		}
	}
	return best
}
