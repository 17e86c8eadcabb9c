package detect

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"tracelab/pkg/trace"
)

func init() { Register(EventLoopBlocking{}) }

// The event-loop-blocking thresholds. There is no public anchor to borrow
// from: Vert.x's own BlockedThreadChecker only warns after a task has held
// an event loop for 2 s (VertxOptions.DEFAULT_MAX_EVENT_LOOP_EXECUTE_TIME),
// and case study 000's 4 ms call to service B never came near it. The
// numbers below are the lab's own, chosen from the shape of the evidence.
const (
	// EventLoopMinContended is how many requests must have competed for one
	// event-loop thread (arrived while another request's call was in flight
	// there, or had one run while they waited) before the thread is judged.
	// Below it there is no evidence either way; 5 matches the repeat count
	// the n-plus-one detector needs.
	EventLoopMinContended = 5

	// EventLoopMinWaitedShare is the share of those contended requests that
	// must have waited: their own call began only once the other call had
	// ended. A blocked loop makes every one of them wait (share 1). With a
	// non-blocking client a contended request waits only when the other
	// call happens to end in the short moment between its arrival and its
	// own call, so the share is about wait / (wait + call duration): under
	// 0.1 for the lab's 4 ms calls (0 to 7% in the tests' simulated load).
	// 0.9 leaves room for the odd span end that is recorded late (see
	// eventLoopSlack).
	EventLoopMinWaitedShare = 0.9

	// EventLoopMinLoadContention is how much of the contention the load
	// would make must be there before the waits are judged. Were requests
	// to arrive independently of the thread's calls, each would find a
	// call in flight with the probability of the thread's busy share
	// (Poisson arrivals see time averages), and a blocked loop, behind
	// which requests pile up, makes more contend. An evenly paced load
	// below the thread's capacity makes far fewer: those that contend are
	// the ones a pause of the whole process (a GC, a descheduled CPU)
	// bunched, and the pause holds a free loop's next call back as a
	// blocked loop would. In a full chatty-db run with the non-blocking
	// client, 11 of a thread's 1,700 requests contended at a busy share
	// of about 0.2, where independent arrivals would make 340, and 10 of
	// the 11 waited. Half the busy share leaves room for a closed load's
	// ramp up and down; a blocked loop under load is far above it (the
	// eventloop baseline: 108 of a thread's 120 requests contended at a
	// busy share of 0.94).
	EventLoopMinLoadContention = 0.5

	// eventLoopSlack is how far a call may seem to overlap the next one on
	// the same thread and still count as finished before it. A blocking
	// client's span can end a moment after the thread was released (the
	// span is closed by the I/O thread that completed the response), which
	// would otherwise read as two calls in flight at once. 100 µs is well
	// under a network round trip and well over that hand-off.
	//
	// A process loop's turn is its server span, and that span can end well
	// after the loop moved on: Node.js's HTTP instrumentation ends it when
	// the response has been handed to the socket ('finish'), which the loop
	// reports only once it gets back to that socket, after it started the
	// next request. See loopCall.end.
	eventLoopSlack = 100_000 // ns

	// EventLoopFalsePositiveRate judges the other shape a blocked loop
	// leaves: a loop that reads the next request only once it is free starts
	// each server span just after the previous call on that thread ended, so
	// no trace shows a wait. What shows is the thread: calls of different
	// client connections that never overlap. The thread is flagged when that
	// pattern would be this unlikely were the loop free (see
	// freeLoopLogProbability for the derivation and its assumptions). It is
	// a rate per thread judged: a report that judges 8 event-loop threads of
	// free loops flags one of them falsely less than once in 125 analyses.
	// The calls needed follow from it: at occupancy u shared by k equally
	// busy connections, n calls with (n-1) (k-1) ln(1 - u/k) <= ln(1e-3),
	// so 26 calls at 50% and 2 connections, 12 at 75% and 8, 40 at 20% and
	// 8, 159 at 5% and 8.
	EventLoopFalsePositiveRate = 1e-3

	// EventLoopMinTurn is how long, at the median, a process loop's turns
	// (see processLoop) must hold it before they count as blocking. A loop
	// that runs one handler at a time always serves its requests one after
	// another: a handler with nothing to wait for holds it for its own
	// work, however well written, so the shape alone cannot tell a quick
	// synchronous handler from one that blocks. The length can. Node.js's
	// event-loop lag watchers report a loop held up for 10 ms or more
	// (the default threshold of the blocked, block-event and eventloop-info
	// packages). A loop is judged only once EventLoopMinContended requests
	// competed for it; with that many queued, turns of 2 ms make the last
	// one wait 10 ms. Shorter turns need more requests queued before any
	// wait reaches what those watchers report. The JVM's loop threads need
	// no such floor: there the calls judged are waits, never the work.
	EventLoopMinTurn = 2_000_000 // ns
)

