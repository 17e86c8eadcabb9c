package otlp

import (
	"slices"
	"strconv"
	"strings"

	"tracelab/pkg/trace"
)

// This file decodes the span itself: ids, times, kind, status and
// attributes, accepting every encoding producers are known to use.

// span reads one span. It is the hot loop of the package, written without
// callbacks. Spans without a trace or span id cannot be placed in any tree
// and are dropped.
func (p *parser) span() error {
	if p.lx.peek() == 'n' {
		return p.null("a span")
	}
	if err := p.lx.expect('{'); err != nil {
		return err
	}
	s := &trace.Span{}
	var traceID, spanID string
	for first := true; ; first = false {
		key, more, err := p.nextKey(first)
		if err != nil {
			return err
		}
		if !more {
			break
		}
		switch string(key) {
		case "traceId":
			traceID, err = p.id("traceId", true)
		case "spanId":
			spanID, err = p.id("spanId", false)
		case "parentSpanId":
			s.ParentID, err = p.id("parentSpanId", false)
		case "name":
			s.Name, err = p.internedString("name")
		case "kind":
			var k int64
			k, err = p.enum("kind", func(name string) (int64, bool) { k, ok := trace.ParseKind(name); return int64(k), ok })
			s.Kind = trace.Kind(k)
		case "startTimeUnixNano":
			s.Start, err = p.integer("startTimeUnixNano")
		case "endTimeUnixNano":
			s.End, err = p.integer("endTimeUnixNano")
		case "attributes":
			s.Attrs, err = p.attributes(false)
		case "status":
			err = p.status(s)
		default:
			err = p.lx.skip()
		}
		if err != nil {
			return err
		}
	}
	if traceID == "" || spanID == "" {
		return nil
	}
	s.TraceID, s.SpanID = traceID, spanID
	if len(p.spans) >= p.lim.MaxSpans {
		return p.limitError("span count", p.lim.MaxSpans, "--max-spans")
	}
	n := p.perTrace[traceID] + 1
	if n > p.lim.MaxSpansPerTrace {
		return p.limitError("spans per trace (trace "+traceID+")", p.lim.MaxSpansPerTrace, "--max-trace-spans")
	}
	p.perTrace[traceID] = n
	if s.Attrs == nil {
		s.Attrs = map[string]string{}
	}
	p.spans = append(p.spans, s)
	return nil
}

func (p *parser) status(s *trace.Span) error {
	_, err := p.object(func(key []byte) error {
		switch string(key) {
		case "code":
			c, err := p.enum("status code", func(name string) (int64, bool) { c, ok := trace.ParseStatusCode(name); return int64(c), ok })
			s.Status = trace.StatusCode(c)
			return err
		case "message":
			var err error
			s.StatusMessage, err = p.str("status message")
			return err
		}
		return p.lx.skip()
	})
	return err
}

// attributes reads [{"key":...,"value":{...}}, ...] into a map with every
// value rendered as text (see anyValue).
func (p *parser) attributes(internValues bool) (map[string]string, error) {
	m := make(map[string]string, 8)
	err := p.array("attributes", func() error {
		var k, v string
		_, err := p.object(func(key []byte) error {
			var err error
			switch string(key) {
			case "key":
				k, err = p.internedString("attribute key")
			case "value":
				v, err = p.anyValue(internValues)
			default:
				err = p.lx.skip()
			}
			return err
		})
		if k != "" {
			m[k] = v
		}
		return err
	})
	return m, err
}

// anyValue renders an OTLP AnyValue as text: strings as they are, ints in
// decimal, doubles in the shortest form, booleans as true/false, arrays
// and key-value lists as JSON (see appendValue).
func (p *parser) anyValue(intern bool) (string, error) {
	out := ""
	_, err := p.object(func(key []byte) error {
		switch string(key) {
		case "stringValue", "bytesValue":
			b, err := p.lx.stringBytes()
			if err != nil {
				return p.typeError("a string value", err)
			}
			if intern || len(b) <= 16 { // short values repeat: methods, ports, systems
				out = p.intern(b)
			} else {
				out = string(b)
			}
			return nil
		case "intValue", "doubleValue", "boolValue":
			b, err := p.scalarValue(p.val[:0], key)
			p.val = b
			out = string(b)
			return err
		case "arrayValue", "kvlistValue":
			p.valStart = 0
			b, err := p.container(p.val[:0], key)
			p.val = b[:0]
			out = string(b)
			return err
		}
		return p.lx.skip()
	})
	return out, err
}

// appendValue appends an AnyValue nested in an array or a kvlist as JSON:
// scalars as JSON strings (as they read at the top level: an intValue
// becomes "2"), arrays and kvlists as JSON arrays and objects, built in
// place. Building each level in place, rather than quoting the text of
// the level below, keeps the output linear in the input: quoting doubled
// the backslashes at every level, and 30 levels took gigabytes.
func (p *parser) appendValue(dst []byte) ([]byte, error) {
	start := len(dst)
	isObj, err := p.object(func(key []byte) error {
		// A value object with several members reads as its last one, as
		// at the top level.
		dst = dst[:start]
		var err error
		switch string(key) {
		case "stringValue", "bytesValue":
			var b []byte
			b, err = p.lx.stringBytes()
			if err != nil {
				return p.typeError("a string value", err)
			}
			dst = appendString(dst, b)
		case "intValue", "doubleValue", "boolValue":
			dst = append(dst, '"')
			dst, err = p.scalarValue(dst, key)
			dst = append(dst, '"')
		case "arrayValue", "kvlistValue":
			dst, err = p.container(dst, key)
		default:
			return p.lx.skip()
		}
		if err == nil {
			err = p.checkValueSize(dst)
		}
		return err
	})
	if err == nil && (!isObj || len(dst) == start) {
		dst = append(dst, `""`...)
	}
	return dst, err
}

