package otlp

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"tracelab/pkg/trace"
)

// One trace: a server span and a client span under it, written with the
// encodings the spec prefers (hex ids, string times, numeric kind).
const plainOTLP = `{"resourceSpans":[{
  "resource":{"attributes":[{"key":"service.name","value":{"stringValue":"catalog"}}]},
  "scopeSpans":[{"scope":{"name":"io.opentelemetry.tomcat"},"spans":[
    {"traceId":"5B8EFFF798038103D269B633813FC60C","spanId":"EEE19B7EC3C1B174","name":"GET /catalog/summary","kind":2,
     "startTimeUnixNano":"1700000000000000000","endTimeUnixNano":"1700000001000000000",
     "attributes":[{"key":"http.route","value":{"stringValue":"/catalog/summary"}},
                   {"key":"http.response.status_code","value":{"intValue":"200"}},
                   {"key":"server.port","value":{"intValue":18080}},
                   {"key":"sampled","value":{"boolValue":true}},
                   {"key":"ratio","value":{"doubleValue":0.25}},
                   {"key":"tags","value":{"arrayValue":{"values":[{"stringValue":"a"},{"intValue":"2"}]}}}]},
    {"traceId":"5b8efff798038103d269b633813fc60c","spanId":"0102030405060708","parentSpanId":"eee19b7ec3c1b174","name":"GET","kind":3,
     "startTimeUnixNano":"1700000000100000000","endTimeUnixNano":"1700000000200000000",
     "status":{"code":2,"message":"boom"}}
  ]}]
}]}`

