// Command shapes writes the corpus's generated cases: one trace shape per
// edge case the detectors must get right, each built span by span as the
// OpenTelemetry Java agent would record it. The labels beside each case are
// written by hand from what the shape is, not from what a detector says.
//
//	go run ./corpus/shapes -out testdata/corpus
package main

import (
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"tracelab/pkg/otlp"
	"tracelab/pkg/trace"
)

func main() {
	out := flag.String("out", "testdata/corpus", "corpus directory")
	flag.Parse()
	for name, build := range shapes {
		dir := filepath.Join(*out, "shape-"+name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fail(err)
		}
		f, err := os.Create(filepath.Join(dir, "traces.json"))
		if err != nil {
			fail(err)
		}
		b := &builder{rng: rand.New(rand.NewSource(1)), now: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC).UnixNano()}
		build(b)
		if err := otlp.Write(f, trace.Group(b.spans)); err != nil {
			fail(err)
		}
		if err := f.Close(); err != nil {
			fail(err)
		}
		fmt.Fprintf(os.Stderr, "shapes: wrote %s (%d spans)\n", dir, len(b.spans))
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "shapes: %v\n", err)
	os.Exit(1)
}

// shapes maps a case name (the folder is shape-<name>) to its builder.
var shapes = map[string]func(*builder){
	// A Spring Data loop: one repository call per pet, each wrapping a
	// Hibernate query wrapping its JDBC statement, with the pet's id
	// inlined (a driver that sends literals).
	"orm-nplus1-wrapped": func(b *builder) {
		for i := 0; i < 20; i++ {
			b.request("shop", "GET", "/owners/{ownerId}", "/owners/"+strconv.Itoa(10+i), 0.4, func(h *trace.Span) {
				b.stmt(h, "shop", "SELECT o.id, o.name FROM owners o WHERE o.id = "+strconv.Itoa(10+i), 0.8)
				for pet := 0; pet < 8; pet++ {
					b.wrapped(h, "shop", "VisitRepository.findByPetId", "SELECT Visit",
						"SELECT v.id, v.visit_date FROM visits v WHERE v.pet_id = "+strconv.Itoa(100*i+pet), 0.6, 0.5)
				}
			})
		}
	},
	// The same SELECT, with no parameters, run again for every <option>
	// of a form, each wrapped in a repository and a Hibernate span.
	"redundant-lookup": func(b *builder) {
		for i := 0; i < 15; i++ {
			b.request("shop", "GET", "/owners/{ownerId}/pets/new", "/owners/"+strconv.Itoa(i)+"/pets/new", 0.4, func(h *trace.Span) {
				b.stmt(h, "shop", "SELECT o.id, o.name FROM owners o WHERE o.id = ?", 0.7)
				render := b.child(h, "shop", "Render pets/createOrUpdatePetForm", trace.KindInternal, 0.1, nil)
				for opt := 0; opt < 7; opt++ {
					b.wrapped(render, "shop", "PetTypeRepository.findPetTypes", "SELECT PetType",
						"SELECT t.id, t.name FROM types t ORDER BY t.name", 0.9, 0.6)
				}
				b.end(render, 0.2)
			})
		}
	},
	// One request type reads the same configuration URL six times; another
	// fetches a price per item, each with its own id.
	"http-redundant-and-nplus1": func(b *builder) {
		for i := 0; i < 10; i++ {
			b.request("cart", "GET", "/cart/{id}", "/cart/"+strconv.Itoa(i), 0.3, func(h *trace.Span) {
				for k := 0; k < 6; k++ {
					b.httpCall(h, "cart", "GET", "http://settings:8080/flags?tenant=acme", "settings", "/flags", 2)
				}
			})
			b.request("cart", "GET", "/cart/{id}/total", "/cart/"+strconv.Itoa(i)+"/total", 0.3, func(h *trace.Span) {
				for k := 0; k < 9; k++ {
					b.httpCall(h, "cart", "GET", "http://pricing:8080/prices/"+strconv.Itoa(500+k), "pricing", "/prices/{id}", 3)
				}
			})
		}
	},
	// Two routes whose loops run under the same Hibernate span name: two
	// findings, one per route, not one merged.
	"two-routes-one-orm-span": func(b *builder) {
		for i := 0; i < 10; i++ {
			for _, route := range []string{"/vets", "/vets.html"} {
				b.request("clinic", "GET", route, route, 0.3, func(h *trace.Span) {
					session := b.child(h, "clinic", "Session.list Vet", trace.KindInternal, 0.05, nil)
					b.stmt(session, "clinic", "SELECT v.id, v.first_name FROM vets v", 0.8)
					for v := 0; v < 6; v++ {
						b.stmt(session, "clinic", "SELECT s.id, s.name FROM vet_specialties vs JOIN specialties s ON s.id = vs.specialty_id WHERE vs.vet_id = "+strconv.Itoa(v+1), 0.5)
					}
					b.end(session, 0.1)
				})
			}
		}
	},
	// Start-up: schema creation and a data load, traced without any
	// SERVER span, then a few healthy requests.
	"startup-ddl": func(b *builder) {
		for i := 0; i < 30; i++ {
			root := b.root("clinic", "DataSourceInitializer.runScripts", trace.KindInternal, nil)
			for s := 0; s < 12; s++ {
				b.stmt(root, "clinic", "INSERT INTO owners VALUES ("+strconv.Itoa(i*12+s)+", 'name')", 0.3)
			}
			b.stmt(root, "clinic", "CREATE TABLE t"+strconv.Itoa(i)+" (id INTEGER)", 1)
			b.end(root, 0.1)
		}
		for i := 0; i < 5; i++ {
			b.request("clinic", "GET", "/owners/{ownerId}", "/owners/"+strconv.Itoa(i), 0.3, func(h *trace.Span) {
				b.stmt(h, "clinic", "SELECT o.id FROM owners o WHERE o.id = ?", 0.6)
			})
		}
	},
	// Ten price calls made concurrently: a fan-out, which costs one
	// call's time, not ten.
	"parallel-fanout": func(b *builder) {
		for i := 0; i < 10; i++ {
			b.request("catalog", "GET", "/catalog/summary", "/catalog/summary", 0.5, func(h *trace.Span) {
				start := b.now
				var end int64
				for k := 0; k < 10; k++ {
					b.now = start + int64(k)*200_000
					end = max(end, b.httpCall(h, "catalog", "GET", "http://pricing:8080/prices/"+strconv.Itoa(k), "pricing", "/prices/{id}", 12))
				}
				b.now = end
			})
		}
	},
	// 3 ms in the filters and the handler mapping before a controller
	// that does 1.2 ms of real work: dispatch is most of the request.
	"dispatch-real-handler": func(b *builder) {
		for i := 0; i < 40; i++ {
			b.dispatch("gateway", "/api/orders/{id}", 3.0, 1.2)
		}
	},
	// FastAPI as OpenTelemetry Python's ASGI instrumentation records it: no
	// handler span, and the two "http send" spans written once the handler
	// has returned its 5 ms of work. Taken for a handler, they would make
	// the handler's time look like dispatch.
	"dispatch-asgi-no-handler": func(b *builder) {
		for i := 0; i < 40; i++ {
			srv := b.root("api", "GET /api/orders/{id}", trace.KindServer, map[string]string{
				"http.request.method": "GET", "http.route": "/api/orders/{id}", "http.response.status_code": "200",
			})
			srv.Scope = "opentelemetry.instrumentation.asgi"
			for j, event := range []string{"http.response.start", "http.response.body"} {
				send := b.child(srv, "api", "GET /api/orders/{id} http send", trace.KindInternal, 5-4.95*float64(j), map[string]string{
					"asgi.event.type": event,
				})
				send.Scope = "opentelemetry.instrumentation.asgi"
				b.end(send, 0.02)
			}
			b.end(srv, 0.05)
		}
	},
	// Spring MVC as it normally runs: 0.3 ms before a 1.2 ms controller,
	// and before a controller that does almost nothing.
	"dispatch-healthy": func(b *builder) {
		for i := 0; i < 40; i++ {
			b.dispatch("api", "/api/orders/{id}", 0.3, 1.2)
			b.dispatch("api", "/api/status", 0.25, 0.04)
		}
	},
	// Six different statements one after another, each wrapped in its
	// repository span: chatty, and the wrappers are part of the cost.
	"chatty-wrapped": func(b *builder) {
		stmts := []string{
			"SELECT c.id FROM customer c WHERE c.id = ?", "SELECT p.id, p.stock FROM product p WHERE p.id = ?",
			"INSERT INTO orders (customer_id) VALUES (?)", "INSERT INTO order_line (order_id, product_id) VALUES (?, ?)",
			"UPDATE product SET stock = stock - ? WHERE id = ?", "INSERT INTO audit (order_id) VALUES (?)",
		}
		for i := 0; i < 12; i++ {
			b.request("orders", "POST", "/orders", "/orders", 0.3, func(h *trace.Span) {
				for k, s := range stmts {
					b.wrapped(h, "orders", "OrderRepository.step"+strconv.Itoa(k), "", s, 2, 0.4)
				}
			})
		}
	},
	// A loop of prepared statements whose values the spans do not carry
	// (the Java agent's default): an N+1 it cannot tell from a re-read.
	"nplus1-values-unrecorded": func(b *builder) {
		for i := 0; i < 10; i++ {
			b.request("books", "GET", "/books", "/books", 0.3, func(h *trace.Span) {
				b.stmt(h, "books", "SELECT b.id, b.author_id FROM books b", 1)
				for k := 0; k < 12; k++ {
					b.stmt(h, "books", "SELECT a.name FROM authors a WHERE a.id = ?", 0.4)
				}
			})
		}
	},
	// Prepared statements with their values recorded: one request type
	// asks for a different author each time (N+1), the other for the same
	// one (a re-read).
	"recorded-values": func(b *builder) {
		for i := 0; i < 10; i++ {
			b.request("books", "GET", "/books", "/books", 0.3, func(h *trace.Span) {
				for k := 0; k < 8; k++ {
					s := b.stmt(h, "books", "SELECT a.name FROM authors a WHERE a.id = ?", 0.4)
					s.Attrs.Set("db.query.parameter.0", strconv.Itoa(k+1))
				}
			})
			b.request("books", "GET", "/books/{id}", "/books/"+strconv.Itoa(i), 0.3, func(h *trace.Span) {
				for k := 0; k < 8; k++ {
					s := b.stmt(h, "books", "SELECT a.name FROM authors a WHERE a.id = ?", 0.4)
					s.Attrs.Set("db.query.parameter.0", "7")
				}
			})
		}
	},
}

