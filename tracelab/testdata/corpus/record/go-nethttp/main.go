// The corpus application of record/go-nethttp.sh: one binary, three roles.
//
//	-role inventory  the service users call (net/http + otelhttp, database/sql
//	                 + otelsql over pgx's stdlib driver, an otelhttp client to stock)
//	-role stock      the downstream: GET /stock/{id}, GET /stock?ids=1,2,...
//	-role seed       creates and fills the two tables (no tracing), then exits
//	-role collector  a minimal OTLP/HTTP trace receiver: every export request
//	                 it gets is written as one protobuf-JSON line to -out
//
// inventory and stock export their spans with otlptracehttp to the collector.
// Every instrumentation is left at its defaults; the only options set are the
// service name and otelsql's db.system attribute.
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/XSAM/otelsql"
	_ "github.com/jackc/pgx/v5/stdlib"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

func main() {
	role := flag.String("role", "", "inventory, stock or collector")
	addr := flag.String("addr", "127.0.0.1:18642", "listen address")
	dsn := flag.String("db", "", "inventory: PostgreSQL DSN (pgx)")
	stockURL := flag.String("stock", "http://127.0.0.1:18643", "inventory: base URL of stock")
	otlp := flag.String("otlp", "127.0.0.1:18640", "inventory, stock: host:port of the OTLP/HTTP receiver")
	out := flag.String("out", "spans.jsonl", "collector: file the export requests are appended to")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var handler http.Handler
	var shutdown func(context.Context) error
	switch *role {
	case "seed":
		if err := seed(ctx, *dsn); err != nil {
			log.Fatal(err)
		}
		return
	case "collector":
		h, closeOut, err := collector(*out)
		if err != nil {
			log.Fatal(err)
		}
		defer closeOut()
		handler = h
	case "inventory", "stock":
		tp, err := tracing(ctx, *role, *otlp)
		if err != nil {
			log.Fatal(err)
		}
		shutdown = tp.Shutdown
		if *role == "stock" {
			handler = stockHandler()
		} else {
			h, err := inventoryHandler(*dsn, *stockURL)
			if err != nil {
				log.Fatal(err)
			}
			handler = h
		}
	default:
		log.Fatalf("-role must be inventory, stock, seed or collector, not %q", *role)
	}

	srv := &http.Server{Addr: *addr, Handler: handler}
	go func() {
		<-ctx.Done()
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(c)
	}()
	log.Printf("%s listening on %s", *role, *addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
	if shutdown != nil {
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := shutdown(c); err != nil { // flushes the batch span processor
			log.Printf("flushing spans: %v", err)
		}
	}
	log.Printf("%s stopped", *role)
}

// tracing: the SDK's batch span processor (a large queue, so that no span
// is dropped under load) and otlptracehttp to the collector.
func tracing(ctx context.Context, service, endpoint string) (*sdktrace.TracerProvider, error) {
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(endpoint), otlptracehttp.WithInsecure())
	if err != nil {
		return nil, err
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(service)))
	if err != nil {
		return nil, err
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp, sdktrace.WithMaxQueueSize(200000), sdktrace.WithBatchTimeout(500*time.Millisecond)),
		sdktrace.WithResource(res),
	)
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	return tp, nil
}

// --- inventory ---------------------------------------------------------------

type product struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	Supplier any    `json:"supplier,omitempty"`
	Level    any    `json:"level,omitempty"`
}

type supplier struct {
	ID      int64  `json:"id"`
	Name    string `json:"name"`
	Country string `json:"country"`
}

type inventory struct {
	db     *sql.DB
	client *http.Client
	stock  string
}

