package detect_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"tracelab/pkg/detect"
	"tracelab/pkg/trace"
)

func eventLoop(traces []*trace.Trace) []detect.Finding {
	return detect.EventLoopBlocking{}.Detect(traces)
}

const customersCall = "GET 127.0.0.1:18083/customers/{id}"

// loopCallConcurrency is the largest number of customers calls in flight
// at once on any one event-loop thread: the premise each test checks
// before trusting a silent detector.
func loopCallConcurrency(traces []*trace.Trace) int {
	byThread := map[string][]*trace.Span{}
	for _, t := range traces {
		for _, s := range t.Spans {
			if s.Kind == trace.KindClient && s.Attr("url.full") != "" {
				byThread[s.Attr("thread.name")] = append(byThread[s.Attr("thread.name")], s)
			}
		}
	}
	m := 0
	for _, calls := range byThread {
		m = max(m, trace.MaxConcurrency(trace.Intervals(calls)))
	}
	return m
}

// 16 clients on 2 event loops, customers called with a blocking client:
// the case study's shape, through the wire format and back.
func TestEventLoopBlockingUnderLoad(t *testing.T) {
	spans := ordersLoad(ordersOptions{VUs: 16, Loops: 2, Requests: 400, Blocking: true, Seed: 1})
	traces := throughTheWire(t, spans)
	fs := eventLoop(traces)
	if len(fs) != 1 {
		t.Fatalf("want one finding, got %+v", fs)
	}
	f := fs[0]
	if f.Service != "orders" || f.ParentOperation != "POST /orders" || f.Operation != customersCall {
		t.Errorf("finding = %s / %s / %s", f.Service, f.ParentOperation, f.Operation)
	}
	if f.CallsPerTrace != 1 || f.MaxConcurrency != 1 || f.TracesAffected != 400 {
		t.Errorf("calls/trace %v, max concurrency %d, traces %d; want 1, 1, 400", f.CallsPerTrace, f.MaxConcurrency, f.TracesAffected)
	}
	ev := f.Evidence
	if th, _ := ev["threads"].([]string); strings.Join(th, ",") != "vert.x-eventloop-thread-0,vert.x-eventloop-thread-1" {
		t.Errorf("threads = %v", ev["threads"])
	}
	if ev["calls_analysed"] != 400 || ev["callee_service"] != "customers" || ev["call_type"] != "http" {
		t.Errorf("calls_analysed %v, callee %v, call_type %v", ev["calls_analysed"], ev["callee_service"], ev["call_type"])
	}
	// Requests queue behind each other's calls: the waiting ones wait
	// longer than a call lasts, the ones that found the loop free barely
	// wait at all.
	contended, waited := ev["contended_requests"].(int), ev["waited_requests"].(int)
	if contended < 100 || waited != contended {
		t.Errorf("contended %d, waited %d: want many, all of them waiting", contended, waited)
	}
	wait, free, call := ev["mean_wait_ms"].(float64), ev["mean_wait_free_ms"].(float64), ev["mean_call_ms"].(float64)
	if wait < call || free > 0.5 {
		t.Errorf("mean wait %v ms, when free %v ms, call %v ms", wait, free, call)
	}
	if f.ShareOfCriticalPath < 0.1 || f.ShareOfParent < 0.1 || ev["queue_wait_share"].(float64) < 0.1 {
		t.Errorf("share of critical path %v, of parent %v, queue wait share %v", f.ShareOfCriticalPath, f.ShareOfParent, ev["queue_wait_share"])
	}
	if !strings.Contains(f.Summary, "never overlapped") || !strings.Contains(f.Summary, customersCall) {
		t.Errorf("summary = %q", f.Summary)
	}
	// The example shows the queue: its server span idles before the call.
	var ex *trace.Trace
	for _, tr := range traces {
		if tr.ID == ev["example_trace_id"] {
			ex = tr
		}
	}
	if ex == nil {
		t.Fatalf("example trace %v not among the traces", ev["example_trace_id"])
	}
	c := ex.Span(ev["example_call_span_id"].(string))
	if c == nil || c.Start-ex.Root.Start < int64(call*1e6) {
		t.Errorf("example call %v starts %v ns after its request; want at least one call's length", c, c.Start-ex.Root.Start)
	}
}

