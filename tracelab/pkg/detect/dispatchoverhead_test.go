package detect_test

import (
	"bytes"
	"cmp"
	"fmt"
	"strings"
	"testing"

	"tracelab/pkg/detect"
	"tracelab/pkg/otlp"
	"tracelab/pkg/trace"
)

// gatewayLoad builds the traces of an open-model load on the lab's gateway:
// one request every interval, each a SERVER span with the Java agent's
// controller span (INTERNAL) inside it, spread over a few routes. dispatch
// gives the gap before the controller for a request that starts while
// `concurrent` others are in progress; handler is the controller's time.
type gatewayOptions struct {
	requests int
	interval float64 // ms between request starts, or between bursts
	burst    int     // requests arriving together, 1 µs apart (0: one at a time)
	handler  float64 // ms in the controller
	dispatch func(concurrent int) float64
	noHandle bool // no controller spans (telemetry turned off)
	// The controller span's instrumentation scope and attributes; by
	// default the Java agent's Spring MVC controller span.
	handlerScope string
	handlerAttrs map[string]string
}

var gatewayRoutes = []string{
	"/api/v{version:[1-3]}/tenants/{tenant:[a-z0-9-]+}/orders/{id:[0-9]+}",
	"/api/v{version:[1-3]}/tenants/{tenant:[a-z0-9-]+}/invoices",
	"/api/v{version:[1-3]}/tenants/{tenant:[a-z0-9-]+}/payments/{id:[0-9]+}/files/**",
	"/api/status",
}

func gatewayLoad(o gatewayOptions) []*trace.Trace {
	t0 := fixtureStart.UnixNano()
	var ends []int64
	var spans []*trace.Span
	for i := 0; i < o.requests; i++ {
		b := max(o.burst, 1)
		start := t0 + int64(float64(i/b)*o.interval*1e6) + int64(i%b)*1000
		inProgress := 0
		for _, e := range ends {
			if e > start {
				inProgress++
			}
		}
		gap := int64(o.dispatch(inProgress) * 1e6)
		end := start + gap + int64(o.handler*1e6) + 100e3 // + writing the response
		ends = append(ends, end)
		tid := fmt.Sprintf("%032x", 0xa000+i)
		route := gatewayRoutes[i%len(gatewayRoutes)]
		root := &trace.Span{TraceID: tid, SpanID: fmt.Sprintf("%016x", 1+2*i), Name: "GET " + route, Kind: trace.KindServer,
			Service: "gateway", Start: start, End: end,
			Attrs: trace.AttrsOf(map[string]string{"http.request.method": "GET", "http.route": route, "url.path": "/api/x", "http.response.status_code": "200"})}
		spans = append(spans, root)
		if !o.noHandle {
			scope, attrs := cmp.Or(o.handlerScope, "io.opentelemetry.spring-webmvc-6.0"), o.handlerAttrs
			if attrs == nil {
				attrs = map[string]string{"code.function.name": "get"}
			}
			spans = append(spans, &trace.Span{TraceID: tid, SpanID: fmt.Sprintf("%016x", 2+2*i), ParentID: root.SpanID,
				Name: "ResourceEndpoint.get", Kind: trace.KindInternal, Service: "gateway", Scope: scope,
				Start: start + gap, End: start + gap + int64(o.handler*1e6), Attrs: trace.AttrsOf(attrs)})
		}
	}
	for _, s := range spans {
		s.ResourceAttrs = map[string]string{"service.name": s.Service}
	}
	return trace.Group(spans)
}

func dispatch(traces []*trace.Trace) []detect.Finding {
	return detect.DispatchOverhead{}.Detect(traces)
}

