package otlp

import (
	"maps"
	"slices"
	"strconv"

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
// and key-value lists as JSON.
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
		case "intValue":
			n, err := p.integer("intValue")
			out = strconv.FormatInt(n, 10)
			return err
		case "doubleValue":
			b, err := p.scalar("doubleValue")
			if err != nil {
				return err
			}
			x, perr := strconv.ParseFloat(string(b), 64)
			if perr != nil {
				return p.valueError("doubleValue %q is not a number", b)
			}
			out = strconv.FormatFloat(x, 'g', -1, 64)
			return nil
		case "boolValue":
			b, err := p.scalar("boolValue")
			if err != nil {
				return err
			}
			x, perr := strconv.ParseBool(string(b))
			if perr != nil {
				return p.valueError("boolValue %q is not a boolean", b)
			}
			out = strconv.FormatBool(x)
			return nil
		case "arrayValue":
			var parts []byte
			_, err := p.object(func(key []byte) error {
				if string(key) != "values" {
					return p.lx.skip()
				}
				parts = append(parts, '[')
				err := p.array("array values", func() error {
					v, err := p.anyValue(false)
					if len(parts) > 1 {
						parts = append(parts, ',')
					}
					parts = appendString(parts, v)
					return err
				})
				parts = append(parts, ']')
				return err
			})
			out = string(parts)
			if out == "" {
				out = "[]"
			}
			return err
		case "kvlistValue":
			var parts []byte
			_, err := p.object(func(key []byte) error {
				if string(key) != "values" {
					return p.lx.skip()
				}
				kv, err := p.attributes(false)
				parts = append(parts, '{')
				for i, k := range slices.Sorted(maps.Keys(kv)) {
					if i > 0 {
						parts = append(parts, ',')
					}
					parts = appendString(parts, k)
					parts = append(parts, ':')
					parts = appendString(parts, kv[k])
				}
				parts = append(parts, '}')
				return err
			})
			out = string(parts)
			if out == "" {
				out = "{}"
			}
			return err
		}
		return p.lx.skip()
	})
	return out, err
}