// scalarValue appends the text of an intValue, doubleValue or boolValue.
func (p *parser) scalarValue(dst []byte, key []byte) ([]byte, error) {
	switch string(key) {
	case "intValue":
		n, err := p.integer("intValue")
		return strconv.AppendInt(dst, n, 10), err
	case "doubleValue":
		b, err := p.scalar("doubleValue")
		if err != nil {
			return dst, err
		}
		x, perr := strconv.ParseFloat(string(b), 64)
		if perr != nil {
			return dst, p.valueError("doubleValue %q is not a number", b)
		}
		return strconv.AppendFloat(dst, x, 'g', -1, 64), nil
	default: // boolValue
		b, err := p.scalar("boolValue")
		if err != nil {
			return dst, err
		}
		x, perr := strconv.ParseBool(string(b))
		if perr != nil {
			return dst, p.valueError("boolValue %q is not a boolean", b)
		}
		return strconv.AppendBool(dst, x), nil
	}
}

// container appends an arrayValue or kvlistValue as JSON, one level
// deeper; past MaxDepth it fails before recursing.
func (p *parser) container(dst []byte, key []byte) ([]byte, error) {
	if p.depth >= p.lim.MaxDepth {
		return dst, p.limitError("attribute nesting depth (arrayValue and kvlistValue levels)", p.lim.MaxDepth, "--max-attr-depth")
	}
	p.depth++
	defer func() { p.depth-- }()
	if string(key) == "arrayValue" {
		return p.appendArray(dst)
	}
	return p.appendKVList(dst)
}

// appendArray appends {"values":[...]} as a JSON array.
func (p *parser) appendArray(dst []byte) ([]byte, error) {
	start := len(dst)
	dst = append(dst, '[')
	_, err := p.object(func(key []byte) error {
		if string(key) != "values" {
			return p.lx.skip()
		}
		dst = append(dst[:start], '[') // the last "values" wins
		return p.array("array values", func() error {
			if len(dst) > start+1 {
				dst = append(dst, ',')
			}
			var err error
			dst, err = p.appendValue(dst)
			return err
		})
	})
	return append(dst, ']'), err
}

// kvEntry is one member of a kvlist being rendered: its value's JSON is
// at [lo:hi] of the render buffer.
type kvEntry struct {
	key    string
	lo, hi int
}

// appendKVList appends {"values":[{"key":...,"value":...},...]} as a JSON
// object with sorted keys, the last of repeated keys winning and empty
// keys dropped, as attributes reads them.
func (p *parser) appendKVList(dst []byte) ([]byte, error) {
	start := len(dst)
	var entries []kvEntry
	_, err := p.object(func(key []byte) error {
		if string(key) != "values" {
			return p.lx.skip()
		}
		dst, entries = dst[:start], entries[:0]
		return p.array("kvlist values", func() error {
			e := kvEntry{lo: -1}
			_, err := p.object(func(key []byte) error {
				var err error
				switch string(key) {
				case "key":
					e.key, err = p.internedString("attribute key")
				case "value":
					e.lo = len(dst)
					dst, err = p.appendValue(dst)
					e.hi = len(dst)
				default:
					err = p.lx.skip()
				}
				return err
			})
			if e.key != "" {
				if e.lo < 0 { // no value: the empty string, as attributes has it
					e.lo = len(dst)
					dst = append(dst, `""`...)
					e.hi = len(dst)
				}
				entries = append(entries, e)
			}
			return err
		})
	})
	if err != nil {
		return dst, err
	}
	// The values were rendered in input order; the object is written in
	// key order from a copy of them. Each level copies its own bytes once.
	vals := append([]byte(nil), dst[start:]...)
	slices.SortStableFunc(entries, func(a, b kvEntry) int { return strings.Compare(a.key, b.key) })
	dst = append(dst[:start], '{')
	for i, e := range entries {
		if i+1 < len(entries) && entries[i+1].key == e.key {
			continue // a later one wins
		}
		if len(dst) > start+1 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, e.key)
		dst = append(dst, ':')
		dst = append(dst, vals[e.lo-start:e.hi-start]...)
	}
	dst = append(dst, '}')
	return dst, p.checkValueSize(dst)
}

// checkValueSize enforces MaxValueBytes on the value being rendered.
func (p *parser) checkValueSize(dst []byte) error {
	if len(dst)-p.valStart > p.lim.MaxValueBytes {
		return p.limitError("value size (bytes of one attribute value as text)", p.lim.MaxValueBytes, "--max-attr-bytes")
	}
	return nil
}

func (p *parser) limitError(limit string, max int, flag string) error {
	return &LimitError{Limit: limit, Max: int64(max), Flag: flag, Offset: p.lx.offset()}
}