// eventLoopThreadPrefixes name the threads that run event loops. Vert.x
// (and so Quarkus) calls them vert.x-eventloop-thread-N; Netty's default
// thread factory names them after the event loop group's class, and
// Reactor Netty (Spring WebFlux) uses its own prefixes.
var eventLoopThreadPrefixes = []string{
	"vert.x-eventloop-thread-",
	"reactor-http-nio-", "reactor-http-epoll-",
	"nioEventLoopGroup-", "epollEventLoopGroup-", "multiThreadIoEventLoopGroup-",
}

// processLoop reports whether s is a server span of a process that runs
// every request on one event loop: Node.js, and Python served by an
// asyncio server. The resource says which runtime wrote the span
// (telemetry.sdk.language, which every OpenTelemetry SDK sets); for Python,
// where the same SDK serves threaded WSGI servers too, the server span's
// instrumentation says whether the server is an asyncio one. Where neither
// says, the process is not judged as a loop: its server spans may run on a
// pool of threads, and one after another is then no evidence of a wait.
func processLoop(s *trace.Span) bool {
	if s.Kind != trace.KindServer {
		return false
	}
	switch s.ResourceAttrs["telemetry.sdk.language"] {
	case "nodejs":
		return true // JavaScript runs on one thread per process
	case "python":
		return slices.Contains(asyncioServerScopes, s.Scope)
	}
	return false
}

// asyncioServerScopes are the OpenTelemetry Python instrumentations whose
// server spans come from an asyncio server: ASGI (FastAPI and Starlette
// through it), aiohttp's server and Tornado. Django and Flask may run on
// threads, so their instrumentations are not here.
var asyncioServerScopes = []string{
	"opentelemetry.instrumentation.asgi",
	"opentelemetry.instrumentation.fastapi",
	"opentelemetry.instrumentation.starlette",
	"opentelemetry.instrumentation.aiohttp_server",
	"opentelemetry.instrumentation.tornado",
}