func TestEventLoopReactiveIsClean(t *testing.T) {
	traces := trace.Group(ordersLoad(ordersOptions{VUs: 16, Loops: 2, Requests: 400, Seed: 1}))
	if m := loopCallConcurrency(traces); m < 3 {
		t.Fatalf("premise: reactive calls should overlap on a loop under this load, max concurrency %d", m)
	}
	if fs := eventLoop(traces); len(fs) != 0 {
		t.Errorf("a non-blocking client was reported: %+v", fs)
	}
}

// One client at a time: blocking and non-blocking clients look the same,
// and neither is reported.
func TestEventLoopSilentWithoutConcurrency(t *testing.T) {
	for _, blocking := range []bool{true, false} {
		traces := trace.Group(ordersLoad(ordersOptions{VUs: 1, Loops: 2, Requests: 200, Blocking: blocking, Seed: 2}))
		if m := loopCallConcurrency(traces); m != 1 {
			t.Fatalf("premise: sequential requests, yet max concurrency %d", m)
		}
		if fs := eventLoop(traces); len(fs) != 0 {
			t.Errorf("blocking=%v, one client: reported %+v", blocking, fs)
		}
	}
}

func TestEventLoopThresholds(t *testing.T) {
	cases := []struct {
		name  string
		o     ordersOptions
		found bool
	}{
		// Each client has a loop of its own: nobody ever competes.
		{"as many loops as clients", ordersOptions{VUs: 2, Loops: 2, Requests: 200, Blocking: true}, false},
		// Four clients on one loop, with a quick single-statement write:
		// the loop is the bottleneck and they compete all the time.
		{"four clients on one loop", ordersOptions{VUs: 4, Loops: 1, Requests: 200, Statements: 1, Blocking: true}, true},
		{"four clients on one loop, reactive", ordersOptions{VUs: 4, Loops: 1, Requests: 200, Statements: 1}, false},
		// Too few requests to have competed EventLoopMinContended times.
		{"a handful of requests", ordersOptions{VUs: 3, Loops: 1, Requests: 4, Blocking: true}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.o.Seed = 3
			fs := eventLoop(trace.Group(ordersLoad(c.o)))
			if got := len(fs) == 1; got != c.found {
				t.Errorf("found = %v, want %v (%+v)", got, c.found, fs)
			}
		})
	}
}

// The same blocking load, but the calls run on worker threads: threads
// that block by design are not event loops, whatever the queueing.
func TestEventLoopIgnoresWorkerThreads(t *testing.T) {
	spans := ordersLoad(ordersOptions{VUs: 16, Loops: 2, Requests: 200, Blocking: true, Seed: 4})
	for _, s := range spans {
		if s.Service == "orders" && strings.HasPrefix(s.Attr("thread.name"), "vert.x-eventloop") {
			s.Attrs.Set("thread.name", strings.Replace(s.Attrs.Value("thread.name"), "vert.x-eventloop-thread", "executor-thread", 1))
		}
	}
	if fs := eventLoop(trace.Group(spans)); len(fs) != 0 {
		t.Errorf("worker threads reported as event loops: %+v", fs)
	}
}

