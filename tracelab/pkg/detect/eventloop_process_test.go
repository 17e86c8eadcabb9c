package detect_test

import (
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"testing"

	"tracelab/pkg/trace"
)

// processOptions describe one process that runs every request on one event
// loop (Node.js, a Python asyncio server), loaded by VUs clients in a
// closed loop, each on its own kept-alive connection.
type processOptions struct {
	VUs, Requests int
	Language      string  // telemetry.sdk.language; "" leaves it out
	Scope         string  // the server span's instrumentation scope
	HoldMs        float64 // the handler's work on the loop, with nothing to wait for
	WaitMs        float64 // then a wait: on the loop when Blocking, else awaited
	Blocking      bool
	TracedWait    bool // the wait is a traced outgoing call (a CLIENT span)
	Seed          int64
}

// processLoad runs the loop: it takes the oldest ready piece of work, runs
// it to its end (a handler's start until its first await, or a resumed
// handler until it answers), and only then the next one. A request whose
// data arrived waits in the socket until the loop reads it; its server
// span starts when its handler does, so a blocked loop's queue shows in no
// span, only in the spans' order.
func processLoad(o processOptions) []*trace.Span {
	rng := rand.New(rand.NewSource(o.Seed))
	jitter := func(ms float64) int64 { return int64(ms * (0.85 + 0.3*rng.Float64()) * 1e6) }
	const intake, think = 60_000, 300_000 // ns: the loop's own work per request; a client's pause

	type work struct {
		at, start int64 // ready since; the server span's start (0 until it starts)
		vu        int
		resumed   bool
	}
	var ready []work // ordered by at
	push := func(w work) {
		i, _ := slices.BinarySearchFunc(ready, w.at, func(x work, at int64) int {
			switch {
			case x.at <= at:
				return -1
			}
			return 1
		})
		ready = slices.Insert(ready, i, w)
	}
	for vu := range o.VUs {
		push(work{at: int64(vu) * 50_000, vu: vu})
	}
	resource := map[string]string{"service.name": "accounts", "process.pid": "4242"}
	if o.Language != "" {
		resource["telemetry.sdk.language"] = o.Language
	}
	var spans []*trace.Span
	finish := func(vu int, start, callStart, callEnd, end int64) {
		n := len(spans)
		id := func(k int) string { return fmt.Sprintf("%016x", n*4+k+1) }
		traceID := fmt.Sprintf("%032x", n+1)
		root := &trace.Span{TraceID: traceID, SpanID: id(0), Name: "GET /hash", Kind: trace.KindServer, Service: "accounts",
			Scope: o.Scope, Start: start, End: end, ResourceAttrs: resource,
			Attrs: trace.AttrsOf(map[string]string{"http.request.method": "GET", "http.route": "/hash",
				"client.address": "127.0.0.1", "client.port": strconv.Itoa(40000 + vu)})}
		spans = append(spans, root)
		if o.TracedWait {
			spans = append(spans, &trace.Span{TraceID: traceID, SpanID: id(1), ParentID: root.SpanID, Name: "GET", Kind: trace.KindClient,
				Service: "accounts", Start: callStart, End: callEnd, ResourceAttrs: resource,
				Attrs: trace.AttrsOf(map[string]string{"http.request.method": "GET", "url.full": "http://127.0.0.1:18701/item/7",
					"server.address": "127.0.0.1", "server.port": "18701"})})
		}
	}
	callStarts := map[int]int64{}
	var now int64
	done := 0
	for done < o.Requests && len(ready) > 0 {
		w := ready[0]
		ready = ready[1:]
		now = max(now, w.at) + intake
		hold, wait := jitter(o.HoldMs), jitter(o.WaitMs)
		switch {
		case w.resumed: // an awaited wait is over: answer
			end := now + 100_000
			finish(w.vu, w.start, callStarts[w.vu], w.at, end)
			now = end
		case o.Blocking || o.WaitMs == 0: // run to the end on the loop
			start := now
			callStart := start + hold
			end := callStart + wait + 100_000
			finish(w.vu, start, callStart, callStart+wait, end)
			now = end
		default: // work, then await the wait, leaving the loop free
			start := now
			callStarts[w.vu] = start + hold
			now = start + hold
			push(work{at: now + wait, start: start, vu: w.vu, resumed: true})
			continue
		}
		done++
		push(work{at: now + think, vu: w.vu})
	}
	return spans
}

func TestEventLoopBlockingOnAProcessLoop(t *testing.T) {
	node := processOptions{VUs: 20, Requests: 300, Language: "nodejs", Scope: "@opentelemetry/instrumentation-http", Seed: 1}
	asgi := processOptions{VUs: 20, Requests: 300, Language: "python", Scope: "opentelemetry.instrumentation.asgi", Seed: 2}
	with := func(o processOptions, f func(*processOptions)) processOptions { f(&o); return o }
	for _, tc := range []struct {
		name      string
		o         processOptions
		operation string // the finding's operation; "" for no finding
	}{
		{"Node.js, CPU work on the loop (pbkdf2Sync)", with(node, func(o *processOptions) { o.HoldMs = 10 }), "GET /hash"},
		{"Node.js, the same work awaited (pbkdf2)", with(node, func(o *processOptions) { o.HoldMs = 0.1; o.WaitMs = 10 }), ""},
		{"Node.js, a quick synchronous handler", with(node, func(o *processOptions) { o.HoldMs = 0.3 }), ""},
		{"Node.js, one client: no evidence", with(node, func(o *processOptions) { o.HoldMs = 10; o.VUs = 1 }), ""},
		{"asyncio, a synchronous HTTP call", with(asgi, func(o *processOptions) {
			o.HoldMs, o.WaitMs, o.Blocking, o.TracedWait = 0.5, 6, true, true
		}), "GET 127.0.0.1:18701/item/{id}"},
		{"asyncio, the same call awaited", with(asgi, func(o *processOptions) { o.HoldMs, o.WaitMs, o.TracedWait = 0.5, 6, true }), ""},
		{"asyncio, time.sleep", with(asgi, func(o *processOptions) { o.HoldMs, o.WaitMs, o.Blocking = 0.5, 10, true }), "GET /hash"},
		{"Python on a WSGI server: threads, not a loop", with(asgi, func(o *processOptions) {
			o.Scope, o.HoldMs, o.WaitMs, o.Blocking = "opentelemetry.instrumentation.flask", 0.5, 10, true
		}), ""},
		{"no runtime on the resource", with(node, func(o *processOptions) { o.Language, o.HoldMs = "", 10 }), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spans := processLoad(tc.o)
			fs := eventLoop(throughTheWire(t, spans))
			if tc.operation == "" {
				if len(fs) != 0 {
					t.Fatalf("want no finding, got %s", fs[0].Summary)
				}
				return
			}
			if len(fs) != 1 {
				t.Fatalf("want one finding, got %d", len(fs))
			}
			f := fs[0]
			if f.Service != "accounts" || f.Operation != tc.operation || f.ParentOperation != "GET /hash" {
				t.Errorf("finding %s / %s / %s, want accounts / %s / GET /hash", f.Service, f.Operation, f.ParentOperation, tc.operation)
			}
			if f.Evidence["loop"] != "process" || f.Evidence["runtime"] != tc.o.Language {
				t.Errorf("loop %v, runtime %v", f.Evidence["loop"], f.Evidence["runtime"])
			}
			if f.MaxConcurrency != 1 || f.TracesAffected != tc.o.Requests {
				t.Errorf("max concurrency %d, traces %d", f.MaxConcurrency, f.TracesAffected)
			}
			t.Log(f.Summary)
		})
	}
}
