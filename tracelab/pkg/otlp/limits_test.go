package otlp

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"tracelab/pkg/trace"
)

// spanDoc is one span of trace 01 whose attribute "v" has the given value
// and which carries extra members (a leading comma included) verbatim.
func spanDoc(value, extra string) string {
	return `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"01","spanId":"02","name":"GET","kind":2` +
		`,"attributes":[{"key":"v","value":` + value + `}]` + extra + `}]}]}]}`
}

// nestedArrays is an AnyValue of levels arrayValues around "x".
func nestedArrays(levels int) string {
	return strings.Repeat(`{"arrayValue":{"values":[`, levels) + `{"stringValue":"x"}` + strings.Repeat(`]}}`, levels)
}

// nestedKVLists is an AnyValue of levels kvlistValues, each {"k": level below}.
func nestedKVLists(levels int) string {
	return strings.Repeat(`{"kvlistValue":{"values":[{"key":"k","value":`, levels) + `{"stringValue":"x"}` + strings.Repeat(`}]}}`, levels)
}

// allocated runs f and returns the bytes it allocated. TotalAlloc only
// grows, so it bounds the peak heap f needed from above.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

const memoryBound = 64 << 20

func parseBounded(t *testing.T, r io.Reader, lim Limits) ([]*trace.Trace, error) {
	t.Helper()
	var traces []*trace.Trace
	var err error
	n := allocated(func() { traces, err = ParseReaderLimits(r, lim) })
	if n > memoryBound {
		t.Errorf("the parse allocated %d MiB, more than %d MiB", n>>20, memoryBound>>20)
	}
	t.Logf("allocated %d KiB", n>>10)
	return traces, err
}

