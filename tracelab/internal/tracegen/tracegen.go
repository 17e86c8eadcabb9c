// Package tracegen generates synthetic traces for tests and benchmarks; the
// tracelab binary never uses it. The shapes copy systems the lab studies:
// the lab's own catalog service (case study 003: one list call, then one
// sequential call per item), its batch fix, Jaeger HotROD's dispatch request
// (a sequential Redis loop in driver and a parallel fan-out to route) and an
// ORM N+1 (Django/Rails style).
package tracegen

import (
	"fmt"
	"math/rand"
	"sync"
	"time"

	"tracelab/pkg/trace"
)

// LabOptions shapes one request of the lab's nplus1 scenario.
type LabOptions struct {
	Items  int           // items returned by /items, i.e. price calls when sequential
	CallMs float64       // duration of one /prices/{n} call
	Batch  bool          // the fix: one POST /prices/batch instead of Items calls
	Start  time.Time     // when the request starts
	Seed   int64         // ids and jitter
	Gap    time.Duration // pause between two sequential calls (client overhead)
}

// LabTrace builds one `catalog GET /catalog/summary` request: a GET of
// http://127.0.0.1:18081/items (400 ms), then either one GET per item to
// /prices/{n} made one after the other, or one POST /prices/batch. Each
// client span has the pricing service's server span as its child, as the
// OpenTelemetry Java agent records them.
func LabTrace(o LabOptions) []*trace.Span {
	b := newBuilder(o.Seed)
	rng := b.rng
	if o.CallMs == 0 {
		o.CallMs = 12
	}
	if o.Gap == 0 {
		o.Gap = 300 * time.Microsecond
	}
	t0 := o.Start.UnixNano()
	if o.Start.IsZero() {
		t0 = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC).UnixNano()
	}
	root := b.add(nil, "catalog", "GET /catalog/summary", trace.KindServer, t0, t0, map[string]string{
		"http.request.method": "GET", "http.route": "/catalog/summary", "url.path": "/catalog/summary",
		"url.scheme": "http", "server.address": "127.0.0.1", "server.port": "18080", "http.response.status_code": "200",
	})
	now := t0 + ms(1.5)
	now = b.httpCall(root, "GET", "/items", "/items", now, ms(400)) + int64(o.Gap)
	if o.Batch {
		now = b.httpCall(root, "POST", "/prices/batch", "/prices/batch", now, ms(60+float64(o.Items)*0.02)) + int64(o.Gap)
	} else {
		for i := 0; i < o.Items; i++ {
			d := ms(o.CallMs * (0.9 + 0.2*rng.Float64()))
			id := 1000 + i
			now = b.httpCall(root, "GET", fmt.Sprintf("/prices/%d", id), "/prices/{id}", now, d) + int64(o.Gap)
		}
	}
	root.End = now + ms(20) // transform and respond
	return b.spans
}

// httpCall adds a CLIENT span from catalog to pricing and pricing's SERVER
// span inside it, returning the client span's end.
func (b *builder) httpCall(parent *trace.Span, method, path, route string, start, dur int64) int64 {
	c := b.add(parent, "catalog", method, trace.KindClient, start, start+dur, map[string]string{
		"http.request.method": method, "url.full": "http://127.0.0.1:18081" + path,
		"server.address": "127.0.0.1", "server.port": "18081", "http.response.status_code": "200",
	})
	srv := dur / 10
	b.add(c, "pricing", method+" "+route, trace.KindServer, start+srv/2, start+dur-srv/2, map[string]string{
		"http.request.method": method, "http.route": route, "url.path": path, "http.response.status_code": "200",
	})
	return start + dur
}

