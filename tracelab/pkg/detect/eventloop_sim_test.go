package detect_test

import (
	"container/heap"
	"fmt"
	"math/rand"
	"strconv"
	"time"

	"tracelab/pkg/trace"
)

// This file simulates the lab's orders service under load, to give the
// event-loop-blocking and chatty-db tests traces with the shape the real
// service produces (the contract with the orders scenarios):
//
//   - virtual users send POST /orders in a closed loop, each on its own
//     keep-alive connection, bound to one of the service's event loops;
//   - orders' server span runs on vert.x-eventloop-thread-N and calls
//     customers (GET /customers/{id}, ~4 ms) from that thread; the blocking
//     client holds the thread for the whole call, the reactive one only to
//     send it;
//   - after the call, a worker thread (executor-thread-N) persists the
//     order with JDBC statements, sequentially or all at once.
//
// An event loop is modelled the way Netty runs one: it reads every
// connection that has data (the server span starts then), then runs the
// queued handlers one after another, and reads again only when they are
// done. Requests that arrive while a handler blocks are read together
// afterwards and wait for each other's calls: the queue the detector
// looks for.

type ordersOptions struct {
	VUs        int     // concurrent clients
	Loops      int     // event-loop threads
	Requests   int     // total requests
	Blocking   bool    // customer client: blocking-on-event-loop vs reactive
	Statements int     // JDBC round trips per request; 0 means 7
	Parallel   bool    // statements sent at once (e.g. one per connection)
	CallMs     float64 // customers call; 0 means 4
	StmtMs     float64 // one statement; 0 means 2
	NewSemconv bool    // db.system.name / db.query.text instead of db.system / db.statement
	// ReadWhenFree makes a loop read one request at a time, only once it
	// is free: a blocked loop's queue then waits before its server spans
	// start, where no trace shows it (a stock Netty server span).
	ReadWhenFree bool
	// PeerPorts records the client connection on the server span
	// (network.peer.address and network.peer.port), as the Java agent
	// does; ConnPerRequest gives every request a new connection.
	PeerPorts, ConnPerRequest bool
	// ThinkMs is each client's mean pause between a response and its next
	// request, drawn from an exponential distribution; 0 means a fixed
	// 0.3 ms, as a load tool's closed loop without think time.
	ThinkMs float64
	Seed    int64
}

type orderReq struct {
	vu, loop, conn          int
	arrive, read, callStart int64
	callEnd, dbStart, end   int64
	worker                  int
	stmts                   [][2]int64
	traceID, customer       string
}

type simEvent struct {
	at   int64
	seq  int
	kind int // evArrive, evLoopFree, evCallDone
	req  *orderReq
	loop int
}

const (
	evArrive = iota
	evLoopFree
	evCallDone
)