// IsEventLoopThread reports whether a thread.name belongs to an event loop.
func IsEventLoopThread(name string) bool {
	for _, p := range eventLoopThreadPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// EventLoopBlocking finds outgoing calls that block an event-loop thread.
//
// A client span started on an event-loop thread proves nothing alone:
// non-blocking clients start their calls there too. What differs is what
// happens when requests compete for the thread. A blocked thread cannot
// start another call (or run anything else) until the current one
// returns, so its calls never overlap and the other requests wait; a
// non-blocking client lets the second call start at once, so the calls
// overlap. The detector looks at every event-loop thread across all
// traces and flags it on either of the two shapes the wait leaves:
//
//   - the wait shows in the traces: a loop that reads every request that
//     has arrived starts their server spans together, and then serves
//     them one call after another (waitedForThread);
//   - the wait shows in no trace: a loop that reads the next request only
//     once it is free starts each server span just after the previous
//     call ended. The thread then shows calls that never overlap, fill
//     it, and serve client connections that take turns (saturated).
//
// With one request at a time both clients produce the same traces: calls
// never overlap because nothing else is running, and nobody waits. Such
// data holds no evidence either way, and the detector stays silent rather
// than guess from the thread name.
//
// On Node.js and on a Python asyncio server the loop is the process, and
// it records no thread name. There the detector judges the process's
// server spans themselves, as the turns a request takes on the loop: a
// handler that awaits its I/O lets the next request's span start, so
// spans overlap; one that blocks (a synchronous call, a synchronous
// database driver, a sleep, long CPU work) runs alone from start to end.
// The same two shapes apply, with the caller's CLIENT span, when it is
// traced, as the request's arrival, and the turns must also be long (see
// EventLoopMinTurn). The finding names the call that took most of a turn,
// or the handler itself when no traced call did (CPU work, a sleep).
type EventLoopBlocking struct{}

// ID implements Detector.
func (EventLoopBlocking) ID() string { return "event-loop-blocking" }

// loopCall is one outgoing call started on an event-loop thread, or one
// turn of a process loop: a server span of the process. It holds what the
// judgment and a finding read of the call, its trace and its handler, and
// no span: the collector keeps every loop call of the input until the
// end, and kept traces (their spans, attributes and trees) were more than
// half the memory of a million real spans.
type loopCall struct {
	tr      *loopTrace
	seq     int32    // the call's place in its trace's Spans: the order calls are judged in
	call    callSpan // the call's span
	handled bool     // a request span (SERVER or CONSUMER) serves it: arrival is known
	arrival int64    // when the request arrived: its caller's send, else its handler's start
	conn    string   // the handler's clientConnection, "" when not known
	thread  threadKey
	key     *eventLoopKey
	detail  loopDetail
}

// callSpan is the times of a call's span.
type callSpan struct{ Start, End int64 }

// Duration is trace.Span's.
func (s callSpan) Duration() int64 { return max(0, s.End-s.Start) }

// loopDetail is what a finding's evidence says of its example call.
type loopDetail struct {
	spanID   string
	callType trace.CallType
	callee   string // calleeOf the call
	turn     bool   // a process loop's turn: the call is the handler
	runtime  string // a turn's telemetry.sdk.language
	blocker  *blockerDetail
}

// blockerDetail is a turn's blockingCall.
type blockerDetail struct {
	op, spanID string
	callType   trace.CallType
	callee     string
}

// loopTrace is what the findings read of a trace with loop calls.
type loopTrace struct {
	id        string
	rootStart int64 // with id, Group's order, in which calls are judged
	dur       int64 // the trace's Duration
	request   string
	// groups are the per-trace sums of a finding, one per key of the
	// trace's calls, computed when the key's calls are all on one loop:
	// they then count whole or not at all. Otherwise t is kept, and the
	// sums are computed from the calls of the loops found blocking.
	groups []loopGroup
	t      *trace.Trace
}

// loopGroup is, for the calls of one key in a trace: the critical-path
// time under their wrappers, the union of their spans, and the duration
// of the request span of the first (-1 when it has none).
type loopGroup struct {
	key                         *eventLoopKey
	critical, union, requestDur int64
}

// threadKey identifies a loop across traces: an event-loop thread (names
// repeat in every process, so the service instance is part of it), or a
// whole process, with no name.
type threadKey struct{ service, instance, name string }

// end is when the call (or turn) stopped holding the loop, at the latest.
// A call on a loop thread held it until its span ended, but for
// eventLoopSlack. A process loop's turn held it until it answered, and
// its server span may end later (see eventLoopSlack), by as long as the
// loop took to get back to the socket (0.3 to 0.6 ms after turns of 10 ms
// in the node-express-cpu-sync recording). So a turn counts as holding the
// loop for its first half only. Turns of handlers that await their I/O
// overlap by the wait, most of each turn, and still count as overlapping;
// the turns of a blocked loop overlap by the answer's way out, short
// against any turn long enough to judge (EventLoopMinTurn).
func (c loopCall) end() int64 {
	if c.thread.name == "" {
		return c.call.Start + c.call.Duration()/2
	}
	return max(c.call.Start, c.call.End-eventLoopSlack)
}

// loopName is how a finding names the loop.
func (k threadKey) loopName() string {
	if k.name != "" {
		return k.name
	}
	return "process " + strings.TrimPrefix(k.instance, "/") // no host.name: the pid alone
}

// threadEvidence is what one thread's calls show.
type threadEvidence struct {
	calls     []loopCall
	contended int   // requests that competed for the thread
	waited    int   // ... and waited for it
	waitTime  int64 // summed arrival-to-call time of those that waited
	free      int   // requests that found the thread free
	freeTime  int64 // summed arrival-to-call time of those
	maxConc   int
	waits     map[callID]int64 // call -> its wait, for the requests that waited

	busyShare   float64 // share of the thread's time, first call to last, inside its calls
	takeTurns   bool    // kept-alive client connections took turns on it, see connectionsTakeTurns
	logFreeProb float64 // freeLoopLogProbability of its calls; 0 when not judged
	medianCall  int64   // the median call's duration
}

// process reports whether the loop is a whole process (see processLoop).
func (e *threadEvidence) process() bool { return e.calls[0].thread.name == "" }

func (e *threadEvidence) blocking() bool {
	if e.process() && e.medianCall < EventLoopMinTurn {
		return false
	}
	return e.waitedForThread() || e.saturated()
}

// waitedForThread is the shape a trace shows: requests that arrived and
// then waited for another request's call on the thread.
func (e *threadEvidence) waitedForThread() bool {
	judged := float64(e.contended + e.free)
	return e.contended >= EventLoopMinContended &&
		float64(e.contended) >= EventLoopMinLoadContention*e.busyShare*judged &&
		float64(e.waited) >= EventLoopMinWaitedShare*float64(e.contended)
}

// saturated is the shape only the thread shows: see
// EventLoopFalsePositiveRate.
func (e *threadEvidence) saturated() bool {
	return e.maxConc <= 1 && e.takeTurns && e.logFreeProb <= math.Log(EventLoopFalsePositiveRate)
}

// eventLoopKey identifies one finding.
type eventLoopKey struct {
	service string // the service whose event loop is blocked
	request string // requestOf the trace
	handler string // trace.Operation of the request's server span, if any
	call    string // trace.Operation of the blocking call
}

func keyOf(t *trace.Trace, call, handler *trace.Span) eventLoopKey {
	k := eventLoopKey{service: call.Service, request: requestOf(t), call: t.Operation(call)}
	if handler != nil {
		k.handler = t.Operation(handler)
	}
	if call == handler { // a process loop's turn: what held it is eventLoopAgg.blocker's
		k.call = ""
	}
	return k
}

// eventLoopAgg sums one finding over the blocked threads and the traces.
type eventLoopAgg struct {
	threads                 map[string]bool // the loops' names
	process                 bool            // the loops are processes, not threads
	blockers                map[string]int  // process loops: turns per blockingCall operation, "" for none
	byTrace                 map[*loopTrace][]*loopCall
	calls                   int
	callTime                int64
	contended, waited, free int
	waitTime, freeTime      int64
	waitShare               float64 // summed wait / request duration, over the requests that waited
	maxConc                 int
	saturated               int     // threads flagged by their calls' pattern alone
	busyShare               float64 // summed over those threads
	logFreeProb             float64 // the largest freeLoopLogProbability of those threads
	example                 *loopTrace
	exampleCall             *loopCall
	exampleWait             int64
}

// Detect implements Detector.
func (d EventLoopBlocking) Detect(traces []*trace.Trace) []Finding { return detectEach(d, traces) }

// Aggregator implements PerTrace. A loop is judged by all its calls,
// whichever trace they are in, so nothing is judged before Findings: Add
// keeps each loop call (loopCall), the few numbers of it a judgment and a
// finding read, and lets the trace go.
func (d EventLoopBlocking) Aggregator() Aggregator {
	return &eventLoopCollector{id: d.ID(), strs: map[string]string{}, keys: map[eventLoopKey]*eventLoopKey{}}
}

type eventLoopCollector struct {
	id    string
	calls []loopCall
	strs  map[string]string // the names calls share, held once
	keys  map[eventLoopKey]*eventLoopKey
}

// str returns s held by the collector: a copy, so that no span's memory
// stays alive through a substring of it (the parser cuts a span's ids and
// long values from one string), shared by every call that names it.
func (a *eventLoopCollector) str(s string) string {
	if v, ok := a.strs[s]; ok {
		return v
	}
	v := strings.Clone(s)
	a.strs[v] = v
	return v
}

func (a *eventLoopCollector) key(k eventLoopKey) *eventLoopKey {
	if p := a.keys[k]; p != nil {
		return p
	}
	k = eventLoopKey{a.str(k.service), a.str(k.request), a.str(k.handler), a.str(k.call)}
	p := &k
	a.keys[k] = p
	return p
}

// Findings implements Aggregator.
func (col *eventLoopCollector) Findings() []Finding {
	// Calls are judged in the order Detect once read them from traces in
	// Group's order, whatever order the traces were added in: ties
	// between calls that start at one instant are then broken alike.
	sort.Slice(col.calls, func(i, j int) bool { return col.calls[i].before(&col.calls[j]) })
	byThread := map[threadKey]*threadEvidence{}
	for _, c := range col.calls {
		e := byThread[c.thread]
		if e == nil {
			e = &threadEvidence{}
			byThread[c.thread] = e
		}
		e.calls = append(e.calls, c)
	}
	col.calls = nil
	aggs := map[eventLoopKey]*eventLoopAgg{}
	for _, e := range byThread {
		e.judge()
		if !e.blocking() {
			continue
		}
		// A thread normally serves one request type making one call; if it
		// serves several, each finding gets the thread's counts.
		counted := map[*eventLoopAgg]bool{}
		for i := range e.calls {
			c := &e.calls[i]
			k := *c.key
			a := aggs[k]
			if a == nil {
				a = &eventLoopAgg{threads: map[string]bool{}, byTrace: map[*loopTrace][]*loopCall{}, blockers: map[string]int{}}
				aggs[k] = a
			}
			a.calls++
			a.callTime += c.call.Duration()
			if c.detail.turn {
				op := ""
				if b := c.detail.blocker; b != nil {
					op = b.op
				}
				a.blockers[op]++
			}
			a.byTrace[c.tr] = append(a.byTrace[c.tr], c)
			if w, ok := e.waits[c.id()]; ok {
				if dur := c.tr.dur; dur > 0 {
					a.waitShare += math.Min(1, float64(w)/float64(dur))
				}
				// The longest wait makes the clearest example: a server
				// span that sits idle before its call starts.
				if a.example == nil || w > a.exampleWait || w == a.exampleWait && c.tr.id < a.example.id {
					a.example, a.exampleCall, a.exampleWait = c.tr, c, w
				}
			}
			if !counted[a] {
				counted[a] = true
				a.threads[e.calls[0].thread.loopName()] = true
				a.process = e.process()
				a.contended += e.contended
				a.waited += e.waited
				a.waitTime += e.waitTime
				a.free += e.free
				a.freeTime += e.freeTime
				a.maxConc = max(a.maxConc, e.maxConc)
				if !e.waitedForThread() {
					if a.saturated == 0 || e.logFreeProb > a.logFreeProb {
						a.logFreeProb = e.logFreeProb
					}
					a.saturated++
					a.busyShare += e.busyShare
				}
			}
		}
	}

	findings := make([]Finding, 0, len(aggs))
	for k, a := range aggs {
		findings = append(findings, a.finding(col.id, k))
	}
	Sort(findings)
	return findings
}

func (a *eventLoopAgg) finding(id string, k eventLoopKey) Finding {
	traces := make([]*loopTrace, 0, len(a.byTrace))
	for t := range a.byTrace {
		traces = append(traces, t)
	}
	sort.Slice(traces, func(i, j int) bool { return traces[i].id < traces[j].id }) // a stable sum and example
	var shareParent, shareCP float64
	for _, t := range traces {
		g := t.group(a.byTrace[t])
		if dur := t.dur; dur > 0 {
			shareCP += float64(g.critical) / float64(dur)
		}
		if g.requestDur > 0 {
			shareParent += math.Min(1, float64(g.union)/float64(g.requestDur))
		}
	}
	if a.example == nil { // only when no request of this call waited
		a.example, a.exampleCall = traces[0], a.byTrace[traces[0]][0]
	}
	n := float64(len(a.byTrace))
	threads := slices.Sorted(maps.Keys(a.threads))
	f := Finding{
		Detector:            id,
		Service:             k.service,
		Request:             k.request,
		ParentOperation:     k.handler,
		Operation:           k.call,
		CallsPerTrace:       round(float64(a.calls)/n, 2),
		MaxConcurrency:      a.maxConc,
		ShareOfParent:       round(shareParent/n, 4),
		ShareOfCriticalPath: round(shareCP/n, 4),
		TracesAffected:      len(a.byTrace),
		Evidence: map[string]any{
			"example_trace_id":     a.example.id,
			"example_call_span_id": a.exampleCall.detail.spanID,
			"request":              a.example.request,
			"call_type":            string(a.exampleCall.detail.callType),
			"threads":              threads,
			"calls_analysed":       a.calls,
			"mean_call_ms":         meanMs(a.callTime, a.calls),
			"contended_requests":   a.contended,
			"waited_requests":      a.waited,
			"mean_wait_ms":         meanMs(a.waitTime, a.waited),
			"mean_wait_free_ms":    meanMs(a.freeTime, a.free),
			"queue_wait_share":     round(a.waitShare/math.Max(1, float64(a.waited)), 4),
		},
	}
	if callee := a.exampleCall.detail.callee; callee != "" {
		f.Evidence["callee_service"] = callee
	}
	if a.process {
		return a.processFinding(f, threads)
	}
	in := ""
	if k.handler != "" {
		in = " in " + k.handler
	}
	if a.saturated == len(threads) {
		busy := a.busyShare / float64(a.saturated)
		log10 := math.Max(a.logFreeProb/math.Ln10, -300) // -Inf when a connection filled the thread
		f.Evidence["thread_busy_share"] = round(busy, 4)
		f.Evidence["free_loop_log10_probability"] = round(log10, 1)
		f.Summary = fmt.Sprintf("%s blocks its event-loop %s %s with %s%s (%.1f ms per call): the calls of different client connections on one thread never overlapped, filling %.0f%% of its time; were the loop free, that would happen with probability 1e%.0f. Requests queued for the thread before their spans began, so the wait is in no span. The calls are %.0f%% of the request's critical path. Use a non-blocking client, or make the call on a worker thread.",
			k.service, plural(len(threads), "thread", "threads"), strings.Join(threads, ", "), k.call, in,
			f.Evidence["mean_call_ms"], 100*busy, math.Floor(log10), 100*f.ShareOfCriticalPath)
		return f
	}
	f.Summary = fmt.Sprintf("%s blocks its event-loop %s %s with %s%s (%.1f ms per call): calls on one thread never overlapped, and %d of %d requests that competed for a thread waited for it (%.1f ms from arrival to call on average, against %.1f ms when the thread was free). The calls are %.0f%% of the request's critical path; the waits %.0f%% of a waiting request. Use a non-blocking client, or make the call on a worker thread.",
		k.service, plural(len(threads), "thread", "threads"), strings.Join(threads, ", "), k.call, in,
		f.Evidence["mean_call_ms"], a.waited, a.contended, f.Evidence["mean_wait_ms"], f.Evidence["mean_wait_free_ms"],
		100*f.ShareOfCriticalPath, 100*f.Evidence["queue_wait_share"].(float64))
	return f
}

// processFinding words a finding on process loops, whose calls are the
// turns: the server spans.
func (a *eventLoopAgg) processFinding(f Finding, loops []string) Finding {
	// The loops are processes, and the calls analysed their turns: the
	// server spans, which are no call of a type.
	f.Evidence["loop"] = "process"
	f.Evidence["runtime"] = a.exampleCall.detail.runtime
	f.Evidence["loops"] = f.Evidence["threads"]
	delete(f.Evidence, "threads")
	delete(f.Evidence, "call_type")
	what := "in the handler itself, with no traced call (CPU work, a sleep, or a call nobody traced)"
	fix := "Move the work off the loop (a worker thread or pool) or make it asynchronous."
	f.Operation = f.ParentOperation
	if call := a.blocker(); call != "" {
		f.Operation = call
		what = "mostly in " + call
		fix = "Use an asynchronous client and await it, or run the call in a thread pool."
		if b := a.exampleCall.detail.blocker; b != nil {
			f.Evidence["blocking_call_span_id"] = b.spanID
			f.Evidence["call_type"] = string(b.callType)
			if b.callee != "" {
				f.Evidence["callee_service"] = b.callee
			}
		}
	}
	shape := fmt.Sprintf("%d of %d requests that competed for the loop waited for it", a.waited, a.contended)
	if a.saturated == len(loops) {
		busy := a.busyShare / float64(a.saturated)
		log10 := math.Max(a.logFreeProb/math.Ln10, -300)
		f.Evidence["thread_busy_share"] = round(busy, 4)
		f.Evidence["free_loop_log10_probability"] = round(log10, 1)
		shape = fmt.Sprintf("requests of different client connections never overlapped, filling %.0f%% of its time; were the handlers to yield while they wait, that would happen with probability 1e%.0f", 100*busy, math.Floor(log10))
	}
	f.Summary = fmt.Sprintf("%s blocks the event loop of its %s for %.1f ms per %s request, %s: %s. The turns are %.0f%% of the request's critical path. %s",
		f.Service, strings.Join(loops, ", "), f.Evidence["mean_call_ms"], f.ParentOperation, what, shape, 100*f.ShareOfCriticalPath, fix)
	return f
}

// blocker is the call that held most of the process loop's turns, each
// for at least half its time (see blockingCall), or "" when in most turns
// none did.
func (a *eventLoopAgg) blocker() string {
	best, n := "", a.blockers[""]
	for op, c := range a.blockers {
		if op != "" && (c > n || c == n && op < best) {
			best, n = op, c
		}
	}
	return best
}

// Add implements Aggregator: it keeps t's calls made on an event-loop
// thread and the turns of its process loops.
func (col *eventLoopCollector) Add(t *trace.Trace) {
	first := len(col.calls)
	var lt *loopTrace
	add := func(seq int, s, handler *trace.Span, c loopCall) {
		if lt == nil {
			lt = &loopTrace{id: strings.Clone(t.ID), rootStart: t.Root.Start, dur: t.Duration(), request: col.str(t.Fingerprint(t.Root))}
		}
		c.tr, c.seq, c.call = lt, int32(seq), callSpan{s.Start, s.End}
		if handler != nil {
			c.handled, c.conn = true, col.str(clientConnection(handler))
		}
		c.thread = threadKey{col.str(c.thread.service), col.str(c.thread.instance), col.str(c.thread.name)}
		c.key = col.key(keyOf(t, s, handler))
		c.detail = loopDetail{spanID: strings.Clone(s.SpanID), callType: trace.Classify(s), callee: col.str(calleeOf(t, s))}
		if s == handler && c.thread.name == "" {
			c.detail.turn, c.detail.runtime = true, col.str(s.ResourceAttrs["telemetry.sdk.language"])
			if b := blockingCall(t, s); b != nil {
				c.detail.blocker = &blockerDetail{op: col.str(t.Operation(b)), spanID: strings.Clone(b.SpanID),
					callType: trace.Classify(b), callee: col.str(calleeOf(t, b))}
			}
		}
		col.calls = append(col.calls, c)
	}
	for i, s := range t.Spans {
		if processLoop(s) {
			add(i, s, s, loopCall{arrival: arrivalOf(t, s), thread: threadKey{s.Service, instanceOf(s), ""}})
			continue
		}
		if !t.IsCall(s) {
			continue
		}
		name := s.Attr("thread.name")
		if !IsEventLoopThread(name) {
			continue
		}
		if p := t.Parent(s); p != nil && p.Service == s.Service && t.IsCall(p) {
			continue // a lower layer of a call already counted
		}
		c := loopCall{arrival: s.Start, thread: threadKey{s.Service, instanceOf(s), name}}
		var handler *trace.Span
		if h := requestSpan(t, s); h != nil && (h.Kind == trace.KindServer || h.Kind == trace.KindConsumer) {
			handler, c.arrival = h, h.Start
		}
		add(i, s, handler, c)
	}
	if lt != nil {
		lt.groupCalls(t, col.calls[first:])
	}
}

// groupCalls computes lt.groups from its trace t and its calls, or keeps
// t when the calls of one key are on several loops.
func (lt *loopTrace) groupCalls(t *trace.Trace, calls []loopCall) {
	for i := range calls {
		k := calls[i].key
		if slices.ContainsFunc(lt.groups, func(g loopGroup) bool { return g.key == k }) {
			continue
		}
		var spans []*trace.Span
		for j := i; j < len(calls); j++ {
			if calls[j].key != k {
				continue
			}
			if calls[j].thread != calls[i].thread {
				lt.groups, lt.t = nil, t
				return
			}
			spans = append(spans, t.Spans[calls[j].seq])
		}
		lt.groups = append(lt.groups, groupOf(t, k, spans))
	}
}

// groupOf is the loopGroup of calls, in span order.
func groupOf(t *trace.Trace, k *eventLoopKey, calls []*trace.Span) loopGroup {
	g := loopGroup{key: k, critical: t.CriticalTimeUnder(wrappers(t, calls)), union: trace.UnionLength(trace.Intervals(calls)), requestDur: -1}
	if h := requestSpan(t, calls[0]); h != nil {
		g.requestDur = h.Duration()
	}
	return g
}

// group is the loopGroup of calls, this trace's calls of one finding.
func (lt *loopTrace) group(calls []*loopCall) loopGroup {
	k := calls[0].key
	if lt.t != nil {
		spans := make([]*trace.Span, len(calls))
		for i, c := range calls {
			spans[i] = lt.t.Spans[c.seq]
		}
		return groupOf(lt.t, k, spans)
	}
	for _, g := range lt.groups {
		if g.key == k {
			return g
		}
	}
	panic("event-loop-blocking: a call of a key its trace did not group")
}

// callID names a call across the judgment's copies of it.
type callID struct {
	tr  *loopTrace
	seq int32
}

func (c *loopCall) id() callID { return callID{c.tr, c.seq} }

// before is Group's order of traces, then the order of spans in a trace.
func (c *loopCall) before(o *loopCall) bool {
	return spanBefore(c.tr.rootStart, c.tr.id, c.seq, o.tr.rootStart, o.tr.id, o.seq)
}

// spanBefore orders spans kept apart from their traces as Group orders
// traces (by the root's start, then by id), and a trace's own spans by
// their place in it; the detectors that judge across traces read their
// calls in this order whatever order the traces came in.
func spanBefore(aStart int64, aID string, aSeq int32, bStart int64, bID string, bSeq int32) bool {
	if aStart != bStart {
		return aStart < bStart
	}
	if aID != bID {
		return aID < bID
	}
	return aSeq < bSeq
}

// arrivalOf is when the request a server span serves was sent: its caller's
// CLIENT span's start when the caller is traced, else the span's own start.
func arrivalOf(t *trace.Trace, server *trace.Span) int64 {
	if p := t.Parent(server); p != nil && p.Kind == trace.KindClient && p.Service != server.Service {
		return min(p.Start, server.Start)
	}
	return server.Start
}

// blockingCall is what held a process loop's turn: the call under the
// server span that took at least half of it, or nil when none did (the
// handler computed, slept, or made a call nobody traced).
func blockingCall(t *trace.Trace, server *trace.Span) *trace.Span {
	for _, c := range t.OwnCallsUnder(server) {
		if 2*c.Duration() >= server.Duration() {
			return c
		}
	}
	return nil
}

// judge classifies each request that made a call on the thread:
//
//   - overlapped: another request's call was still in flight when its own
//     call started. The thread was not held, whatever else happened.
//   - waited: not overlapped, and another request's call ended between its
//     arrival (the start of its server span) and its own call. It had to
//     wait for the thread.
//   - free: neither; nothing competed with it.
//
// Contended requests are the overlapped plus the waited ones.
//
// Only waits that show in the request's own trace count here. A request
// that arrives while the loop is blocked is often not even read until the
// call ends, so its server span starts late and its wait is invisible;
// busyShare and takeTurns judge that shape from the thread instead.
func (e *threadEvidence) judge() {
	n := len(e.calls)
	byStart := make([]loopCall, n)
	copy(byStart, e.calls)
	sort.Slice(byStart, func(i, j int) bool { return byStart[i].call.Start < byStart[j].call.Start })
	byEnd := make([]loopCall, n)
	copy(byEnd, e.calls)
	sort.Slice(byEnd, func(i, j int) bool { return byEnd[i].call.End < byEnd[j].call.End })

	iv := make([]trace.Interval, n)
	var longest int64
	for i, c := range byStart {
		iv[i] = trace.Interval{Start: c.call.Start, End: c.end()}
		longest = max(longest, c.call.Duration())
	}
	e.maxConc = trace.MaxConcurrency(iv)
	e.waits = map[callID]int64{}
	if window := byEnd[n-1].call.End - byStart[0].call.Start; window > 0 {
		e.busyShare = float64(trace.UnionLength(intervalsOf(byStart))) / float64(window)
	}
	durations := make([]int64, n)
	for i, c := range byStart {
		durations[i] = c.call.Duration()
	}
	slices.Sort(durations)
	e.medianCall = durations[n/2]
	e.takeTurns = connectionsTakeTurns(byStart)
	if e.maxConc <= 1 && e.takeTurns {
		e.logFreeProb = freeLoopLogProbability(byStart)
	}

	for i, c := range byStart {
		if !c.handled {
			continue // no arrival time: cannot tell waiting from working
		}
		s := c.call.Start
		a := min(c.arrival, s)

		overlapped := false
		for j := i - 1; j >= 0 && byStart[j].call.Start >= s-longest; j-- {
			o := byStart[j]
			if o.tr != c.tr && o.end() > s {
				overlapped = true
				break
			}
		}
		// Calls that started at the same instant come after i in byStart.
		for j := i + 1; !overlapped && j < n && byStart[j].call.Start == s; j++ {
			if o := byStart[j]; o.tr != c.tr && o.end() > s {
				overlapped = true
			}
		}

		waited := false
		if !overlapped {
			j := sort.Search(n, func(j int) bool { return byEnd[j].call.End > a })
			for ; j < n && byEnd[j].call.End <= s+eventLoopSlack; j++ {
				if byEnd[j].tr != c.tr {
					waited = true
					break
				}
			}
		}

		switch {
		case overlapped:
			e.contended++
		case waited:
			e.contended++
			e.waited++
			e.waitTime += s - a
			e.waits[c.id()] = s - a
		default:
			e.free++
			e.freeTime += s - a
		}
	}
}

// freeLoopLogProbability is the natural log of how probable it is, were
// the loop free, that none of calls (in start order, on one thread, none
// overlapping another) had started while another connection's call was in
// flight.
//
// The derivation. Let p_i be the share of the thread's time, from its first
// call to its last, that connection i's calls took. Assume, for a free loop:
//
//  1. each connection sends its requests independently of the other
//     connections' calls: a client's next request waits for its own
//     response, never for another client's;
//  2. a request that arrives while another connection's call is in flight
//     starts its own call at once (that is what a free loop does), and its
//     call then overlaps that one;
//  3. the p_i measured on these calls are what they would be on a free
//     loop: the calls take as long, and each client keeps its rhythm.
//
// By 1, a request of connection j arrives at a moment that is independent
// of the other connections' calls, so it finds connection i's call in
// flight with probability p_i (time averages seen by independent
// arrivals), and none of them in flight with probability
// prod_{i != j} (1 - p_i). By 2 that is the probability its call overlaps
// nothing. Taking the calls as independent trials, the probability that
// none of them overlapped is the product over the calls; the first call is
// left out, as nothing before it was on the thread to overlap.
//
// The one-connection lookalike falls out of the formula: a client that
// sends one request after another on one connection has no other
// connection to overlap, so its calls have probability 1, however full
// the thread. Where assumption 1 fails (one client on several
// connections, or a load generator that paces its clients in lockstep)
// the probability is wrong, which is why connectionsTakeTurns must hold
// too. Requests paced evenly by a load tool break it as well: when their
// spacing exceeds a call they never land in one, loop free or not. The
// corpus holds such runs (quarkus-reactive-low, quarkus-blocking-low), and
// they stay silent because their threads hold too few calls at their low
// occupancy; a long enough paced run on a free loop would be flagged.
func freeLoopLogProbability(calls []loopCall) float64 {
	if len(calls) < 2 {
		return 0
	}
	window := calls[len(calls)-1].call.End - calls[0].call.Start
	for _, c := range calls {
		window = max(window, c.call.End-calls[0].call.Start)
	}
	if window <= 0 {
		return 0
	}
	busy := map[string]int64{}
	for _, c := range calls {
		busy[c.conn] += c.call.Duration()
	}
	logFree := map[string]float64{} // ln(1 - p_i)
	var all float64
	for conn, b := range busy {
		p := float64(b) / float64(window)
		if p >= 1 {
			return math.Inf(-1)
		}
		logFree[conn] = math.Log1p(-p)
		all += logFree[conn]
	}
	var sum float64
	for _, c := range calls[1:] {
		sum += all - logFree[c.conn]
	}
	return sum
}

// connectionsTakeTurns reports whether the requests of calls (in start
// order) came on at least two client connections that were each used more
// than once, changing between at least half of the consecutive requests.
func connectionsTakeTurns(calls []loopCall) bool {
	uses := map[string]int{}
	switches, prev := 0, ""
	for i, c := range calls {
		conn := c.conn
		if conn == "" {
			return false
		}
		uses[conn]++
		if i > 0 && conn != prev {
			switches++
		}
		prev = conn
	}
	reused := 0
	for _, n := range uses {
		if n > 1 {
			reused++
		}
	}
	return reused >= 2 && 2*switches >= len(calls)-1
}

// clientConnection names the client connection a server span's request
// came on, "address:port", or "" when the span does not record the port.
func clientConnection(s *trace.Span) string {
	port := s.Attr("network.peer.port", "client.port", "net.sock.peer.port", "net.peer.port")
	if port == "" {
		return ""
	}
	return s.Attr("network.peer.address", "client.address", "net.sock.peer.addr", "net.peer.ip") + ":" + port
}

// intervalsOf is trace.Intervals of the calls' spans.
func intervalsOf(calls []loopCall) []trace.Interval {
	out := make([]trace.Interval, len(calls))
	for i, c := range calls {
		out[i] = trace.Interval{Start: c.call.Start, End: max(c.call.Start, c.call.End)}
	}
	return out
}

// requestSpan returns the span of the request that s serves within its own
// service: the nearest SERVER or CONSUMER ancestor of the same service, or
// else the outermost same-service ancestor (a job or a script without a
// server span). It returns nil when s has no ancestor in its service.
func requestSpan(t *trace.Trace, s *trace.Span) *trace.Span {
	var top *trace.Span
	for p := t.Parent(s); p != nil && p.Service == s.Service; p = t.Parent(p) {
		if p.Kind == trace.KindServer || p.Kind == trace.KindConsumer {
			return p
		}
		top = p
	}
	return top
}

// instanceOf tells processes of one service apart: thread names repeat in
// every process.
func instanceOf(s *trace.Span) string {
	if id := s.ResourceAttrs["service.instance.id"]; id != "" {
		return id
	}
	return s.ResourceAttrs["host.name"] + "/" + s.ResourceAttrs["process.pid"]
}

// calleeOf names the service a call went to, from the server span below
// it, when that service is traced too.
func calleeOf(t *trace.Trace, call *trace.Span) string {
	for _, c := range t.Children(call) {
		if c.Service != "" && c.Service != call.Service {
			return c.Service
		}
	}
	return ""
}

func meanMs(total int64, n int) float64 {
	if n == 0 {
		return 0
	}
	return round(float64(total)/float64(n)/1e6, 3)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