// builder lays spans out on one clock, one request after another.
type builder struct {
	rng   *rand.Rand
	now   int64 // ns
	spans []*trace.Span
	trace string
	ids   int
}

func ms(x float64) int64 { return int64(x * 1e6) }

func (b *builder) jitter(x float64) int64 { return ms(x * (0.9 + 0.2*b.rng.Float64())) }

func (b *builder) id() string {
	b.ids++
	return fmt.Sprintf("%016x", b.ids)
}

// root starts a new trace.
func (b *builder) root(service, name string, kind trace.Kind, attrs map[string]string) *trace.Span {
	b.trace = fmt.Sprintf("%032x", b.ids+1)
	b.now += ms(5) // a pause between requests
	return b.open(nil, service, name, kind, attrs)
}

func (b *builder) open(parent *trace.Span, service, name string, kind trace.Kind, attrs map[string]string) *trace.Span {
	if attrs == nil {
		attrs = map[string]string{}
	}
	s := &trace.Span{TraceID: b.trace, SpanID: b.id(), Name: name, Kind: kind, Service: service,
		Start: b.now, End: b.now, Attrs: trace.AttrsOf(attrs), ResourceAttrs: map[string]string{"service.name": service}}
	if parent != nil {
		s.ParentID = parent.SpanID
	}
	b.spans = append(b.spans, s)
	return s
}