type eventQueue []simEvent

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(simEvent)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// ordersLoad runs the simulation and returns the spans of every request.
func ordersLoad(o ordersOptions) []*trace.Span {
	if o.Statements == 0 {
		o.Statements = 7
	}
	if o.CallMs == 0 {
		o.CallMs = 4
	}
	if o.StmtMs == 0 {
		o.StmtMs = 2
	}
	rng := rand.New(rand.NewSource(o.Seed))
	jitter := func(ms float64) int64 { return int64(ms * (0.85 + 0.3*rng.Float64()) * 1e6) }
	const parse, respond = 150_000, 100_000 // ns
	think := func() int64 {
		if o.ThinkMs == 0 {
			return 300_000
		}
		return int64(rng.ExpFloat64() * o.ThinkMs * 1e6)
	}

	var q eventQueue
	seq := 0
	push := func(e simEvent) { seq++; e.seq = seq; heap.Push(&q, e) }

	pending := make([][]*orderReq, o.Loops) // arrived, not yet read
	busy := make([]bool, o.Loops)
	var done []*orderReq
	sent := 0
	t0 := time.Date(2025, 6, 2, 10, 0, 0, 0, time.UTC).UnixNano()

	send := func(vu int, at int64) {
		if sent == o.Requests {
			return
		}
		sent++
		r := &orderReq{vu: vu, loop: vu % o.Loops, conn: vu, arrive: at,
			traceID:  fmt.Sprintf("%016x%016x", uint64(o.Seed)+1, uint64(sent)*0x9e3779b97f4a7c15),
			customer: strconv.Itoa(1 + rng.Intn(50))}
		if o.ConnPerRequest {
			r.conn = sent
			r.loop = sent % o.Loops // a new connection goes to the next loop
		}
		push(simEvent{at: at, kind: evArrive, req: r})
	}
	// Start the clients a little apart, as a load tool ramps its users.
	for vu := 0; vu < o.VUs; vu++ {
		send(vu, t0+int64(vu)*200_000)
	}

	// wake runs one loop iteration at time at: read everything pending,
	// then run the handlers in order. It returns when the loop is free.
	wake := func(l int, at int64) int64 {
		batch := pending[l]
		pending[l] = nil
		if o.ReadWhenFree {
			batch, pending[l] = batch[:1], batch[1:]
		}
		cur := at
		for _, r := range batch {
			r.read = at
			r.callStart = cur + parse
			r.callEnd = r.callStart + jitter(o.CallMs)
			if o.Blocking {
				cur = r.callEnd // the thread waits for the response
			} else {
				cur = r.callStart // the thread moves on; the response comes back later
			}
			push(simEvent{at: r.callEnd, kind: evCallDone, req: r})
		}
		return cur
	}

	for q.Len() > 0 {
		e := heap.Pop(&q).(simEvent)
		switch e.kind {
		case evArrive:
			l := e.req.loop
			pending[l] = append(pending[l], e.req)
			if !busy[l] {
				busy[l] = true
				push(simEvent{at: wake(l, e.at), kind: evLoopFree, loop: l})
			}
		case evLoopFree:
			l := e.loop
			if len(pending[l]) == 0 {
				busy[l] = false
				continue
			}
			push(simEvent{at: wake(l, e.at), kind: evLoopFree, loop: l})
		case evCallDone:
			r := e.req
			r.worker = r.vu           // about one worker per client, as in case study 000
			r.dbStart = e.at + 50_000 // hand-off to the worker
			at := r.dbStart
			for i := 0; i < o.Statements; i++ {
				d := jitter(o.StmtMs)
				if o.Parallel {
					r.stmts = append(r.stmts, [2]int64{r.dbStart + int64(i)*20_000, r.dbStart + int64(i)*20_000 + d})
					at = max(at, r.dbStart+int64(i)*20_000+d)
				} else {
					r.stmts = append(r.stmts, [2]int64{at, at + d})
					at += d + 80_000 // driver and pool overhead between statements
				}
			}
			r.end = at + respond
			done = append(done, r)
			send(r.vu, r.end+think())
		}
	}

	var spans []*trace.Span
	for _, r := range done {
		spans = append(spans, r.spans(o)...)
	}
	return spans
}

var chattyStatements = []string{
	"SELECT id, name, status FROM customer WHERE id = $1",
	"SELECT id, price, stock FROM product WHERE id = $1",
	"INSERT INTO orders (customer_id, total, created_at) VALUES ($1, $2, now()) RETURNING id",
	"INSERT INTO order_line (order_id, product_id, quantity, price) VALUES ($1, $2, $3, $4), ($5, $6, $7, $8)",
	"UPDATE product SET stock = stock - $1 WHERE id = $2",
	"INSERT INTO audit (order_id, action) VALUES ($1, 'created')",
	"SELECT id, price, stock FROM product WHERE id = $1", // the second product: 7 round trips, 6 statements
}

const singleStatement = "WITH o AS (INSERT INTO orders (customer_id, total, created_at) VALUES ($1, $2, now()) RETURNING id) INSERT INTO order_line (order_id, product_id, quantity, price) SELECT o.id, l.product_id, l.quantity, l.price FROM o, unnest($3::bigint[], $4::int[], $5::numeric[]) AS l(product_id, quantity, price)"

