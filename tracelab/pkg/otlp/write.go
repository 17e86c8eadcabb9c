package otlp

import (
	"bufio"
	"io"
	"maps"
	"slices"
	"strconv"

	"tracelab/pkg/trace"
)

// Write encodes traces as one plain OTLP JSON document
// ({"resourceSpans":[...]}) that ParseReader reads back: ids in hex, times
// as decimal strings, kinds as numbers, every attribute as a stringValue
// (the model keeps attribute values as text).
//
// Spans go out in batches of whole traces, taken in the given order, as
// the collector's batch processor sends them: at least writeBatch spans a
// batch, then one resourceSpans entry per service and one scopeSpans entry
// per scope within it. A reader then finds every trace complete within its
// batch (StreamFile). Services, scopes and attribute keys are sorted so the
// output is stable. It streams, so writing a million spans needs no extra
// memory.
func Write(w io.Writer, traces []*trace.Trace) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	b := make([]byte, 0, 4096)
	b = append(b, `{"resourceSpans":[`...)
	first := true
	for len(traces) > 0 {
		n, spans := 0, 0
		for n < len(traces) && spans < writeBatch {
			spans += len(traces[n].Spans)
			n++
		}
		var err error
		if b, err = writeBatchOf(bw, b, traces[:n], first); err != nil {
			return err
		}
		traces, first = traces[n:], false
	}
	b = append(b, "]}\n"...)
	if _, err := bw.Write(b); err != nil {
		return err
	}
	return bw.Flush()
}

// writeBatch is the collector batch processor's default send_batch_size.
const writeBatch = 8192

// writeBatchOf appends the resourceSpans entries of one batch of traces to
// b, writing b out as it grows; first says whether they open the list.
func writeBatchOf(bw *bufio.Writer, b []byte, traces []*trace.Trace, first bool) ([]byte, error) {
	type group struct {
		resource map[string]string
		scopes   map[string][]*trace.Span
	}
	groups := map[string]*group{}
	for _, t := range traces {
		for _, s := range t.Spans {
			g := groups[s.Service]
			if g == nil {
				g = &group{resource: s.ResourceAttrs, scopes: map[string][]*trace.Span{}}
				groups[s.Service] = g
			}
			g.scopes[s.Scope] = append(g.scopes[s.Scope], s)
		}
	}
	for i, svc := range slices.Sorted(maps.Keys(groups)) {
		g := groups[svc]
		if i > 0 || !first {
			b = append(b, ',')
		}
		res := g.resource
		if res["service.name"] != svc {
			res = copyWith(res, "service.name", svc)
		}
		b = append(b, `{"resource":{"attributes":`...)
		b = appendAttrs(b, res)
		b = append(b, `},"scopeSpans":[`...)
		for j, scope := range slices.Sorted(maps.Keys(g.scopes)) {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"scope":{"name":`...)
			b = appendString(b, scope)
			b = append(b, `},"spans":[`...)
			for k, s := range g.scopes[scope] {
				if k > 0 {
					b = append(b, ',')
				}
				b = appendSpan(b, s)
				if len(b) > 32<<10 {
					if _, err := bw.Write(b); err != nil {
						return b, err
					}
					b = b[:0]
				}
			}
			b = append(b, `]}`...)
		}
		b = append(b, `]}`...)
	}
	return b, nil
}

func appendSpan(b []byte, s *trace.Span) []byte {
	b = append(b, `{"traceId":`...)
	b = appendString(b, s.TraceID)
	b = append(b, `,"spanId":`...)
	b = appendString(b, s.SpanID)
	if s.ParentID != "" {
		b = append(b, `,"parentSpanId":`...)
		b = appendString(b, s.ParentID)
	}
	b = append(b, `,"name":`...)
	b = appendString(b, s.Name)
	b = append(b, `,"kind":`...)
	b = strconv.AppendInt(b, int64(s.Kind), 10)
	b = append(b, `,"startTimeUnixNano":"`...)
	b = strconv.AppendInt(b, s.Start, 10)
	b = append(b, `","endTimeUnixNano":"`...)
	b = strconv.AppendInt(b, s.End, 10)
	b = append(b, `","attributes":`...)
	b = appendSpanAttrs(b, s.Attrs)
	if s.Status != trace.StatusUnset || s.StatusMessage != "" {
		b = append(b, `,"status":{"code":`...)
		b = strconv.AppendInt(b, int64(s.Status), 10)
		if s.StatusMessage != "" {
			b = append(b, `,"message":`...)
			b = appendString(b, s.StatusMessage)
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

func appendAttrs(b []byte, attrs map[string]string) []byte {
	b = append(b, '[')
	for i, k := range slices.Sorted(maps.Keys(attrs)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"key":`...)
		b = appendString(b, k)
		b = append(b, `,"value":{"stringValue":`...)
		b = appendString(b, attrs[k])
		b = append(b, `}}`...)
	}
	return append(b, ']')
}

// appendSpanAttrs is appendAttrs for a span's attributes, already sorted.
func appendSpanAttrs(b []byte, attrs trace.Attrs) []byte {
	b = append(b, '[')
	for i, kv := range attrs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"key":`...)
		b = appendString(b, kv.Key)
		b = append(b, `,"value":{"stringValue":`...)
		b = appendString(b, kv.Value)
		b = append(b, `}}`...)
	}
	return append(b, ']')
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. strconv.Quote is not JSON (it
// writes \x00), hence this small escaper. It takes bytes too, so the
// parser renders a value from the lexer's buffer without a copy.
func appendString[S string | []byte](b []byte, s S) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

func copyWith(m map[string]string, k, v string) map[string]string {
	c := make(map[string]string, len(m)+1)
	for kk, vv := range m {
		c[kk] = vv
	}
	c[k] = v
	return c
}
