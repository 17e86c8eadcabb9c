package otlp

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"tracelab/pkg/trace"
)

// fuzzLimits are small, so the fuzzer reaches every limit with short inputs.
var fuzzLimits = Limits{MaxDepth: 6, MaxValueBytes: 2048, MaxSpansPerTrace: 40, MaxSpans: 100, MaxInputBytes: 64 << 10}

// FuzzParse feeds arbitrary bytes to the parser. Whatever the input, the
// parse must end without a panic in spans or in one error of this package
// on one line; it must not depend on where the lexer's buffer boundaries
// fall; and what it accepts must survive Write and a second parse.
// Plain go test replays the seeds below and testdata/fuzz/FuzzParse;
// make test fuzzes for a bounded time (go test -fuzz FuzzParse).
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		plainOTLP,
		`{"result":` + plainOTLP + `}`,
		strings.Replace(plainOTLP, `"resourceSpans"`, `"batches"`, 1),
		"\xef\xbb\xbf" + spansDoc("01", "01", "02"),
		spanDoc(nestedArrays(5), ""),
		spanDoc(nestedKVLists(7), ""),
		spanDoc(`{"stringValue":"a\u00e9\ud83d\ude00\ud800 \\ \" \/"}`, `,"status":{"code":"STATUS_CODE_ERROR","message":null}`),
		plainOTLP[:len(plainOTLP)/2],
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		spans, err := parseSpans(bytes.NewReader(in), lexerBufSize, fuzzLimits.resolved())
		if err != nil {
			var fe *FormatError
			var le *LimitError
			if !errors.As(err, &fe) && !errors.As(err, &le) {
				t.Fatalf("error %T: %v", err, err)
			}
			if msg := err.Error(); msg == "" || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error is not one line: %q", msg)
			}
		}

		// Every token straddles a refill with a 3-byte buffer.
		small, serr := parseSpans(bytes.NewReader(in), 3, fuzzLimits.resolved())
		if fmt.Sprint(err) != fmt.Sprint(serr) {
			t.Fatalf("error with a large buffer: %v\nwith a 3-byte buffer: %v", err, serr)
		}
		if err != nil {
			return
		}
		if d := diffSpans(spans, small); d != "" {
			t.Fatalf("a 3-byte buffer read different spans: %s", d)
		}

		traces := trace.Group(spans)
		var out bytes.Buffer
		if err := Write(&out, traces); err != nil {
			t.Fatal(err)
		}
		// Written values are escaped, so longer than read: no size limits.
		again, err := ParseSpansLimits(&out, Limits{MaxValueBytes: -1, MaxSpans: -1, MaxSpansPerTrace: -1})
		if err != nil {
			t.Fatalf("Write's output does not parse: %v\n%s", err, out.String())
		}
		var want []*trace.Span
		for _, t := range traces {
			want = append(want, t.Spans...)
		}
		if d := diffSpans(flatten(want), flatten(again)); d != "" {
			t.Fatalf("after Write and a second parse: %s", d)
		}
	})
}

func flatten(spans []*trace.Span) []*trace.Span {
	var out []*trace.Span
	for _, t := range trace.Group(spans) {
		out = append(out, t.Spans...)
	}
	return out
}

// diffSpans describes the first difference between two span lists, or
// returns "".
func diffSpans(a, b []*trace.Span) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d spans, then %d", len(a), len(b))
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.TraceID != y.TraceID || x.SpanID != y.SpanID || x.ParentID != y.ParentID || x.Name != y.Name ||
			x.Kind != y.Kind || x.Start != y.Start || x.End != y.End || x.Status != y.Status ||
			x.StatusMessage != y.StatusMessage || x.Service != y.Service || x.Scope != y.Scope || len(x.Attrs) != len(y.Attrs) {
			return fmt.Sprintf("span %d: %+v, then %+v", i, *x, *y)
		}
		for k, v := range x.Attrs.Map() {
			if w, ok := y.Attrs.Get(k); !ok || w != v {
				return fmt.Sprintf("span %d attribute %q: %q, then %q", i, k, v, w)
			}
		}
	}
	return ""
}
