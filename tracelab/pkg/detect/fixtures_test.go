package detect_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"tracelab/internal/tracegen"
	"tracelab/pkg/otlp"
	"tracelab/pkg/trace"
)

// The small fixtures in tracelab/testdata are generated here, each in a
// different one of the accepted forms and encodings, so that detector tests
// also exercise the parser the way real exports do. Regenerate them with
//
//	go test ./pkg/detect -run TestFixturesAreCurrent -update
//
// Large fixtures (the lab's 1,600-call request) are built in the tests
// instead of being committed.
var update = flag.Bool("update", false, "rewrite the testdata fixtures")

const testdata = "../../testdata"

var fixtureStart = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

type encoding struct {
	form        string // "jaeger" {"result":...}, "plain" or "tempo" {"batches":...}
	base64IDs   bool   // protobuf's generic JSON mapping writes bytes as base64
	kindNames   bool   // "SPAN_KIND_CLIENT" instead of 3
	numberTimes bool   // 1700000000000000000 instead of "1700000000000000000"
}

type fixture struct {
	file  string
	enc   encoding
	spans func() []*trace.Span
}

var fixtures = []fixture{
	{
		// Jaeger HotROD, two /dispatch requests, as Jaeger's api/v3 returns
		// them: driver loops over Redis GetDriver one call at a time (the
		// positive); frontend fans out to route through a pool of 3 (the
		// negative).
		file: "hotrod-dispatch.jaeger.json",
		enc:  encoding{form: "jaeger"},
		spans: func() []*trace.Span {
			a := tracegen.HotRODTrace(1, fixtureStart)
			return append(a, tracegen.HotRODTrace(2, fixtureStart.Add(2*time.Second))...)
		},
	},
	{
		// A Django page listing 10 books, then one author query per book
		// with the id inlined, exported with base64 ids and enum names.
		file:  "django-nplus1.otlp.json",
		enc:   encoding{form: "plain", base64IDs: true, kindNames: true, numberTimes: true},
		spans: func() []*trace.Span { return tracegen.ORMTrace(3, fixtureStart, 10) },
	},
	{
		// Repeated calls below the threshold, as Tempo returns a trace.
		file:  "few-calls.tempo.json",
		enc:   encoding{form: "tempo"},
		spans: fewCallsTrace,
	},
}

// fewCallsTrace is an order request that repeats two calls, but fewer
// times than NPlusOneMinCalls: 4 stock look-ups and 3 cache reads.
func fewCallsTrace() []*trace.Span {
	t0 := fixtureStart.UnixNano()
	const tid = "4bf92f3577b34da6a3ce929d0e0e4736"
	root := &trace.Span{TraceID: tid, SpanID: "00f067aa0ba902b7", Name: "POST /orders", Kind: trace.KindServer, Service: "orders",
		Start: t0, End: t0 + 90e6, Attrs: trace.AttrsOf(map[string]string{"http.request.method": "POST", "http.route": "/orders"})}
	spans := []*trace.Span{root}
	at := t0 + 1e6
	for i := 0; i < 4; i++ {
		spans = append(spans, &trace.Span{TraceID: tid, SpanID: "1000000000000" + strconv.Itoa(100+i), ParentID: root.SpanID, Name: "GET",
			Kind: trace.KindClient, Service: "orders", Start: at, End: at + 12e6,
			Attrs: trace.AttrsOf(map[string]string{"http.request.method": "GET", "url.full": "http://inventory:8080/stock/" + strconv.Itoa(5000+i), "server.port": "8080"})})
		at += 13e6
	}
	for i := 0; i < 3; i++ {
		spans = append(spans, &trace.Span{TraceID: tid, SpanID: "2000000000000" + strconv.Itoa(100+i), ParentID: root.SpanID, Name: "GET",
			Kind: trace.KindClient, Service: "orders", Start: at, End: at + 2e6,
			Attrs: trace.AttrsOf(map[string]string{"db.system": "redis", "db.statement": "GET price:" + strconv.Itoa(5000+i)})})
		at += 3e6
	}
	for _, s := range spans {
		s.ResourceAttrs = map[string]string{"service.name": s.Service}
	}
	return spans
}

func TestFixturesAreCurrent(t *testing.T) {
	for _, f := range fixtures {
		want := encode(t, f.spans(), f.enc)
		path := filepath.Join(testdata, f.file)
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go test ./pkg/detect -run TestFixturesAreCurrent -update", path)
		}
	}
}

// loadFixture parses a committed fixture the way `tracelab analyze` does.
func loadFixture(t *testing.T, file string) []*trace.Trace {
	t.Helper()
	traces, err := otlp.ReadFile(filepath.Join(testdata, file))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return traces
}

// encode writes spans as OTLP JSON in the given form: one resourceSpans
// entry per service, attributes that look numeric as intValue.
func encode(t *testing.T, spans []*trace.Span, enc encoding) []byte {
	t.Helper()
	byService := map[string][]*trace.Span{}
	for _, s := range spans {
		byService[s.Service] = append(byService[s.Service], s)
	}
	services := slices.Sorted(maps.Keys(byService))
	id := func(h string) any {
		if !enc.base64IDs || h == "" {
			return h
		}
		b, err := hex.DecodeString(h)
		if err != nil {
			t.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(b)
	}
	ts := func(ns int64) any {
		if enc.numberTimes {
			return ns
		}
		return strconv.FormatInt(ns, 10)
	}
	attrs := func(m map[string]string) []any {
		out := []any{}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			v := map[string]any{"stringValue": m[k]}
			if n, err := strconv.ParseInt(m[k], 10, 64); err == nil && len(m[k]) < 10 {
				v = map[string]any{"intValue": strconv.FormatInt(n, 10)}
			}
			out = append(out, map[string]any{"key": k, "value": v})
		}
		return out
	}
	var resourceSpans []any
	for _, svc := range services {
		var js []any
		for _, s := range byService[svc] {
			m := map[string]any{
				"traceId": id(s.TraceID), "spanId": id(s.SpanID), "name": s.Name,
				"startTimeUnixNano": ts(s.Start), "endTimeUnixNano": ts(s.End),
				"attributes": attrs(s.Attrs.Map()), "kind": int(s.Kind),
			}
			if enc.kindNames {
				m["kind"] = "SPAN_KIND_" + s.Kind.String()
			}
			if s.ParentID != "" {
				m["parentSpanId"] = id(s.ParentID)
			}
			if s.Status != trace.StatusUnset {
				m["status"] = map[string]any{"code": int(s.Status), "message": s.StatusMessage}
			}
			js = append(js, m)
		}
		resourceSpans = append(resourceSpans, map[string]any{
			"resource":   map[string]any{"attributes": attrs(map[string]string{"service.name": svc})},
			"scopeSpans": []any{map[string]any{"scope": map[string]any{"name": "fixture"}, "spans": js}},
		})
	}
	var doc any = map[string]any{"resourceSpans": resourceSpans}
	switch enc.form {
	case "jaeger":
		doc = map[string]any{"result": doc}
	case "tempo":
		doc = map[string]any{"batches": resourceSpans}
	}
	b, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// throughTheWire writes spans as OTLP JSON and parses them back, as
// `tracelab analyze` would read them.
func throughTheWire(t *testing.T, spans []*trace.Span) []*trace.Trace {
	t.Helper()
	var buf bytes.Buffer
	if err := otlp.Write(&buf, trace.Group(spans)); err != nil {
		t.Fatal(err)
	}
	traces, err := otlp.ParseReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return traces
}