// child opens a span after msBefore of its parent's own work.
func (b *builder) child(parent *trace.Span, service, name string, kind trace.Kind, msBefore float64, attrs map[string]string) *trace.Span {
	b.now += b.jitter(msBefore)
	return b.open(parent, service, name, kind, attrs)
}

// end closes s after msAfter of its own work.
func (b *builder) end(s *trace.Span, msAfter float64) {
	b.now += b.jitter(msAfter)
	s.End = b.now
}

// request is one HTTP request: a SERVER span with its route, a controller
// span, whatever body adds under it, and the response.
func (b *builder) request(service, method, route, path string, overheadMs float64, body func(handler *trace.Span)) {
	srv := b.root(service, method+" "+route, trace.KindServer, map[string]string{
		"http.request.method": method, "http.route": route, "url.path": path, "http.response.status_code": "200",
	})
	h := b.controller(srv, service, "Controller", "handle", overheadMs/2)
	body(h)
	b.end(h, 0.1)
	b.end(srv, overheadMs/2)
}

// stmt adds a JDBC statement span.
func (b *builder) stmt(parent *trace.Span, service, sql string, durMs float64) *trace.Span {
	s := b.child(parent, service, firstWord(sql), trace.KindClient, 0.05, map[string]string{
		"db.system": "postgresql", "db.name": service, "db.statement": sql,
		"server.address": "db", "server.port": "5432",
	})
	b.end(s, durMs)
	return s
}