// The baseline: AntPathMatcher on a CPU-bound gateway. The matching costs
// 2 ms, and every request in progress slows the others' matching down.
func TestDispatchOverheadAntPathUnderLoad(t *testing.T) {
	traces := gatewayLoad(gatewayOptions{requests: 400, interval: 2, handler: 0.5,
		dispatch: func(c int) float64 { return 2 * float64(1+c) }})
	// Through the wire format and back, as `tracelab analyze` reads them.
	var buf bytes.Buffer
	if err := otlp.Write(&buf, traces); err != nil {
		t.Fatal(err)
	}
	traces, err := otlp.ParseReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	fs := dispatch(traces)
	if len(fs) != 1 {
		t.Fatalf("want one finding for gateway, got %+v", fs)
	}
	f := fs[0]
	if f.Detector != "dispatch-overhead" || f.Service != "gateway" || f.TracesAffected != 400 {
		t.Errorf("finding = %s / %s / %d traces", f.Detector, f.Service, f.TracesAffected)
	}
	if f.ShareOfCriticalPath < 0.7 || f.ShareOfParent < 0.7 {
		t.Errorf("share of critical path %v, of the server span %v; want > 0.7", f.ShareOfCriticalPath, f.ShareOfParent)
	}
	ev := f.Evidence
	if g := ev["gap_p50_ms"].(float64); g < 2 {
		t.Errorf("gap_p50_ms = %v", g)
	}
	if r := ev["gap_to_handler"].(float64); r < detect.DispatchMinGapToHandler {
		t.Errorf("gap_to_handler = %v", r)
	}
	if g, ok := ev["gap_growth"].(float64); !ok || g < 1.5 {
		t.Errorf("gap_growth = %v; the gap grows with concurrency here", ev["gap_growth"])
	}
	if r, ok := ev["gap_concurrency_spearman"].(float64); !ok || r < 0.8 {
		t.Errorf("gap_concurrency_spearman = %v", ev["gap_concurrency_spearman"])
	}
	routes := ev["routes"].([]map[string]any)
	if len(routes) != len(gatewayRoutes) {
		t.Fatalf("routes = %v", routes)
	}
	for _, r := range routes {
		if !strings.HasPrefix(r["route"].(string), "GET /api/") || r["requests"].(int) != 100 {
			t.Errorf("route row %v", r)
		}
	}
	if ev["example_trace_id"] == "" || !strings.Contains(f.Summary, "handler mapping") || !strings.Contains(f.Summary, "Against load") {
		t.Errorf("example %v, summary %q", ev["example_trace_id"], f.Summary)
	}
	if ids, _ := ev["highlight_span_ids"].([]string); len(ids) != 1 {
		t.Errorf("highlight_span_ids = %v, want the example's server span", ev["highlight_span_ids"])
	}
}

// The fix at the same load: PathPattern matching takes a fraction of a
// millisecond, and the handler is most of the request.
func TestDispatchOverheadPathPatternIsClean(t *testing.T) {
	traces := gatewayLoad(gatewayOptions{requests: 400, interval: 2, handler: 0.5,
		dispatch: func(c int) float64 { return 0.15 + 0.02*float64(c) }})
	if fs := dispatch(traces); len(fs) != 0 {
		t.Errorf("the fix is reported: %+v", fs)
	}
}

func TestDispatchOverheadThresholds(t *testing.T) {
	constant := func(ms float64) func(int) float64 { return func(int) float64 { return ms } }
	cases := []struct {
		name  string
		o     gatewayOptions
		found bool
	}{
		{"slow dispatch, large share", gatewayOptions{requests: 50, interval: 10, handler: 0.5, dispatch: constant(4)}, true},
		// 3 ms before a controller doing 1.2 ms of real work: only 2.5x
		// the handler, but six times what ordinary dispatch costs.
		{"3 ms before a 1.2 ms handler", gatewayOptions{requests: 50, interval: 10, handler: 1.2, dispatch: constant(3)}, true},
		// The PathPattern gateway saturated on a busy machine (CI): 2.6 ms,
		// 8 times a handler stretched as much, with about 30 requests in
		// progress at once, so no request measured the code alone.
		{"saturated PathPattern: 2.6 ms, 30 at once", gatewayOptions{requests: 400, interval: 0.1, handler: 0.33, dispatch: constant(2.6)}, false},
		// The same gap on requests that each ran alone is the code's.
		{"2.6 ms before a 0.33 ms handler, alone", gatewayOptions{requests: 50, interval: 10, handler: 0.33, dispatch: constant(2.6)}, true},
		// Bursts of 8 on one CPU: the gap grows with the requests ahead of
		// it, the short handler does not. PathPattern's gap is 6 handlers
		// when it starts alone and 13 behind 7 others; the ratio is judged
		// where the load is least (6-7x), not over all requests (9x).
		{"PathPattern behind a queue", gatewayOptions{requests: 200, interval: 10, burst: 8, handler: 0.1,
			dispatch: func(c int) float64 { return 0.1 * float64(6+c) }}, false},
		// AntPathMatcher's gap under the same queue: 10 handlers alone.
		{"AntPathMatcher behind a queue", gatewayOptions{requests: 200, interval: 10, burst: 8, handler: 0.1,
			dispatch: func(c int) float64 { return 0.1 * float64(10+c) }}, true},
		// The PathPattern gateway on a busy machine: a 1 ms gap, most of the
		// request, 6 times a handler stretched as much.
		{"busy PathPattern: 1 ms, 6x", gatewayOptions{requests: 50, interval: 10, handler: 0.17, dispatch: constant(1)}, false},
		// The PathPattern gateway measured on a CPU of its own: a 0.38 ms gap,
		// 6 times a 0.065 ms handler, and most of the request.
		{"gap 6x the handler", gatewayOptions{requests: 50, interval: 10, handler: 0.065, dispatch: constant(0.38)}, false},
		// The AntPathMatcher gateway in the same run: 0.98 ms, 15 times.
		{"gap 15x the handler", gatewayOptions{requests: 50, interval: 10, handler: 0.065, dispatch: constant(0.98)}, true},
		// A slow request whose handler dominates: the gap is long but small next to the work.
		{"1.5 ms gap in a 20 ms request", gatewayOptions{requests: 50, interval: 30, handler: 20, dispatch: constant(1.5)}, false},
		// Twenty times the handler, but 0.2 ms: nothing to gain.
		{"fast request, fast dispatch", gatewayOptions{requests: 50, interval: 10, handler: 0.01, dispatch: constant(0.2)}, false},
		// Ordinary dispatch before a trivial handler: 15 times it, still
		// under the ordinary ceiling.
		{"0.45 ms before a 0.03 ms handler", gatewayOptions{requests: 50, interval: 10, handler: 0.03, dispatch: constant(0.45)}, false},
		{"too few requests", gatewayOptions{requests: detect.DispatchMinRequests - 1, interval: 10, handler: 0.5, dispatch: constant(3)}, false},
		{"no handler spans", gatewayOptions{requests: 50, interval: 10, handler: 0.5, dispatch: constant(3), noHandle: true}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := dispatch(gatewayLoad(c.o))
			if got := len(fs) == 1; got != c.found {
				t.Errorf("found = %v, want %v (%+v)", got, c.found, fs)
			}
		})
	}
}