// Two instances of orders have threads of the same name; their calls
// overlap in time, but they are different threads.
func TestEventLoopKeepsInstancesApart(t *testing.T) {
	a := ordersLoad(ordersOptions{VUs: 2, Loops: 2, Requests: 100, Blocking: true, Seed: 5})
	b := ordersLoad(ordersOptions{VUs: 2, Loops: 2, Requests: 100, Blocking: true, Seed: 6})
	other := map[string]string{"service.name": "orders", "service.instance.id": "orders-2"}
	for _, s := range b {
		if s.Service == "orders" {
			s.ResourceAttrs = other
		}
	}
	if fs := eventLoop(trace.Group(append(a, b...))); len(fs) != 0 {
		t.Errorf("two instances' threads were merged: %+v", fs)
	}
}

func TestIsEventLoopThread(t *testing.T) {
	for name, want := range map[string]bool{
		"vert.x-eventloop-thread-0":   true,
		"vert.x-eventloop-thread-13":  true,
		"reactor-http-nio-3":          true,
		"nioEventLoopGroup-2-1":       true,
		"executor-thread-1":           false,
		"vert.x-worker-thread-2":      false,
		"http-nio-8080-exec-4":        false,
		"":                            false,
		"virtual-thread-unparker-for": false,
	} {
		if got := detect.IsEventLoopThread(name); got != want {
			t.Errorf("IsEventLoopThread(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestRegistryHasTheOrdersDetectors(t *testing.T) {
	for _, id := range []string{"event-loop-blocking", "chatty-db"} {
		if d, ok := detect.ByID(id); !ok || d.ID() != id {
			t.Errorf("%s is not registered", id)
		}
	}
}

// A loop that reads the next request only once it is free hides the queue:
// every server span starts right after the previous call on its thread
// ended. What is left to see is the thread: calls that never overlap, fill
// it, and serve one client connection after another while requests are in
// progress on both loops. Calls dominate the request here (one cheap
// statement), as in a service whose handler is the call.
func TestEventLoopBlockingReadWhenFree(t *testing.T) {
	o := ordersOptions{VUs: 20, Loops: 2, Requests: 400, Blocking: true, ReadWhenFree: true, PeerPorts: true,
		Statements: 1, StmtMs: 0.2, Seed: 11}
	traces := trace.Group(ordersLoad(o))
	fs := eventLoop(traces)
	if len(fs) != 1 || fs[0].Operation != customersCall || fs[0].Service != "orders" {
		t.Fatalf("want one finding on the customers call, got %+v", fs)
	}
	if fs[0].Evidence["waited_requests"] != 0 {
		t.Errorf("no wait should show in the traces of this shape, got %v waited", fs[0].Evidence["waited_requests"])
	}
	if p, _ := fs[0].Evidence["free_loop_log10_probability"].(float64); p > math.Log10(detect.EventLoopFalsePositiveRate) {
		t.Errorf("free_loop_log10_probability = %v", fs[0].Evidence["free_loop_log10_probability"])
	}
	if !strings.Contains(fs[0].Summary, "in no span") {
		t.Errorf("summary does not say where the wait is: %s", fs[0].Summary)
	}

	// The same traces without the clients' ports: the shape is not judged.
	o.PeerPorts = false
	if fs := eventLoop(trace.Group(ordersLoad(o))); len(fs) != 0 {
		t.Errorf("without client ports: want no finding, got %s", fs[0].Summary)
	}
}

// A non-blocking client under the same read-when-free loop, at high and at
// low load, and the lookalikes of the blocked shape: one client per loop
// sending back to back on its own connection, and one client opening a new
// connection for every request. None of them blocks a loop.
func TestEventLoopReadWhenFreeNonBlockingIsClean(t *testing.T) {
	cases := map[string]ordersOptions{
		"reactive, 20 clients":                 {VUs: 20, Loops: 2, Requests: 400},
		"reactive, 1 client per loop":          {VUs: 2, Loops: 2, Requests: 200},
		"blocking, 1 client per loop":          {VUs: 2, Loops: 2, Requests: 200, Blocking: true},
		"reactive, 1 client, new connections":  {VUs: 1, Loops: 2, Requests: 200, ConnPerRequest: true},
		"blocking, 1 client, new connections":  {VUs: 1, Loops: 2, Requests: 200, Blocking: true, ConnPerRequest: true},
		"reactive, 2 clients, new connections": {VUs: 2, Loops: 2, Requests: 200, ConnPerRequest: true},
	}
	for name, o := range cases {
		o.ReadWhenFree, o.PeerPorts, o.Statements, o.StmtMs, o.Seed = true, true, 1, 0.2, 12
		if fs := eventLoop(trace.Group(ordersLoad(o))); len(fs) != 0 {
			t.Errorf("%s: want no finding, got %s", name, fs[0].Summary)
		}
	}
}

// The blocked-loop shape that no trace shows (ReadWhenFree), judged on
// evidence across the range a user meets: 1 to 64 clients on 2 loops, each
// thread 5% to 95% occupied. Clients pause for exponential think times, so
// their requests are independent, assumption 1 of freeLoopLogProbability.
//
//   - Free loops (a reactive client) are flagged on no thread: the stated
//     rate is 1e-3 per thread, and 0 of these threads may exceed it.
//   - Blocked loops are flagged on every thread whose calls hold the
//     evidence the derivation needs: at least two connections and enough
//     calls for their occupancy (calls needed, worked out here from the
//     thread's measured occupancy and connections, with a 25% margin for
//     the connections' unequal shares).
func TestEventLoopEvidenceAcrossOccupancyAndClients(t *testing.T) {
	const loops, callMs, cycleMs = 2, 4.0, 4.5 // cycleMs: a request's own work without think time
	judged, found := 0, 0
	for _, clients := range []int{1, 2, 4, 8, 16, 32, 64} {
		for _, occupancy := range []float64{0.05, 0.2, 0.5, 0.8, 0.95} {
			perThread := max(1, clients/loops)
			// The think time that makes a free loop's thread this busy:
			// each client's calls fill p of it, perThread clients 1-(1-p)^k.
			p := 1 - math.Pow(1-occupancy, 1/float64(perThread))
			think := callMs/p - cycleMs
			if think < 0 {
				continue // too few clients to fill the thread that much
			}
			// Short runs leave free loops whose calls happen not to overlap,
			// which only the probability can clear; long runs give blocked
			// loops the calls they need at low occupancy.
			for _, run := range []struct {
				requests int
				blocking bool
			}{{40, false}, {600, false}, {600, true}} {
				blocking := run.blocking
				o := ordersOptions{VUs: clients, Loops: loops, Requests: run.requests, Blocking: blocking, ReadWhenFree: true,
					PeerPorts: true, Statements: 1, StmtMs: 0.2, CallMs: callMs, ThinkMs: think, Seed: int64(clients) * 7}
				traces := trace.Group(ordersLoad(o))
				flagged := map[string]bool{}
				for _, f := range eventLoop(traces) {
					for _, th := range f.Evidence["threads"].([]string) {
						flagged[th] = true
					}
				}
				name := fmt.Sprintf("%d clients, %.0f%% occupancy, %d requests, blocking=%v", clients, 100*occupancy, run.requests, blocking)
				if !blocking {
					if len(flagged) > 0 {
						t.Errorf("%s: free loop flagged on %v", name, flagged)
					}
					continue
				}
				for th, ev := range threadShapes(traces) {
					if ev.conns < 2 || float64(ev.calls) < 1.25*callsNeeded(ev.busy, ev.conns) {
						continue
					}
					judged++
					if flagged[th] {
						found++
					} else {
						t.Errorf("%s: %s holds the evidence (%d calls, %d connections, %.0f%% busy) but was not flagged",
							name, th, ev.calls, ev.conns, 100*ev.busy)
					}
				}
			}
		}
	}
	if judged < 20 {
		t.Errorf("premise: only %d blocked threads held the evidence; the test needs more configurations", judged)
	}
	t.Logf("blocked threads holding the evidence: %d, flagged: %d", judged, found)
}

// callsNeeded is the derivation's bar: n calls with
// (n-1)(k-1) ln(1-u/k) <= ln(rate), for k equally busy connections.
func callsNeeded(u float64, k int) float64 {
	return 1 + math.Log(detect.EventLoopFalsePositiveRate)/(float64(k-1)*math.Log1p(-u/float64(k)))
}

type threadShape struct {
	calls, conns int
	busy         float64
}

// threadShapes measures each event-loop thread as the derivation sees it:
// its calls, the client connections they served, and the share of its
// time from first call to last spent in them.
func threadShapes(traces []*trace.Trace) map[string]threadShape {
	type acc struct {
		conns      map[string]bool
		n          int
		first, end int64
		inCalls    int64
	}
	by := map[string]*acc{}
	for _, tr := range traces {
		for _, s := range tr.Spans {
			th := s.Attr("thread.name")
			if s.Kind != trace.KindClient || !detect.IsEventLoopThread(th) {
				continue
			}
			a := by[th]
			if a == nil {
				a = &acc{conns: map[string]bool{}, first: s.Start}
				by[th] = a
			}
			a.n++
			a.first, a.end = min(a.first, s.Start), max(a.end, s.End)
			a.inCalls += s.Duration()
			a.conns[tr.Parent(s).Attr("network.peer.port")] = true
		}
	}
	out := map[string]threadShape{}
	for th, a := range by {
		out[th] = threadShape{calls: a.n, conns: len(a.conns), busy: float64(a.inCalls) / float64(a.end-a.first)}
	}
	return out
}

// An evenly paced open load on one loop, below its capacity, with calls
// that never overlap. Every bunched-th request arrives during the previous
// call and starts its own only after that one has ended: the shape a pause
// of the whole process (a GC) leaves on a free loop, as seen in a full
// chatty-db run with the non-blocking client (10 of 11 contended requests
// waited, among 1,700), and the shape of a blocked loop when it is common.
func pacedLoopWithBunches(bunched int) []*trace.Trace {
	const slot, pre, call = 16_667_000, 1_500_000, 7_000_000 // ns: 60 req/s, 1.5 ms to the call, a 7 ms call
	o := ordersOptions{Statements: 1, ConnPerRequest: true}
	t0 := time.Date(2025, 6, 2, 10, 0, 0, 0, time.UTC).UnixNano()
	var spans []*trace.Span
	var prev *orderReq
	for i := range 600 {
		at := t0 + int64(i)*slot
		r := &orderReq{conn: i, arrive: at, read: at, traceID: fmt.Sprintf("%032x", i+1), customer: "7"}
		r.callStart = at + pre
		if prev != nil && i%bunched == 0 {
			r.arrive, r.read = prev.callStart+3_000_000, prev.callStart+3_000_000
			r.callStart = prev.callEnd + 2_000_000
		}
		r.callEnd = r.callStart + call
		r.dbStart = r.callEnd + 50_000
		r.stmts = [][2]int64{{r.dbStart, r.dbStart + 2_000_000}}
		r.end = r.dbStart + 2_100_000
		spans = append(spans, r.spans(o)...)
		prev = r
	}
	return trace.Group(spans)
}

func TestEventLoopPausesOfAPacedLoadAreNotBlocking(t *testing.T) {
	rare := pacedLoopWithBunches(50)
	if c := loopCallConcurrency(rare); c != 1 {
		t.Fatalf("premise: calls overlapped (%d at once)", c)
	}
	if fs := eventLoop(rare); len(fs) != 0 {
		t.Errorf("12 bunched requests of 600 at 60 req/s were judged a blocked loop: %s", fs[0].Summary)
	}
	// The same waits in every other request are the load's, not a pause's.
	if fs := eventLoop(pacedLoopWithBunches(2)); len(fs) != 1 {
		t.Errorf("300 of 600 requests waited for the previous call: %d findings, want 1", len(fs))
	}
}