func inventoryHandler(dsn, stockURL string) (http.Handler, error) {
	db, err := otelsql.Open("pgx", dsn, otelsql.WithAttributes(semconv.DBSystemNamePostgreSQL))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(10)
	db.SetMaxIdleConns(10)
	inv := &inventory{
		db:     db,
		client: &http.Client{Transport: otelhttp.NewTransport(http.DefaultTransport), Timeout: 10 * time.Second},
		stock:  strings.TrimRight(stockURL, "/"),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /products/nplus1", inv.productsNPlus1)
	mux.HandleFunc("GET /products/joined", inv.productsJoined)
	mux.HandleFunc("GET /levels/nplus1", inv.levelsNPlus1)
	mux.HandleFunc("GET /levels/batched", inv.levelsBatched)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	return otelhttp.NewHandler(mux, "inventory"), nil
}

const pageSize = 30   // products per page
const levelsSize = 20 // products whose stock levels a levels page shows

// GET /products/nplus1: a page of products, then each product's supplier
// with its own SELECT (the N+1).
func (inv *inventory) productsNPlus1(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	rows, err := inv.db.QueryContext(ctx, `SELECT id, name, supplier_id FROM products ORDER BY id LIMIT $1`, pageSize)
	if err != nil {
		fail(w, err)
		return
	}
	var ps []product
	var sids []int64
	for rows.Next() {
		var p product
		var sid int64
		if err := rows.Scan(&p.ID, &p.Name, &sid); err != nil {
			rows.Close()
			fail(w, err)
			return
		}
		ps = append(ps, p)
		sids = append(sids, sid)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		fail(w, err)
		return
	}
	for i := range ps {
		var s supplier
		err := inv.db.QueryRowContext(ctx, `SELECT id, name, country FROM suppliers WHERE id = $1`, sids[i]).Scan(&s.ID, &s.Name, &s.Country)
		if err != nil {
			fail(w, err)
			return
		}
		ps[i].Supplier = s
	}
	reply(w, ps)
}

// GET /products/joined: the same page with its suppliers in one JOIN.
func (inv *inventory) productsJoined(w http.ResponseWriter, r *http.Request) {
	rows, err := inv.db.QueryContext(r.Context(),
		`SELECT p.id, p.name, s.id, s.name, s.country FROM products p JOIN suppliers s ON s.id = p.supplier_id ORDER BY p.id LIMIT $1`, pageSize)
	if err != nil {
		fail(w, err)
		return
	}
	defer rows.Close()
	var ps []product
	for rows.Next() {
		var p product
		var s supplier
		if err := rows.Scan(&p.ID, &p.Name, &s.ID, &s.Name, &s.Country); err != nil {
			fail(w, err)
			return
		}
		p.Supplier = s
		ps = append(ps, p)
	}
	if err := rows.Err(); err != nil {
		fail(w, err)
		return
	}
	reply(w, ps)
}

func (inv *inventory) levelProducts(ctx context.Context) ([]product, error) {
	rows, err := inv.db.QueryContext(ctx, `SELECT id, name FROM products ORDER BY id LIMIT $1`, levelsSize)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ps []product
	for rows.Next() {
		var p product
		if err := rows.Scan(&p.ID, &p.Name); err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, rows.Err()
}

// GET /levels/nplus1: 20 products, then one GET /stock/{id} each, one
// after another (the HTTP N+1).
func (inv *inventory) levelsNPlus1(w http.ResponseWriter, r *http.Request) {
	ps, err := inv.levelProducts(r.Context())
	if err != nil {
		fail(w, err)
		return
	}
	for i := range ps {
		var lvl map[string]any
		if err := inv.get(r.Context(), fmt.Sprintf("%s/stock/%d", inv.stock, ps[i].ID), &lvl); err != nil {
			fail(w, err)
			return
		}
		ps[i].Level = lvl
	}
	reply(w, ps)
}

// GET /levels/batched: the same 20 products, their levels in one GET /stock?ids=.
func (inv *inventory) levelsBatched(w http.ResponseWriter, r *http.Request) {
	ps, err := inv.levelProducts(r.Context())
	if err != nil {
		fail(w, err)
		return
	}
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = strconv.FormatInt(p.ID, 10)
	}
	var lvls []map[string]any
	if err := inv.get(r.Context(), inv.stock+"/stock?ids="+strings.Join(ids, ","), &lvls); err != nil {
		fail(w, err)
		return
	}
	if len(lvls) != len(ps) {
		fail(w, fmt.Errorf("stock answered %d levels for %d ids", len(lvls), len(ps)))
		return
	}
	for i := range ps {
		ps[i].Level = lvls[i]
	}
	reply(w, ps)
}

func (inv *inventory) get(ctx context.Context, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := inv.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// seed: 40 suppliers and 60 products; product i is supplied by supplier
// (i-1)%40+1, so the first page of 30 products has 30 different suppliers.
func seed(ctx context.Context, dsn string) error {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	stmts := []string{
		`DROP TABLE IF EXISTS products`,
		`DROP TABLE IF EXISTS suppliers`,
		`CREATE TABLE suppliers (id bigint PRIMARY KEY, name text NOT NULL, country text NOT NULL)`,
		`CREATE TABLE products (id bigint PRIMARY KEY, name text NOT NULL, supplier_id bigint NOT NULL REFERENCES suppliers(id))`,
		`INSERT INTO suppliers SELECT i, 'Supplier ' || i, (ARRAY['DE','FR','IT','PL','NL'])[i % 5 + 1] FROM generate_series(1, 40) i`,
		`INSERT INTO products SELECT i, 'Product ' || i, (i - 1) % 40 + 1 FROM generate_series(1, 60) i`,
		`ANALYZE`,
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// --- stock -------------------------------------------------------------------

// stockHandler: levels computed from the id (no database), after 1 ms of
// simulated work per request.
func stockHandler() http.Handler {
	level := func(id int64) map[string]any {
		return map[string]any{"id": id, "available": (id * 37) % 101, "warehouse": fmt.Sprintf("W%d", id%3+1)}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stock/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if err != nil {
			http.Error(w, "bad id", http.StatusBadRequest)
			return
		}
		time.Sleep(time.Millisecond)
		reply(w, level(id))
	})
	mux.HandleFunc("GET /stock", func(w http.ResponseWriter, r *http.Request) {
		var out []map[string]any
		for _, s := range strings.Split(r.URL.Query().Get("ids"), ",") {
			id, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				http.Error(w, "bad ids", http.StatusBadRequest)
				return
			}
			out = append(out, level(id))
		}
		time.Sleep(time.Millisecond)
		reply(w, out)
	})
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	return otelhttp.NewHandler(mux, "stock")
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, err error) {
	log.Printf("error: %v", err)
	http.Error(w, err.Error(), http.StatusInternalServerError)
}

// --- collector -----------------------------------------------------------------

// collector: POST /v1/traces with an OTLP protobuf (optionally gzip) body;
// each request is appended to the file as one line of protobuf JSON
// ({"resourceSpans":[...]}, ids in base64), which tracelab convert reads.
func collector(path string) (http.Handler, func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, err
	}
	var mu sync.Mutex
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		b, err := io.ReadAll(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		line, err := protojson.MarshalOptions{UseEnumNumbers: true}.Marshal(&req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		// protojson's output is not guaranteed to be one line: compact it.
		var buf bytes.Buffer
		if err := json.Compact(&buf, line); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		buf.WriteByte('\n')
		mu.Lock()
		_, err = f.Write(buf.Bytes())
		mu.Unlock()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		resp, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(resp)
	})
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	return mux, func() { f.Close() }, nil
}
