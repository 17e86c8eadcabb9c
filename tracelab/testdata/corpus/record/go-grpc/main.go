// The corpus application of record/go-grpc.sh: one binary, three roles.
//
//	-role inventory  a gRPC server (google.golang.org/grpc, stats handler
//	                 otelgrpc.NewServerHandler) with the unary methods
//	                 inventory.Inventory/GetItem and /GetItems over an
//	                 in-memory table of 200 items; a plain HTTP GET /health
//	                 on -health (not traced) tells the script it is up
//	-role frontend   the service users call (net/http + otelhttp); it calls
//	                 inventory through a gRPC client with
//	                 otelgrpc.NewClientHandler
//	-role collector  a minimal OTLP/HTTP trace receiver: every export request
//	                 it gets is written as one protobuf-JSON line to -out
//
// inventory and frontend export their spans with otlptracehttp to the
// collector. Every instrumentation is left at its defaults; the only option
// set is the service name.
//
// No protoc: the service is described by hand (grpc.ServiceDesc below) and
// its messages are protobuf's well-known types, which grpc's default proto
// codec marshals like any generated message:
//
//	GetItem(google.protobuf.Int64Value id) returns (google.protobuf.Struct item)
//	GetItems(google.protobuf.ListValue ids) returns (google.protobuf.ListValue items)
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

func main() {
	role := flag.String("role", "", "inventory, frontend or collector")
	addr := flag.String("addr", "127.0.0.1:18743", "listen address (inventory: its gRPC port)")
	health := flag.String("health", "127.0.0.1:18742", "inventory: listen address of its plain HTTP GET /health")
	invAddr := flag.String("inventory", "127.0.0.1:18741", "frontend: host:port of inventory's gRPC server")
	otlp := flag.String("otlp", "127.0.0.1:18740", "inventory, frontend: host:port of the OTLP/HTTP receiver")
	out := flag.String("out", "spans.jsonl", "collector: file the export requests are appended to")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var err error
	switch *role {
	case "collector":
		err = runCollector(ctx, *addr, *out)
	case "inventory", "frontend":
		var tp *sdktrace.TracerProvider
		tp, err = tracing(ctx, *role, *otlp)
		if err != nil {
			log.Fatal(err)
		}
		if *role == "inventory" {
			err = runInventory(ctx, *addr, *health)
		} else {
			err = runFrontend(ctx, *addr, *invAddr)
		}
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if e := tp.Shutdown(c); e != nil { // flushes the batch span processor
			log.Printf("flushing spans: %v", e)
		}
	default:
		log.Fatalf("-role must be inventory, frontend or collector, not %q", *role)
	}
	if err != nil {
		log.Fatal(err)
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

// serveHTTP runs srv until ctx is done, then shuts it down gracefully.
func serveHTTP(ctx context.Context, srv *http.Server) error {
	go func() {
		<-ctx.Done()
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(c)
	}()
	log.Printf("HTTP listening on %s", srv.Addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// --- the service, described by hand --------------------------------------------

const serviceName = "inventory.Inventory"

type inventoryService interface {
	GetItem(context.Context, *wrapperspb.Int64Value) (*structpb.Struct, error)
	GetItems(context.Context, *structpb.ListValue) (*structpb.ListValue, error)
}

// unary builds the handler protoc-gen-go-grpc would generate for one method.
func unary[Req any, Resp any](method string, newReq func() Req, call func(inventoryService, context.Context, Req) (Resp, error)) grpc.MethodDesc {
	return grpc.MethodDesc{
		MethodName: method,
		Handler: func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
			in := newReq()
			if err := dec(in); err != nil {
				return nil, err
			}
			if interceptor == nil {
				return call(srv.(inventoryService), ctx, in)
			}
			info := &grpc.UnaryServerInfo{Server: srv, FullMethod: "/" + serviceName + "/" + method}
			return interceptor(ctx, in, info, func(ctx context.Context, req any) (any, error) {
				return call(srv.(inventoryService), ctx, req.(Req))
			})
		},
	}
}

var inventoryDesc = grpc.ServiceDesc{
	ServiceName: serviceName,
	HandlerType: (*inventoryService)(nil),
	Methods: []grpc.MethodDesc{
		unary("GetItem", func() *wrapperspb.Int64Value { return new(wrapperspb.Int64Value) }, inventoryService.GetItem),
		unary("GetItems", func() *structpb.ListValue { return new(structpb.ListValue) }, inventoryService.GetItems),
	},
	Metadata: "hand-written, no .proto",
}

// --- inventory -------------------------------------------------------------------

const itemCount = 200

// lookupCost is what every item lookup costs: 0.5 ms of wall time, waited
// for in a loop that checks the monotonic clock and yields its processor
// (runtime.Gosched) between checks. Not time.Sleep: on Linux a Go sleep of
// 0.5 ms lasts about 1.1 ms (the runtime's timers wake with millisecond
// resolution). Not a plain busy loop either: with more lookups in flight
// than the machine's 2 cores (the parallel endpoint has 20 per request), a
// loop that does not yield keeps its processor for its whole 0.5 ms and the
// lookups run one after another. Yielding, every lookup ends about 0.5 ms
// after it began, as a precise sleep would, while it keeps the CPUs busy.
const lookupCost = 500 * time.Microsecond

func busyWait(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
		runtime.Gosched()
	}
}

type item struct {
	name       string
	priceCents int64
	stock      int64
}

type inventory struct{ items map[int64]item }

func newInventory() *inventory {
	inv := &inventory{items: make(map[int64]item, itemCount)}
	for i := int64(1); i <= itemCount; i++ {
		inv.items[i] = item{name: fmt.Sprintf("Item %d", i), priceCents: 100 + (i*37)%900, stock: (i * 13) % 50}
	}
	return inv
}

func (inv *inventory) lookup(id int64) (*structpb.Struct, error) {
	busyWait(lookupCost)
	it, ok := inv.items[id]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "no item %d", id)
	}
	return structpb.NewStruct(map[string]any{"id": id, "name": it.name, "price_cents": it.priceCents, "stock": it.stock})
}

