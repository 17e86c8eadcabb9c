package otlp

import (
	"fmt"
	"io"

	"tracelab/pkg/trace"
)

// Limits bound what one parse may cost, so that a hostile or broken input
// ends in a one-line error instead of exhausting memory or the stack.
// A zero field takes its value from DefaultLimits; a negative one lifts
// that limit (MaxDepth excepted: see maxDepthCeiling). The flag named in
// each field's comment is the tracelab option that sets it.
type Limits struct {
	// MaxDepth bounds how deeply an attribute value may nest arrayValue
	// and kvlistValue. Reading a value recurses once per level, so this
	// also bounds the stack. Default 32 (--max-attr-depth).
	MaxDepth int
	// MaxValueBytes bounds the bytes of any single string or number in the
	// input (attribute values are the large ones: statements, stack
	// traces), and of an attribute value once rendered as text (an array's
	// elements together). The lexer's buffer grows only to hold one such
	// token, so this bounds it too. Default 1 MiB (--max-attr-bytes).
	MaxValueBytes int
	// MaxSpansPerTrace bounds the spans read for one trace id, repeats
	// included. Default 100,000 (--max-trace-spans).
	MaxSpansPerTrace int
	// MaxSpans bounds the spans of the whole input, which is what the
	// parse keeps in memory (the text itself is streamed). Default
	// 5,000,000 (--max-spans).
	MaxSpans int
	// MaxInputBytes bounds the bytes read from the input. Its default, 0,
	// means no limit: a file is streamed, so its size costs memory only
	// through the spans kept, which MaxSpans bounds. A caller reading a
	// network answer sets it (--max-response-bytes bounds those first).
	MaxInputBytes int64
}

// DefaultLimits are the limits Parse, ParseReader, ParseSpans and ReadFile
// apply. Real traces stay far below them: the lab's largest recorded run
// has about 90k spans, traces of a few thousand spans, values of a few KB
// and arrays nested two levels at most.
var DefaultLimits = Limits{
	MaxDepth:         32,
	MaxValueBytes:    1 << 20,
	MaxSpansPerTrace: 100_000,
	MaxSpans:         5_000_000,
}

// maxDepthCeiling caps MaxDepth whatever the caller asks: each level costs
// a few hundred bytes of stack, and Go aborts the process (it cannot be
// recovered) when a goroutine's stack passes 1 GB.
const maxDepthCeiling = 10_000

// unlimited stands for a lifted limit in the resolved values.
const unlimited = int(^uint(0) >> 1)

// resolved fills in the defaults and turns lifted limits into the largest
// value, so the parser compares without special cases.
func (l Limits) resolved() Limits {
	pick := func(v, def int) int {
		switch {
		case v == 0:
			return def
		case v < 0:
			return unlimited
		}
		return v
	}
	r := Limits{
		MaxDepth:         pick(l.MaxDepth, DefaultLimits.MaxDepth),
		MaxValueBytes:    pick(l.MaxValueBytes, DefaultLimits.MaxValueBytes),
		MaxSpansPerTrace: pick(l.MaxSpansPerTrace, DefaultLimits.MaxSpansPerTrace),
		MaxSpans:         pick(l.MaxSpans, DefaultLimits.MaxSpans),
		MaxInputBytes:    l.MaxInputBytes,
	}
	if r.MaxDepth > maxDepthCeiling {
		r.MaxDepth = maxDepthCeiling
	}
	if r.MaxInputBytes == 0 {
		r.MaxInputBytes = DefaultLimits.MaxInputBytes
	}
	if r.MaxInputBytes <= 0 {
		r.MaxInputBytes = int64(unlimited)
	}
	return r
}

// LimitError means the input went past one of the Limits. Its message is
// one line that names the limit and the flag that raises it.
type LimitError struct {
	Limit  string // what was exceeded, e.g. "attribute nesting depth"
	Max    int64  // the limit in force
	Flag   string // the tracelab flag that sets it
	Offset int64  // input offset where it was exceeded
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("input exceeds the %s limit of %d near byte %d; raise it with %s if the input is genuine", e.Limit, e.Max, e.Offset, e.Flag)
}

// ParseReaderLimits is ParseReader under the given limits.
func ParseReaderLimits(r io.Reader, lim Limits) ([]*trace.Trace, error) {
	spans, err := ParseSpansLimits(r, lim)
	if err != nil {
		return nil, err
	}
	return trace.Group(spans), nil
}

// ParseReaderFirst is ParseReaderLimits keeping only the first n traces,
// in the order their first spans come; dropped is how many spans of other
// traces the input held. n <= 0 keeps every trace. The spans of other
// traces are dropped as each resource ends, so memory follows n traces,
// not the input. The input is read to its end all the same: a trace's
// spans may come anywhere in it (Jaeger groups an answer's spans by
// process, across traces), and only the end says that a kept trace is
// whole.
func ParseReaderFirst(r io.Reader, lim Limits, n int) (traces []*trace.Trace, dropped int, err error) {
	if n <= 0 {
		traces, err = ParseReaderLimits(r, lim)
		return traces, 0, err
	}
	first := &firstTraces{n: n, kept: map[string]bool{}}
	p := newParser(r, lexerBufSize, lim.resolved())
	p.sink = first
	_, err = p.all()
	if p.lx.lerr != nil {
		return nil, 0, p.lx.lerr
	}
	if err != nil {
		return nil, 0, err
	}
	return trace.Group(first.spans), first.dropped, nil
}

// firstTraces keeps the spans of the first n trace ids it is handed.
type firstTraces struct {
	n       int
	kept    map[string]bool
	spans   []*trace.Span
	dropped int // spans of other traces
}

func (f *firstTraces) add(spans []*trace.Span) error {
	for _, s := range spans {
		if !f.kept[s.TraceID] && len(f.kept) < f.n {
			f.kept[s.TraceID] = true
		}
		if f.kept[s.TraceID] {
			f.spans = append(f.spans, s)
			continue
		}
		f.dropped++
		*s = trace.Span{} // its slab may outlive it: keep its strings and attributes from doing so
	}
	return nil
}