// wrapped adds a repository span around an optional Hibernate span around
// the statement; wrapMs is the wrappers' own time, split before and after.
func (b *builder) wrapped(parent *trace.Span, service, repo, orm, sql string, durMs, wrapMs float64) {
	r := b.child(parent, service, repo, trace.KindInternal, 0.05, map[string]string{"code.function": repo})
	inner := r
	if orm != "" {
		inner = b.child(r, service, orm, trace.KindInternal, wrapMs/4, nil)
	}
	b.now += b.jitter(wrapMs / 4)
	b.stmt(inner, service, sql, durMs)
	if orm != "" {
		b.end(inner, wrapMs/4)
	}
	b.end(r, wrapMs/4)
}

// httpCall adds a CLIENT span and the callee's SERVER span inside it,
// returning the client span's end.
func (b *builder) httpCall(parent *trace.Span, service, method, url, callee, route string, durMs float64) int64 {
	c := b.child(parent, service, method, trace.KindClient, 0.05, map[string]string{
		"http.request.method": method, "url.full": url, "http.response.status_code": "200",
	})
	start := b.now
	d := b.jitter(durMs)
	srv := b.open(c, callee, method+" "+route, trace.KindServer, map[string]string{
		"http.request.method": method, "http.route": route, "http.response.status_code": "200",
	})
	srv.Start, srv.End = start+d/10, start+d-d/10
	b.now = start + d
	c.End = b.now
	return c.End
}

// dispatch is one Spring MVC request: gapMs between the server span's
// start and the controller span's (filters, handler mapping), handlerMs in
// the controller.
func (b *builder) dispatch(service, route string, gapMs, handlerMs float64) {
	srv := b.root(service, "GET "+route, trace.KindServer, map[string]string{
		"http.request.method": "GET", "http.route": route, "http.response.status_code": "200",
	})
	h := b.controller(srv, service, "OrderController", "get", gapMs)
	b.end(h, handlerMs)
	b.end(srv, 0.05)
}

// controller adds the span the OpenTelemetry Java agent writes around a
// Spring MVC controller method, msBefore after the last event.
func (b *builder) controller(srv *trace.Span, service, class, method string, msBefore float64) *trace.Span {
	h := b.child(srv, service, class+"."+method, trace.KindInternal, msBefore, map[string]string{
		"code.namespace": "com.example." + class, "code.function": method,
	})
	h.Scope = "io.opentelemetry.spring-webmvc-6.0"
	return h
}

func firstWord(s string) string {
	for i, c := range s {
		if c == ' ' {
			return s[:i]
		}
	}
	return s
}