// GetItem: one item.
func (inv *inventory) GetItem(_ context.Context, req *wrapperspb.Int64Value) (*structpb.Struct, error) {
	return inv.lookup(req.GetValue())
}

// GetItems: the items of a list of ids, looked up one after another, in order.
func (inv *inventory) GetItems(_ context.Context, req *structpb.ListValue) (*structpb.ListValue, error) {
	out := &structpb.ListValue{}
	for _, v := range req.GetValues() {
		n, ok := v.GetKind().(*structpb.Value_NumberValue)
		if !ok {
			return nil, status.Error(codes.InvalidArgument, "ids must be numbers")
		}
		s, err := inv.lookup(int64(n.NumberValue))
		if err != nil {
			return nil, err
		}
		out.Values = append(out.Values, structpb.NewStructValue(s))
	}
	return out, nil
}

func runInventory(ctx context.Context, addr, healthAddr string) error {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := grpc.NewServer(grpc.StatsHandler(otelgrpc.NewServerHandler()))
	srv.RegisterService(&inventoryDesc, newInventory())
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	hs := &http.Server{Addr: healthAddr, Handler: mux}
	go func() {
		if err := serveHTTP(ctx, hs); err != nil {
			log.Fatal(err)
		}
	}()
	go func() {
		<-ctx.Done()
		srv.GracefulStop()
	}()
	log.Printf("gRPC listening on %s", addr)
	return srv.Serve(lis)
}

// --- frontend --------------------------------------------------------------------

const cartSize = 20

type frontend struct{ conn *grpc.ClientConn }