func parseOne(t *testing.T, doc string) *trace.Trace {
	t.Helper()
	traces, err := Parse(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if len(traces) != 1 {
		t.Fatalf("got %d traces, want 1", len(traces))
	}
	return traces[0]
}

func checkCatalogTrace(t *testing.T, tr *trace.Trace) {
	t.Helper()
	if tr.ID != "5b8efff798038103d269b633813fc60c" {
		t.Errorf("trace id = %q", tr.ID)
	}
	if len(tr.Spans) != 2 {
		t.Fatalf("%d spans, want 2", len(tr.Spans))
	}
	root := tr.Root
	if root.SpanID != "eee19b7ec3c1b174" || root.Name != "GET /catalog/summary" || root.Kind != trace.KindServer {
		t.Errorf("root = %+v", root)
	}
	if root.Service != "catalog" || root.Scope != "io.opentelemetry.tomcat" {
		t.Errorf("service/scope = %q/%q", root.Service, root.Scope)
	}
	if root.Start != 1700000000000000000 || root.End != 1700000001000000000 {
		t.Errorf("times = %d..%d", root.Start, root.End)
	}
	kids := tr.Children(root)
	if len(kids) != 1 || kids[0].Kind != trace.KindClient || kids[0].Status != trace.StatusError || kids[0].StatusMessage != "boom" {
		t.Fatalf("children of root = %+v", kids)
	}
}

func TestParsePlainOTLP(t *testing.T) {
	tr := parseOne(t, plainOTLP)
	checkCatalogTrace(t, tr)
	want := map[string]string{
		"http.route": "/catalog/summary", "http.response.status_code": "200", "server.port": "18080",
		"sampled": "true", "ratio": "0.25", "tags": `["a","2"]`,
	}
	for k, v := range want {
		if got := tr.Root.Attrs.Value(k); got != v {
			t.Errorf("attr %s = %q, want %q", k, got, v)
		}
	}
}

func TestParseJaegerV3(t *testing.T) {
	checkCatalogTrace(t, parseOne(t, `{"result":`+plainOTLP+`}`))
}

func TestParseTempoBatches(t *testing.T) {
	// Older Tempo versions also use instrumentationLibrarySpans.
	doc := strings.Replace(plainOTLP, `"resourceSpans"`, `"batches"`, 1)
	doc = strings.Replace(doc, `"scopeSpans"`, `"instrumentationLibrarySpans"`, 1)
	doc = strings.Replace(doc, `"scope":`, `"instrumentationLibrary":`, 1)
	checkCatalogTrace(t, parseOne(t, doc))
}

func TestParseAlternativeEncodings(t *testing.T) {
	// base64 ids (protobuf's generic JSON mapping), numeric times, kinds as
	// enum names, resource after scopeSpans.
	doc := `{"resourceSpans":[{
	  "scopeSpans":[{"spans":[
	    {"traceId":"W47/95gDgQPSabYzgT/GDA==","spanId":"7uGbfsPBsXQ=","name":"GET /catalog/summary","kind":"SPAN_KIND_SERVER",
	     "startTimeUnixNano":1700000000000000000,"endTimeUnixNano":1.700000001e18},
	    {"traceId":"W47/95gDgQPSabYzgT/GDA==","spanId":"AQIDBAUGBwg=","parentSpanId":"7uGbfsPBsXQ=","name":"GET","kind":"CLIENT",
	     "startTimeUnixNano":"1700000000100000000","endTimeUnixNano":"1700000000200000000","status":{"code":"STATUS_CODE_ERROR","message":"boom"}}
	  ],"scope":{"name":"io.opentelemetry.tomcat"}}],
	  "resource":{"attributes":[{"key":"service.name","value":{"stringValue":"catalog"}}]}
	}]}`
	checkCatalogTrace(t, parseOne(t, doc))
}

func TestParseConcatenatedDocumentsMerge(t *testing.T) {
	// Jaeger's HTTP API streams one {"result":...} per chunk; here one trace
	// is split across two chunks, a second trace follows, and one span is
	// repeated.
	a := `{"result":{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"a"}}]},"scopeSpans":[{"spans":[
	  {"traceId":"00000000000000000000000000000001","spanId":"0000000000000001","name":"root","kind":2,"startTimeUnixNano":"100","endTimeUnixNano":"200"}]}]}]}}`
	b := `{"result":{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"b"}}]},"scopeSpans":[{"spans":[
	  {"traceId":"00000000000000000000000000000001","spanId":"0000000000000002","parentSpanId":"0000000000000001","name":"child","kind":2,"startTimeUnixNano":"110","endTimeUnixNano":"190"},
	  {"traceId":"00000000000000000000000000000001","spanId":"0000000000000001","name":"root","kind":2,"startTimeUnixNano":"100","endTimeUnixNano":"200"},
	  {"traceId":"00000000000000000000000000000002","spanId":"0000000000000003","name":"other","kind":2,"startTimeUnixNano":"300","endTimeUnixNano":"400"}]}]}]}}`
	traces, err := Parse(strings.NewReader(a + b)) // back to back, no separator
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) != 2 {
		t.Fatalf("%d traces, want 2", len(traces))
	}
	first := traces[0]
	if len(first.Spans) != 2 || first.Root.Name != "root" || len(first.Children(first.Root)) != 1 {
		t.Fatalf("first trace not merged: %d spans, root %q", len(first.Spans), first.Root.Name)
	}
	if c := first.Children(first.Root)[0]; c.Service != "b" || first.Root.Service != "a" {
		t.Errorf("services = %q/%q, want a/b", first.Root.Service, c.Service)
	}
}

func TestParseEmptyResults(t *testing.T) {
	for _, doc := range []string{`{"resourceSpans":[]}`, `{"result":{}}`, `{"batches":null}`, `{"result":{"resourceSpans":[]}}`} {
		traces, err := Parse(strings.NewReader(doc))
		if err != nil || len(traces) != 0 {
			t.Errorf("%s: %d traces, err %v; want none and no error", doc, len(traces), err)
		}
	}
}