// HotRODTrace builds a request shaped like Jaeger HotROD's
// `frontend HTTP GET /dispatch`: customer (one MySQL query), then driver's
// FindNearest (FindDriverIDs, then sequential Redis GetDriver calls for 10
// drivers, reported by the simulated "redis-manual" service, 10 ms each,
// every fifth one failing and retried: 12 calls), then 10 route calls
// through a worker pool of 3 (50 ms each).
func HotRODTrace(seed int64, start time.Time) []*trace.Span {
	b := newBuilder(seed)
	t0 := start.UnixNano()
	root := b.add(nil, "frontend", "HTTP GET /dispatch", trace.KindServer, t0, t0, map[string]string{
		"http.method": "GET", "http.target": "/dispatch?customer=123", "http.route": "/dispatch",
	})
	now := t0 + ms(0.2)

	cc := b.add(root, "frontend", "HTTP GET", trace.KindClient, now, now+ms(300), map[string]string{
		"http.method": "GET", "http.url": "http://0.0.0.0:8081/customer?customer=123", "net.peer.name": "0.0.0.0", "net.peer.port": "8081",
	})
	cs := b.add(cc, "customer", "HTTP GET /customer", trace.KindServer, now+ms(0.5), now+ms(299.5), map[string]string{
		"http.method": "GET", "http.target": "/customer?customer=123", "http.route": "/customer",
	})
	b.add(cs, "mysql", "SQL SELECT", trace.KindClient, now+ms(1), now+ms(299), map[string]string{
		"peer.service": "mysql", "sql.query": "SELECT * FROM customer WHERE customer_id=123",
	})
	now += ms(300.5)

	dc := b.add(root, "frontend", "/driver.DriverService/FindNearest", trace.KindClient, now, now, map[string]string{
		"rpc.system": "grpc", "rpc.service": "driver.DriverService", "rpc.method": "FindNearest", "net.peer.name": "0.0.0.0", "net.peer.port": "8082",
	})
	ds := b.add(dc, "driver", "/driver.DriverService/FindNearest", trace.KindServer, now+ms(0.3), now, map[string]string{
		"rpc.system": "grpc", "rpc.service": "driver.DriverService", "rpc.method": "FindNearest",
	})
	r := now + ms(0.5)
	b.add(ds, "redis-manual", "FindDriverIDs", trace.KindClient, r, r+ms(20), map[string]string{"param.driver.location": "728,326"})
	r += ms(20.1)
	// HotROD's simulated Redis fails every fifth call after a longer wait,
	// and driver retries the same id.
	for i, calls := 0, 0; i < 10; {
		calls++
		failed := calls%5 == 0
		d := ms(10 * (0.9 + 0.2*b.rng.Float64()))
		if failed {
			d += ms(20)
		}
		gd := b.add(ds, "redis-manual", "GetDriver", trace.KindClient, r, r+d, map[string]string{
			"param.driverID": fmt.Sprintf("T7%05dC", b.rng.Intn(100000)),
		})
		if failed {
			gd.Status, gd.StatusMessage = trace.StatusError, "An error occurred"
		} else {
			i++
		}
		r += d + ms(0.1)
	}
	ds.End = r + ms(0.2)
	dc.End = ds.End + ms(0.3)
	now = dc.End + ms(0.2)

	// Ten routes, three workers: each worker takes the next route as soon
	// as it is free.
	workers := []int64{now, now, now}
	for i := 0; i < 10; i++ {
		w := 0
		for j := range workers {
			if workers[j] < workers[w] {
				w = j
			}
		}
		s := workers[w]
		d := ms(50 * (0.8 + 0.4*b.rng.Float64()))
		q := fmt.Sprintf("dropoff=%d,%d&pickup=%d,%d", b.rng.Intn(1000), b.rng.Intn(1000), b.rng.Intn(1000), b.rng.Intn(1000))
		rc := b.add(root, "frontend", "HTTP GET", trace.KindClient, s, s+d, map[string]string{
			"http.method": "GET", "http.url": "http://0.0.0.0:8083/route?" + q, "net.peer.name": "0.0.0.0", "net.peer.port": "8083",
		})
		b.add(rc, "route", "HTTP GET /route", trace.KindServer, s+ms(0.3), s+d-ms(0.3), map[string]string{
			"http.method": "GET", "http.target": "/route?" + q, "http.route": "/route",
		})
		workers[w] = s + d + ms(0.05)
	}
	end := workers[0]
	for _, w := range workers {
		end = max(end, w)
	}
	root.End = end + ms(0.5)
	return b.spans
}