func runFrontend(ctx context.Context, addr, invAddr string) error {
	conn, err := grpc.NewClient(invAddr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithStatsHandler(otelgrpc.NewClientHandler()))
	if err != nil {
		return err
	}
	defer conn.Close()
	f := &frontend{conn: conn}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /cart/nplus1", f.cartNPlus1)
	mux.HandleFunc("GET /cart/batched", f.cartBatched)
	mux.HandleFunc("GET /cart/parallel", f.cartParallel)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	return serveHTTP(ctx, &http.Server{Addr: addr, Handler: otelhttp.NewHandler(mux, "frontend")})
}

// cartIDs: 20 item ids, a random start (1-140), then +3 each.
func cartIDs() []int64 {
	start := 1 + rand.Int64N(itemCount-3*(cartSize-1)-3)
	ids := make([]int64, cartSize)
	for i := range ids {
		ids[i] = start + 3*int64(i)
	}
	return ids
}

func (f *frontend) getItem(ctx context.Context, id int64) (*structpb.Struct, error) {
	out := new(structpb.Struct)
	err := f.conn.Invoke(ctx, "/"+serviceName+"/GetItem", wrapperspb.Int64(id), out)
	return out, err
}

// GET /cart/nplus1: GetItem for each id, one after another.
func (f *frontend) cartNPlus1(w http.ResponseWriter, r *http.Request) {
	ids := cartIDs()
	items := make([]*structpb.Struct, len(ids))
	for i, id := range ids {
		it, err := f.getItem(r.Context(), id)
		if err != nil {
			fail(w, err)
			return
		}
		items[i] = it
	}
	reply(w, items)
}

// GET /cart/batched: one GetItems with the 20 ids.
func (f *frontend) cartBatched(w http.ResponseWriter, r *http.Request) {
	ids := cartIDs()
	in := &structpb.ListValue{}
	for _, id := range ids {
		in.Values = append(in.Values, structpb.NewNumberValue(float64(id)))
	}
	out := new(structpb.ListValue)
	if err := f.conn.Invoke(r.Context(), "/"+serviceName+"/GetItems", in, out); err != nil {
		fail(w, err)
		return
	}
	if len(out.GetValues()) != len(ids) {
		fail(w, fmt.Errorf("GetItems answered %d items for %d ids", len(out.GetValues()), len(ids)))
		return
	}
	items := make([]*structpb.Struct, len(ids))
	for i, v := range out.GetValues() {
		items[i] = v.GetStructValue()
	}
	reply(w, items)
}

// GET /cart/parallel: the 20 GetItem calls at once (one goroutine each,
// errgroup without a limit), then the answer.
func (f *frontend) cartParallel(w http.ResponseWriter, r *http.Request) {
	ids := cartIDs()
	items := make([]*structpb.Struct, len(ids))
	g, ctx := errgroup.WithContext(r.Context())
	for i, id := range ids {
		g.Go(func() error {
			it, err := f.getItem(ctx, id)
			items[i] = it
			return err
		})
	}
	if err := g.Wait(); err != nil {
		fail(w, err)
		return
	}
	reply(w, items)
}

func reply(w http.ResponseWriter, items []*structpb.Struct) {
	out := make([]json.RawMessage, len(items))
	for i, it := range items {
		b, err := protojson.Marshal(it)
		if err != nil {
			fail(w, err)
			return
		}
		out[i] = b
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"items": out})
}

func fail(w http.ResponseWriter, err error) {
	log.Printf("error: %v", err)
	http.Error(w, err.Error(), http.StatusInternalServerError)
}

// --- collector -----------------------------------------------------------------

// runCollector: POST /v1/traces with an OTLP protobuf (optionally gzip) body;
// each request is appended to the file as one line of protobuf JSON
// ({"resourceSpans":[...]}, ids in base64), which tracelab convert reads.
func runCollector(ctx context.Context, addr, path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
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
	return serveHTTP(ctx, &http.Server{Addr: addr, Handler: mux})
}