func TestParseRejectsWhatIsNotOTLP(t *testing.T) {
	cases := map[string]string{
		"empty":              "",
		"whitespace":         "  \n",
		"not JSON":           "hello",
		"top-level array":    `[{"resourceSpans":[]}]`,
		"other object":       `{"spans":[]}`,
		"jaeger v1":          `{"data":[{"traceID":"1","spans":[]}]}`,
		"truncated":          `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"01"`,
		"bad kind":           `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"01","spanId":"02","kind":"SIDEWAYS"}]}]}]}`,
		"spans not an array": `{"resourceSpans":[{"scopeSpans":[{"spans":{}}]}]}`,
		"time not a number":  `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"01","spanId":"02","startTimeUnixNano":"soon"}]}]}]}`,
		"api error":          `{"error":{"httpCode":404,"message":"trace not found"}}`,
		"second doc broken":  `{"resourceSpans":[]} {"foo":1}`,
		"trailing garbage":   `{"resourceSpans":[]} ]`,
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(doc))
			if err == nil {
				t.Fatal("no error")
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Errorf("error %T is not a *FormatError: %v", err, err)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || msg == "" {
				t.Errorf("message is not one line: %q", msg)
			}
		})
	}
	_, err := Parse(strings.NewReader(`{"spans":[]}`))
	if want := `not OTLP JSON: document 1: expected "resourceSpans", "result.resourceSpans", "batches" or a bare "scopeSpans" at the top level`; err == nil || err.Error() != want {
		t.Errorf("message = %v\nwant %s", err, want)
	}
	_, err = Parse(strings.NewReader(`{"data":[]}`))
	if err == nil || !strings.Contains(err.Error(), "/api/v3/traces") {
		t.Errorf("Jaeger v1 input should get a hint, got %v", err)
	}
}