func wantLimitError(t *testing.T, err error, flag string) {
	t.Helper()
	var le *LimitError
	if !errors.As(err, &le) {
		t.Fatalf("error %T (%v), want a *LimitError", err, err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, flag) {
		t.Errorf("message %q should be one line naming %s", msg, flag)
	}
}

// Each level used to quote the text of the level below, doubling its
// backslashes: 28 levels of a 1.2 KB file took 2.1 GiB and 30 ran out of
// memory. Built in place, they cost a few KB.
func TestNestedValuesStayLinear(t *testing.T) {
	for _, levels := range []int{24, 28, 30, 32} {
		for name, value := range map[string]string{"arrays": nestedArrays(levels), "kvlists": nestedKVLists(levels)} {
			traces, err := parseBounded(t, strings.NewReader(spanDoc(value, "")), Limits{})
			if err != nil {
				t.Fatalf("%d levels of %s: %v", levels, name, err)
			}
			want := strings.Repeat("[", levels) + `"x"` + strings.Repeat("]", levels)
			if name == "kvlists" {
				want = strings.Repeat(`{"k":`, levels) + `"x"` + strings.Repeat("}", levels)
			}
			if got := traces[0].Root.Attrs.Value("v"); got != want {
				t.Errorf("%d levels of %s: rendered %.80q…, want %.80q…", levels, name, got, want)
			}
		}
	}
}

// Deeper than MaxDepth is one LimitError, found before recursing further:
// 100,000 levels overflowed the stack before the limit.
func TestNestingBeyondTheLimit(t *testing.T) {
	for _, levels := range []int{33, 1000, 100_000} {
		for name, value := range map[string]string{"arrays": nestedArrays(levels), "kvlists": nestedKVLists(levels)} {
			_, err := parseBounded(t, strings.NewReader(spanDoc(value, "")), Limits{})
			wantLimitError(t, err, "--max-attr-depth")
			if !strings.Contains(err.Error(), "limit of 32") {
				t.Errorf("%d levels of %s: %v, want the default limit 32 named", levels, name, err)
			}
		}
	}
	if _, err := ParseReaderLimits(strings.NewReader(spanDoc(nestedArrays(40), "")), Limits{MaxDepth: 40}); err != nil {
		t.Errorf("MaxDepth 40 should admit 40 levels: %v", err)
	}
	if got := (Limits{MaxDepth: -1}).resolved().MaxDepth; got != maxDepthCeiling {
		t.Errorf("a lifted MaxDepth resolves to %d, want the ceiling %d", got, maxDepthCeiling)
	}
}

// Unknown members are skipped without recursion, whatever their depth,
// in a span and at the top level alike.
func TestDeepUnknownMembersAreSkipped(t *testing.T) {
	deep := strings.Repeat("[", 1_000_000) + strings.Repeat("]", 1_000_000)
	deepObj := strings.Repeat(`{"a":`, 200_000) + "1" + strings.Repeat("}", 200_000)
	docs := map[string]string{
		"in a span":     spanDoc(`{"stringValue":"x"}`, `,"extra":`+deep+`,"more":`+deepObj),
		"in a document": `{"extra":` + deep + `,` + spanDoc(`{"stringValue":"x"}`, "")[1:],
		"in a value":    spanDoc(`{"future":`+deep+`,"stringValue":"x"}`, ""),
	}
	for name, doc := range docs {
		traces, err := parseBounded(t, strings.NewReader(doc), Limits{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(traces) != 1 || traces[0].Root.Attrs.Value("v") != "x" {
			t.Errorf("%s: the span around the unknown member was lost", name)
		}
	}
}

// repeatReader yields n copies of c without holding them.
type repeatReader struct {
	c byte
	n int64
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	k := min(int64(len(p)), r.n)
	for i := range p[:k] {
		p[i] = r.c
	}
	r.n -= k
	return int(k), nil
}

// A string of 1 GiB stops at MaxValueBytes: the lexer's buffer never grows
// past what the longest allowed token needs.
func TestHugeStringStopsAtTheLimit(t *testing.T) {
	doc := spanDoc(`{"stringValue":"@"}`, "")
	head, tail, _ := strings.Cut(doc, "@")
	for name, r := range map[string]func() io.Reader{
		"string": func() io.Reader {
			return io.MultiReader(strings.NewReader(head), &repeatReader{'a', 1 << 30}, strings.NewReader(tail))
		},
		"number": func() io.Reader {
			h, _, _ := strings.Cut(doc, `"@"`)
			return io.MultiReader(strings.NewReader(strings.Replace(h, "stringValue", "intValue", 1)), &repeatReader{'1', 1 << 30})
		},
		"key": func() io.Reader {
			return io.MultiReader(strings.NewReader(`{"`), &repeatReader{'k', 1 << 30})
		},
	} {
		_, err := parseBounded(t, r(), Limits{})
		wantLimitError(t, err, "--max-attr-bytes")
		if t.Failed() {
			t.Fatalf("%s: %v", name, err)
		}
	}
	// Exactly at the limit is fine, one byte over is not, whatever the
	// buffer size.
	for _, bufSize := range []int{1, 7, 4096} {
		for n, ok := range map[int]bool{1000: true, 1001: false} {
			doc := head + strings.Repeat("a", n) + tail
			_, err := parseSpans(strings.NewReader(doc), bufSize, Limits{MaxValueBytes: 1000}.resolved())
			if ok && err != nil || !ok && err == nil {
				t.Errorf("buffer %d, %d bytes under a limit of 1000: error %v", bufSize, n, err)
			}
		}
	}
}

// Elements under the size limit can add up past it once rendered.
func TestRenderedValueSizeLimit(t *testing.T) {
	elem := `{"stringValue":"` + strings.Repeat("a", 100) + `"}`
	value := `{"arrayValue":{"values":[` + strings.Repeat(elem+",", 99) + elem + `]}}`
	_, err := ParseReaderLimits(strings.NewReader(spanDoc(value, "")), Limits{MaxValueBytes: 5000})
	wantLimitError(t, err, "--max-attr-bytes")
	if _, err := ParseReaderLimits(strings.NewReader(spanDoc(value, "")), Limits{MaxValueBytes: 20000}); err != nil {
		t.Errorf("10 KB under a 20 KB limit: %v", err)
	}
}

func spansDoc(traceIDs ...string) string {
	var b strings.Builder
	b.WriteString(`{"resourceSpans":[{"scopeSpans":[{"spans":[`)
	for i, id := range traceIDs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"traceId":"` + id + `","spanId":"` + strings.Repeat("0", 15) + string(rune('1'+i)) + `","name":"s"}`)
	}
	b.WriteString(`]}]}]}`)
	return b.String()
}

func TestSpanCountLimits(t *testing.T) {
	doc := spansDoc("01", "01", "01", "02", "02")
	if _, err := ParseReaderLimits(strings.NewReader(doc), Limits{MaxSpansPerTrace: 3, MaxSpans: 5}); err != nil {
		t.Errorf("at both limits: %v", err)
	}
	_, err := ParseReaderLimits(strings.NewReader(doc), Limits{MaxSpansPerTrace: 2})
	wantLimitError(t, err, "--max-trace-spans")
	if !strings.Contains(err.Error(), "trace 01") {
		t.Errorf("%v should name the trace", err)
	}
	_, err = ParseReaderLimits(strings.NewReader(doc), Limits{MaxSpans: 4})
	wantLimitError(t, err, "--max-spans")
	if _, err := ParseReaderLimits(strings.NewReader(doc), Limits{MaxSpansPerTrace: -1, MaxSpans: -1}); err != nil {
		t.Errorf("lifted limits: %v", err)
	}
}

func TestInputSizeLimit(t *testing.T) {
	doc := spansDoc("01")
	for _, bufSize := range []int{1, 5, 1 << 16} {
		for name, c := range map[string]struct {
			in  string
			max int64
			ok  bool
		}{
			"at the limit":              {doc, int64(len(doc)), true},
			"one byte over":             {doc, int64(len(doc)) - 1, false},
			"trailing space past it":    {doc + "  ", int64(len(doc)), false},
			"a second document past it": {doc + doc, int64(len(doc)) + 3, false},
		} {
			_, err := parseSpans(strings.NewReader(c.in), bufSize, Limits{MaxInputBytes: c.max}.resolved())
			if c.ok && err != nil {
				t.Errorf("buffer %d, %s: %v", bufSize, name, err)
			}
			if !c.ok {
				wantLimitError(t, err, "--max-response-bytes")
			}
		}
	}
	// By default the input's size is not limited.
	if got := (Limits{}).resolved().MaxInputBytes; got < 1<<62 {
		t.Errorf("the default input limit resolves to %d", got)
	}
}

// Nested values read as JSON with sorted keys, repeated keys the last
// winning and scalars as strings, the way the top level renders them.
func TestNestedValueRendering(t *testing.T) {
	value := `{"kvlistValue":{"values":[
	  {"key":"b","value":{"intValue":"2"}},
	  {"key":"a","value":{"arrayValue":{"values":[{"boolValue":true},{"doubleValue":0.5},null,{},{"kvlistValue":{}}]}}},
	  {"key":"b","value":{"stringValue":"q\"uote"}},
	  {"key":"","value":{"stringValue":"dropped"}},
	  {"key":"c"}]}}`
	traces, err := Parse(strings.NewReader(spanDoc(value, "")))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := traces[0].Root.Attrs.Value("v"), `{"a":["true","0.5","","",{}],"b":"q\"uote","c":""}`; got != want {
		t.Errorf("rendered %s\nwant     %s", got, want)
	}
}

// ParseReaderFirst keeps the first n traces whole even when their spans are
// spread over the input, as Jaeger's answers spread them by process.
func TestParseReaderFirstKeepsWholeTraces(t *testing.T) {
	res := func(service string, traceIDs ...int) string {
		var spans []string
		for _, id := range traceIDs {
			spans = append(spans, fmt.Sprintf(`{"traceId":"%032x","spanId":"%016x","name":"op","startTimeUnixNano":"1","endTimeUnixNano":"2"}`, id, id<<8|len(service)))
		}
		return `{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"` + service + `"}}]},"scopeSpans":[{"spans":[` + strings.Join(spans, ",") + `]}]}`
	}
	// Traces 1, 2 and 3 each have a span in both resources.
	doc := `{"resourceSpans":[` + res("front", 1, 2, 3) + "," + res("backend", 3, 2, 1) + `]}`
	traces, dropped, err := ParseReaderFirst(strings.NewReader(doc), Limits{}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) != 2 || dropped != 2 {
		t.Fatalf("%d traces, %d spans dropped; want 2 and 2", len(traces), dropped)
	}
	for _, tr := range traces {
		if len(tr.Spans) != 2 || (tr.ID != fmt.Sprintf("%032x", 1) && tr.ID != fmt.Sprintf("%032x", 2)) {
			t.Errorf("trace %s with %d spans; want traces 1 and 2, 2 spans each", tr.ID, len(tr.Spans))
		}
	}
	if all, dropped, err := ParseReaderFirst(strings.NewReader(doc), Limits{}, 0); err != nil || len(all) != 3 || dropped != 0 {
		t.Errorf("n = 0: %d traces, %d dropped, %v; want all 3", len(all), dropped, err)
	}
}