// ORMTrace builds a Django-style N+1: `books GET /books/` selects the books
// once, then selects each book's author by primary key, one query per book,
// with the id inlined as a literal.
func ORMTrace(seed int64, start time.Time, books int) []*trace.Span {
	b := newBuilder(seed)
	t0 := start.UnixNano()
	root := b.add(nil, "books", "GET /books/", trace.KindServer, t0, t0, map[string]string{
		"http.request.method": "GET", "http.route": "books/", "url.path": "/books/",
	})
	now := t0 + ms(2)
	db := func(stmt string, d int64) {
		b.add(root, "books", "SELECT", trace.KindClient, now, now+d, map[string]string{
			"db.system": "postgresql", "db.name": "library", "db.statement": stmt,
			"server.address": "127.0.0.1", "server.port": "5432",
		})
		now += d + ms(0.4)
	}
	db(`SELECT "books_book"."id", "books_book"."title", "books_book"."author_id" FROM "books_book" ORDER BY "books_book"."published" ASC LIMIT 21`, ms(3))
	for i := 0; i < books; i++ {
		db(fmt.Sprintf(`SELECT "books_author"."id", "books_author"."name" FROM "books_author" WHERE "books_author"."id" = %d LIMIT 21`, 10+b.rng.Intn(500)), ms(1.5+b.rng.Float64()))
	}
	root.End = now + ms(5)
	return b.spans
}

// Generate returns at least n spans of synthetic traces mixing the shapes
// above in fixed proportions: lab requests with 40 to 400 sequential price
// calls, their batch fix, HotROD dispatches and ORM pages. The same seed
// gives the same spans.
func Generate(n int, seed int64) []*trace.Span {
	rng := rand.New(rand.NewSource(seed))
	start := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	var spans []*trace.Span
	for i := 0; len(spans) < n; i++ {
		s := seed*1_000_003 + int64(i)
		at := start.Add(time.Duration(i) * 50 * time.Millisecond)
		var t []*trace.Span
		switch i % 4 {
		case 0:
			t = LabTrace(LabOptions{Items: 40 + rng.Intn(361), Seed: s, Start: at})
		case 1:
			t = LabTrace(LabOptions{Items: 40 + rng.Intn(361), Batch: true, Seed: s, Start: at})
		case 2:
			t = HotRODTrace(s, at)
		default:
			t = ORMTrace(s, at, 5+rng.Intn(60))
		}
		spans = append(spans, t...)
	}
	return spans
}

// builder makes the spans of one trace.
type builder struct {
	traceID string
	seq     uint64
	rng     *rand.Rand
	spans   []*trace.Span
}

func newBuilder(seed int64) *builder {
	rng := rand.New(rand.NewSource(seed))
	return &builder{
		traceID: fmt.Sprintf("%016x%016x", rng.Uint64(), uint64(seed)),
		seq:     rng.Uint64() &^ 0xffff,
		rng:     rng,
	}
}

// resources are shared between spans of one service, as in parsed data.
var (
	resourcesMu sync.Mutex
	resources   = map[string]map[string]string{}
)

func resourceOf(service string) map[string]string {
	resourcesMu.Lock()
	defer resourcesMu.Unlock()
	r := resources[service]
	if r == nil {
		r = map[string]string{"service.name": service, "telemetry.sdk.language": "java"}
		resources[service] = r
	}
	return r
}

func (b *builder) add(parent *trace.Span, service, name string, kind trace.Kind, start, end int64, attrs map[string]string) *trace.Span {
	b.seq++
	s := &trace.Span{
		TraceID: b.traceID, SpanID: fmt.Sprintf("%016x", b.seq), Name: name, Kind: kind,
		Service: service, Start: start, End: end, Attrs: trace.AttrsOf(attrs), ResourceAttrs: resourceOf(service),
	}
	if parent != nil {
		s.ParentID = parent.SpanID
	}
	b.spans = append(b.spans, s)
	return s
}

func ms(x float64) int64 { return int64(x * 1e6) }