func TestNormalizeID(t *testing.T) {
	cases := map[string]string{
		"5B8EFFF798038103D269B633813FC60C": "5b8efff798038103d269b633813fc60c",
		"W47/95gDgQPSabYzgT/GDA==":         "5b8efff798038103d269b633813fc60c",
		"W47_95gDgQPSabYzgT_GDA":           "5b8efff798038103d269b633813fc60c",
		"7uGbfsPBsXQ=":                     "eee19b7ec3c1b174",
		"0000000000000000":                 "",
		"AAAAAAAAAAA=":                     "",
		"":                                 "",
		"not-an-id":                        "not-an-id",
	}
	for in, want := range cases {
		if got := normalizeID(in); got != want {
			t.Errorf("normalizeID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWriteRoundTrip(t *testing.T) {
	in := parseOne(t, plainOTLP)
	var buf bytes.Buffer
	if err := Write(&buf, []*trace.Trace{in}); err != nil {
		t.Fatal(err)
	}
	out := parseOne(t, buf.String())
	checkCatalogTrace(t, out)
	for k, v := range in.Root.Attrs.Map() {
		if out.Root.Attrs.Value(k) != v {
			t.Errorf("attr %s: %q became %q", k, v, out.Root.Attrs.Value(k))
		}
	}
	if out.Root.ResourceAttrs["service.name"] != "catalog" {
		t.Errorf("resource = %v", out.Root.ResourceAttrs)
	}
}

func TestAppendStringEscapes(t *testing.T) {
	got := string(appendString(nil, "a\"b\\c\nd\x01é"))
	if want := `"a\"b\\c\nd\u0001é"`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// The lexer refills its buffer mid-token; with tiny buffers every token
// straddles a refill, so every path that holds a slice across one is hit.
func TestParseAcrossBufferBoundaries(t *testing.T) {
	doc := `{"result":` + plainOTLP + "}\n" + strings.Replace(plainOTLP, `"GET"`, `"GET \"quoted\" \u00e9\ud83d\ude00 \\"`, 1)
	defer func(n int) { lexerBufSize = n }(lexerBufSize)
	want, err := ParseSpans(strings.NewReader(doc))
	if err != nil || len(want) != 4 {
		t.Fatalf("reference parse: %d spans, %v", len(want), err)
	}
	if got := want[3].Name; got != "GET \"quoted\" é😀 \\" {
		t.Errorf("unescaped name = %q", got)
	}
	for size := 1; size <= 70; size++ {
		lexerBufSize = size
		got, err := ParseSpans(strings.NewReader(doc))
		if err != nil {
			t.Fatalf("buffer %d: %v", size, err)
		}
		if len(got) != len(want) {
			t.Fatalf("buffer %d: %d spans, want %d", size, len(got), len(want))
		}
		for i := range got {
			g, w := got[i], want[i]
			if g.TraceID != w.TraceID || g.SpanID != w.SpanID || g.ParentID != w.ParentID || g.Name != w.Name ||
				g.Start != w.Start || g.End != w.End || g.Kind != w.Kind || g.Service != w.Service || len(g.Attrs) != len(w.Attrs) {
				t.Fatalf("buffer %d: span %d = %+v, want %+v", size, i, g, w)
			}
			for k, v := range w.Attrs.Map() {
				if g.Attrs.Value(k) != v {
					t.Fatalf("buffer %d: span %d attr %s = %q, want %q", size, i, k, g.Attrs.Value(k), v)
				}
			}
		}
	}
}

// The Java agent's logging-otlp exporter prints one bare ResourceSpans
// object per line; each line's resource belongs to its own spans only.
func TestParseAgentLogLines(t *testing.T) {
	doc := `{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"petclinic"}}]},"scopeSpans":[{"scope":{"name":"io.opentelemetry.jdbc"},"spans":[{"traceId":"01","spanId":"02","parentSpanId":"03","name":"SELECT","kind":3,"startTimeUnixNano":"10","endTimeUnixNano":"20"}]}]}
{"scopeSpans":[{"spans":[{"traceId":"01","spanId":"03","name":"GET /","kind":2,"startTimeUnixNano":"5","endTimeUnixNano":"30"}]}],"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"front"}}]}}
`
	traces, err := Parse(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) != 1 || len(traces[0].Spans) != 2 {
		t.Fatalf("got %d traces, want 1 with 2 spans", len(traces))
	}
	tr := traces[0]
	if tr.Root.Service != "front" || tr.Span("02").Service != "petclinic" || tr.Span("02").Scope != "io.opentelemetry.jdbc" {
		t.Errorf("services or scope mixed up: root %q, child %q/%q", tr.Root.Service, tr.Span("02").Service, tr.Span("02").Scope)
	}
	if tr.Parent(tr.Span("02")) != tr.Root {
		t.Error("the JDBC span is not linked under the server span")
	}
}

// A span's attributes come out sorted by key, a repeated key's last value
// winning and an empty key dropped, whatever order the producer wrote.
func TestParseSpanAttributesSortedLastWins(t *testing.T) {
	doc := `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"01","spanId":"02","attributes":[
	  {"key":"z","value":{"stringValue":"first"}},
	  {"key":"a","value":{"intValue":1}},
	  {"key":"","value":{"stringValue":"no key"}},
	  {"key":"m","value":{"stringValue":"a value longer than sixteen bytes"}},
	  {"key":"z","value":{"stringValue":"last"}}]}]}]}]}`
	tr := parseOne(t, doc)
	want := trace.Attrs{{Key: "a", Value: "1"}, {Key: "m", Value: "a value longer than sixteen bytes"}, {Key: "z", Value: "last"}}
	if got := tr.Root.Attrs; !slices.Equal(got, want) {
		t.Errorf("attributes %v, want %v", got, want)
	}
}

// intern and internRecent return each string's own text, whichever
// strings share a slot of the recent table; intern the same copy for the
// same text.
func TestInternReturnsTheTextAsked(t *testing.T) {
	p := &parser{strs: map[string]string{}}
	words := []string{"", "a", "GET", "POST", "http.route", "url.path", "5432", "5433"}
	for i := 0; i < 2000; i++ { // many strings per slot
		words = append(words, strings.Repeat("x", i%40)+string(rune('a'+i%26)))
	}
	for round := 0; round < 2; round++ {
		for _, w := range words {
			if got := p.intern([]byte(w)); got != w {
				t.Fatalf("intern(%q) = %q", w, got)
			}
			if got := p.internRecent([]byte(w)); got != w {
				t.Fatalf("internRecent(%q) = %q", w, got)
			}
		}
	}
	a, b := p.intern([]byte("http.route")), p.intern([]byte("http.route"))
	if unsafe.StringData(a) != unsafe.StringData(b) {
		t.Error("the same text interned twice gave two copies")
	}
}

// Integers read the same through the short path for plain digits as
// through strconv for the rest: 19 digits, past MaxInt64 (wrapping, as
// unsigned), signs, exponents.
func TestIntegerForms(t *testing.T) {
	for in, want := range map[string]int64{
		`"1735732800150000000"`:  1735732800150000000,
		`1735732800150000000`:    1735732800150000000,
		`"9223372036854775807"`:  9223372036854775807,
		`"9223372036854775808"`:  -9223372036854775808,
		`"18446744073709551615"`: -1,
		`"-5"`:                   -5,
		`"0"`:                    0,
		`" 42 "`:                 42,
		`1.7e18`:                 1700000000000000000,
	} {
		p := &parser{lx: newLexer(strings.NewReader(in), 64, Limits{}.resolved()), strs: map[string]string{}}
		got, err := p.integer("x")
		if err != nil || got != want {
			t.Errorf("integer(%s) = %d, %v; want %d", in, got, err, want)
		}
	}
}

// String attributes in the compact form (read by compactStringAttr) read
// as the same attributes written with spaces (read by the generic path).
func TestCompactStringAttributesReadAsSpaced(t *testing.T) {
	attrs := `[{"key":"http.request.method","value":{"stringValue":"GET"}},` +
		`{"key":"db.statement","value":{"stringValue":"SELECT a FROM b WHERE c = 17 LIMIT 21"}},` +
		`{"key":"empty","value":{"stringValue":""}},` +
		`{"key":"quoted","value":{"stringValue":"say \"hi\""}},` +
		`{"key":"","value":{"stringValue":"no key"}},` +
		`{"key":"n","value":{"intValue":"7"}},` +
		`{"key":"http.request.method","value":{"stringValue":"POST"}}]`
	doc := func(a string) string {
		return `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"01","spanId":"02","attributes":` + a + `}]}]}]}`
	}
	spaced := strings.NewReplacer(`{"key":`, `{ "key" : `, `,"value":`, ` , "value": `).Replace(attrs)
	compact, generic := parseOne(t, doc(attrs)).Root.Attrs, parseOne(t, doc(spaced)).Root.Attrs
	if !slices.Equal(compact, generic) {
		t.Errorf("compact %v\nspaced  %v", compact, generic)
	}
	if v := compact.Value("http.request.method"); v != "POST" {
		t.Errorf("repeated key: %q, want the last, POST", v)
	}
	if len(compact) != 5 {
		t.Errorf("%d attributes, want 5 (the empty key dropped, the repeated one once): %v", len(compact), compact)
	}
}

// Spans that carry the same keys in the same order reuse the order found
// for the first (sortedAttrs); each still gets its own values, the last of
// a repeated key winning, and a span with other keys is sorted afresh.
func TestSortedAttrsReusedOrder(t *testing.T) {
	span := func(id, attrs string) string {
		return `{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"` + id + `","name":"n","startTimeUnixNano":"1","endTimeUnixNano":"2","attributes":[` + attrs + `]}`
	}
	kv := func(k, v string) string { return `{"key":"` + k + `","value":{"stringValue":"` + v + `"}}` }
	doc := `{"resourceSpans":[{"scopeSpans":[{"spans":[` +
		span("00000000000000a1", kv("z", "1")+","+kv("a", "2")+","+kv("z", "3")) + "," +
		span("00000000000000a2", kv("z", "4")+","+kv("a", "5")+","+kv("z", "6")) + "," +
		span("00000000000000a3", kv("m", "7")+","+kv("a", "8")) + `]}]}]}`
	tr := parseOne(t, doc)
	want := map[string]trace.Attrs{
		"00000000000000a1": {{Key: "a", Value: "2"}, {Key: "z", Value: "3"}},
		"00000000000000a2": {{Key: "a", Value: "5"}, {Key: "z", Value: "6"}},
		"00000000000000a3": {{Key: "a", Value: "8"}, {Key: "m", Value: "7"}},
	}
	for _, s := range tr.Spans {
		if !slices.Equal(s.Attrs, want[s.SpanID]) {
			t.Errorf("span %s: attributes %v, want %v", s.SpanID, s.Attrs, want[s.SpanID])
		}
	}
}