func (r *orderReq) spans(o ordersOptions) []*trace.Span {
	n := 0
	id := func() string { n++; return fmt.Sprintf("%08x%08x", r.arrive&0xffffffff, n) }
	loopThread := map[string]string{
		"thread.name": fmt.Sprintf("vert.x-eventloop-thread-%d", r.loop), "thread.id": strconv.Itoa(20 + r.loop)}
	attrs := func(base map[string]string, more map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range more {
			m[k] = v
		}
		return m
	}
	orders := map[string]string{"service.name": "orders", "service.instance.id": "orders-1"}
	customers := map[string]string{"service.name": "customers", "service.instance.id": "customers-1"}

	root := &trace.Span{TraceID: r.traceID, SpanID: id(), Name: "POST /orders", Kind: trace.KindServer, Service: "orders",
		Start: r.read, End: r.end, ResourceAttrs: orders,
		Attrs: trace.AttrsOf(attrs(loopThread, map[string]string{"http.request.method": "POST", "http.route": "/orders", "url.path": "/orders",
			"http.response.status_code": "201"}))}
	if o.PeerPorts {
		root.Attrs.Set("network.peer.address", "127.0.0.1")
		root.Attrs.Set("network.peer.port", strconv.Itoa(40000+r.conn))
	}
	call := &trace.Span{TraceID: r.traceID, SpanID: id(), ParentID: root.SpanID, Name: "GET", Kind: trace.KindClient, Service: "orders",
		Start: r.callStart, End: r.callEnd, ResourceAttrs: orders,
		Attrs: trace.AttrsOf(attrs(loopThread, map[string]string{"http.request.method": "GET", "url.full": "http://127.0.0.1:18083/customers/" + r.customer,
			"server.address": "127.0.0.1", "server.port": "18083", "http.response.status_code": "200"}))}
	srv := &trace.Span{TraceID: r.traceID, SpanID: id(), ParentID: call.SpanID, Name: "GET /customers/{id}", Kind: trace.KindServer,
		Service: "customers", Start: r.callStart + 300_000, End: r.callEnd - 300_000, ResourceAttrs: customers,
		Attrs: trace.AttrsOf(map[string]string{"http.request.method": "GET", "http.route": "/customers/{id}", "thread.name": "vert.x-eventloop-thread-0", "thread.id": "19"})}
	spans := []*trace.Span{root, call, srv}

	worker := map[string]string{"thread.name": fmt.Sprintf("executor-thread-%d", r.worker+1), "thread.id": strconv.Itoa(60 + r.worker)}
	// The Java agent's JDBC instrumentation reports the pool checkout too.
	spans = append(spans, &trace.Span{TraceID: r.traceID, SpanID: id(), ParentID: root.SpanID, Name: "DataSource.getConnection",
		Kind: trace.KindInternal, Service: "orders", Start: r.dbStart - 40_000, End: r.dbStart - 10_000, ResourceAttrs: orders,
		Attrs: trace.AttrsOf(attrs(worker, map[string]string{"db.system": "postgresql", "db.name": "orders",
			"code.namespace": "io.agroal.pool.DataSource", "code.function": "getConnection"}))})
	for i, st := range r.stmts {
		stmt := chattyStatements[i%len(chattyStatements)]
		if len(r.stmts) == 1 {
			stmt = singleStatement
		}
		db := map[string]string{"db.system": "postgresql", "db.name": "orders", "db.statement": stmt,
			"server.address": "127.0.0.1", "server.port": "15433"}
		if o.NewSemconv {
			db = map[string]string{"db.system.name": "postgresql", "db.namespace": "orders", "db.query.text": stmt,
				"server.address": "127.0.0.1", "server.port": "15433"}
		}
		spans = append(spans, &trace.Span{TraceID: r.traceID, SpanID: id(), ParentID: root.SpanID, Name: firstWord(stmt) + " orders",
			Kind: trace.KindClient, Service: "orders", Start: st[0], End: st[1], ResourceAttrs: orders, Attrs: trace.AttrsOf(attrs(worker, db))})
	}
	return spans
}

func firstWord(s string) string {
	for i, c := range s {
		if c == ' ' {
			return s[:i]
		}
	}
	return s
}