// Requests spaced out so none overlaps: the load never varied, so the
// finding says nothing about growth rather than inventing it.
func TestDispatchOverheadWithoutLoadVariation(t *testing.T) {
	fs := dispatch(gatewayLoad(gatewayOptions{requests: 40, interval: 20, handler: 0.3, dispatch: func(int) float64 { return 3 }}))
	if len(fs) != 1 {
		t.Fatalf("want one finding, got %+v", fs)
	}
	if _, ok := fs[0].Evidence["gap_growth"]; ok {
		t.Errorf("gap_growth reported without any load variation: %v", fs[0].Evidence)
	}
	if c := fs[0].Evidence["concurrency_max"]; c != 1 {
		t.Errorf("concurrency_max = %v, want 1", c)
	}
}

// The lab's other scenarios must not trip it: HotROD and the nplus1 shapes
// have no handler spans, or handlers that start at once.
func TestDispatchOverheadIgnoresOtherFixtures(t *testing.T) {
	for _, file := range []string{"hotrod-dispatch.jaeger.json", "django-nplus1.otlp.json", "few-calls.tempo.json"} {
		if fs := dispatch(loadFixture(t, file)); len(fs) != 0 {
			t.Errorf("%s: %+v", file, fs)
		}
	}
}

func TestDispatchOverheadIsRegistered(t *testing.T) {
	if d, ok := detect.ByID("dispatch-overhead"); !ok || d.ID() != "dispatch-overhead" {
		t.Fatal("dispatch-overhead is not registered")
	}
}

// Only a span its framework writes for the handler is taken for one: the
// same slow dispatch is found under Spring MVC's controller spans and
// Express's request handler spans, and not judged under any other INTERNAL
// child, such as the "http send" spans the ASGI instrumentation writes
// after a FastAPI handler has returned. The finding names the spans taken.
func TestDispatchOverheadNeedsAKnownHandlerSpan(t *testing.T) {
	antPath := func(c int) float64 { return 2 * float64(1+c) }
	for _, c := range []struct {
		name, scope string
		attrs       map[string]string
		want        string // the finding's handler_spans, "" for none
	}{
		{"Spring MVC", "", nil, "controller spans of io.opentelemetry.spring-webmvc-6.0"},
		{"Express", "@opentelemetry/instrumentation-express", map[string]string{"express.type": "request_handler"}, "Express request handler spans (express.type request_handler)"},
		{"Express middleware", "@opentelemetry/instrumentation-express", map[string]string{"express.type": "middleware"}, ""},
		{"ASGI http send", "opentelemetry.instrumentation.asgi", map[string]string{"asgi.event.type": "http.response.start"}, ""},
		{"a repository span", "io.opentelemetry.spring-data-1.8", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := dispatch(gatewayLoad(gatewayOptions{requests: 200, interval: 5, handler: 0.2, dispatch: antPath,
				handlerScope: c.scope, handlerAttrs: c.attrs}))
			switch {
			case c.want == "" && len(fs) > 0:
				t.Errorf("found %s, with %v taken for handlers", fs[0].Summary, fs[0].Evidence["handler_spans"])
			case c.want != "" && len(fs) != 1:
				t.Errorf("%d findings, want 1", len(fs))
			case c.want != "" && fs[0].Evidence["handler_spans"] != c.want:
				t.Errorf("handler_spans %q, want %q", fs[0].Evidence["handler_spans"], c.want)
			}
		})
	}
}
