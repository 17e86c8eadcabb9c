package otlp

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"tracelab/pkg/trace"
)

// This file decodes the span itself: ids, times, kind, status and
// attributes, accepting every encoding producers are known to use.

// span reads one span. It is the hot loop of the package, written without
// callbacks. Spans without a trace or span id cannot be placed in any tree
// and are dropped.
//
// It allocates little per span: the Span comes from a slab, and the span's
// own strings (ids, long attribute values) are collected in p.own and made
// into one string when the span ends, each field a substring of it.
func (p *parser) span() error {
	if p.lx.peek() == 'n' {
		return p.null("a span")
	}
	if err := p.lx.expect('{'); err != nil {
		return err
	}
	if len(p.slab) == 0 {
		p.slab = make([]trace.Span, spanSlab)
	}
	s := &p.slab[0]
	p.own, p.attrs = p.own[:0], p.attrs[:0]
	var traceID string
	var spanID, parentID strRef
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
			spanID, err = p.idRef("spanId")
		case "parentSpanId":
			parentID, err = p.idRef("parentSpanId")
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
			err = p.spanAttributes()
		case "status":
			err = p.status(s)
		default:
			err = p.lx.skip()
		}
		if err != nil {
			return err
		}
	}
	if traceID == "" || spanID.empty() {
		*s = trace.Span{} // the slot is reused by the next span
		return nil
	}
	if p.count >= p.lim.MaxSpans {
		return p.limitError("span count", p.lim.MaxSpans, "--max-spans")
	}
	if traceID != p.lastTrace { // the map is read once per run of a trace's spans
		if p.lastTrace != "" {
			p.perTrace[p.lastTrace] = p.lastCount
		}
		p.lastTrace, p.lastCount = traceID, p.perTrace[traceID]
	}
	if p.lastCount++; p.lastCount > p.lim.MaxSpansPerTrace {
		return p.limitError("spans per trace (trace "+traceID+")", p.lim.MaxSpansPerTrace, "--max-trace-spans")
	}
	p.slab = p.slab[1:]

	own := string(p.own)
	s.TraceID, s.SpanID, s.ParentID = traceID, spanID.in(own), parentID.in(own)
	s.Attrs = p.sortedAttrs(own)
	p.spans = append(p.spans, s)
	p.count++
	return nil
}

// sortedAttrs returns p.attrs as trace.Attrs: sorted by key, a repeated
// key's last value winning. The pairs of many spans share one block of
// memory: one allocation per kvBlock pairs instead of one per span, and
// the block is alive as long as the spans are anyway.
//
// Spans of one instrumentation carry the same keys in the same order, so
// the order found for one span is kept and reused while the next spans'
// keys are the same strings (interned: compared by address), which spared
// most of the sorting's string comparisons.
func (p *parser) sortedAttrs(own string) trace.Attrs {
	a := p.attrs
	if !sameKeys(a, p.lastKeys) {
		p.lastKeys = p.lastKeys[:0]
		order := p.lastOrder[:0]
		for i := range a {
			p.lastKeys = append(p.lastKeys, a[i].key)
			order = append(order, int32(i))
		}
		for i := 1; i < len(order); i++ { // insertion sort, stable: few keys, often in order
			for j := i; j > 0 && a[order[j]].key < a[order[j-1]].key; j-- {
				order[j], order[j-1] = order[j-1], order[j]
			}
		}
		n := 0
		for i := range order {
			if i+1 < len(order) && a[order[i+1]].key == a[order[i]].key {
				continue // a later one wins
			}
			order[n] = order[i]
			n++
		}
		p.lastOrder = order[:n]
	}
	n := len(p.lastOrder)
	if n == 0 {
		return nil
	}
	if cap(p.kvs)-len(p.kvs) < n {
		p.kvs = make([]trace.KeyValue, 0, max(kvBlock, n))
	}
	lo := len(p.kvs)
	for _, i := range p.lastOrder {
		r := a[i]
		p.kvs = append(p.kvs, trace.KeyValue{Key: r.key, Value: r.val.in(own)})
	}
	return p.kvs[lo:len(p.kvs):len(p.kvs)] // capped: appending to one span's attrs copies them
}

// sameKeys reports whether a's keys are keys, string for string: the same
// memory, as interning makes equal keys. Keys equal in text but not in
// memory (past the intern table's bound) only cost a sort.
func sameKeys(a []attrRef, keys []string) bool {
	if len(a) != len(keys) {
		return false
	}
	for i := range a {
		if len(a[i].key) != len(keys[i]) || unsafe.StringData(a[i].key) != unsafe.StringData(keys[i]) {
			return false
		}
	}
	return true
}

// kvBlock is how many attribute pairs are allocated at once.
const kvBlock = 1024

// spanSlab is how many Spans are allocated at once. At 256 (about 47 KB)
// a slab is past the allocator's small sizes, so its pointer layout is
// recorded once rather than written word by word as for a small object,
// which took 3% of the parse at 64. Not more, because a slab stays in
// memory as long as any of its spans does.
const spanSlab = 256

// strRef is a string of the span being read: s when already made
// (interned, or in a rare encoding), else the bytes [lo:hi] of p.own.
type strRef struct {
	s      string
	lo, hi int
}

func (r strRef) empty() bool { return r.hi == r.lo && r.s == "" }

// in returns the string, given p.own made into a string.
func (r strRef) in(own string) string {
	if r.hi == 0 {
		return r.s
	}
	return own[r.lo:r.hi]
}

func (p *parser) ownRef(b []byte) strRef {
	lo := len(p.own)
	p.own = append(p.own, b...)
	return strRef{lo: lo, hi: len(p.own)}
}

// idRef reads a span or parent span id; see normalizeID.
func (p *parser) idRef(what string) (strRef, error) {
	if p.lx.peek() == 'n' {
		return strRef{}, p.null(what)
	}
	b, err := p.lx.stringBytes()
	if err != nil {
		return strRef{}, p.typeError(what, err)
	}
	if isLowerHex(b) && !allZero(b) { // already normal: most producers
		return p.ownRef(b), nil
	}
	return strRef{s: normalizeID(string(b))}, nil
}

// attrRef is an attribute of the span being read.
type attrRef struct {
	key string
	val strRef
}

// spanAttributes reads a span's attributes into p.attrs, as attributes
// reads them into a map. A second "attributes" member replaces the first.
func (p *parser) spanAttributes() error {
	p.attrs = p.attrs[:0]
	return p.array("attributes", func() error {
		if a, ok := p.compactStringAttr(); ok {
			p.attrs = append(p.attrs, a)
			return nil
		}
		var a attrRef
		_, err := p.object(func(key []byte) error {
			var err error
			switch string(key) {
			case "key":
				a.key, err = p.internedString("attribute key")
			case "value":
				a.val, err = p.valueRef(false, true)
			default:
				err = p.lx.skip()
			}
			return err
		})
		if a.key != "" {
			p.attrs = append(p.attrs, a)
		}
		return err
	})
}

// compactStringAttr reads an attribute written as every OTLP writer the
// lab has seen writes string attributes, {"key":"K","value":{"stringValue":"V"}}
// with no space, no escape and a non-empty key, when it lies in the
// lexer's buffer whole. It reads it as spanAttributes would, without the
// generic path's calls per member; it reports false, having consumed
// nothing, for anything else, which the generic path then reads.
func (p *parser) compactStringAttr() (attrRef, bool) {
	l := p.lx
	b := l.buf[l.pos:l.end]
	const keyOpen, valueOpen, valueClose = `{"key":"`, `","value":{"stringValue":"`, `"}}`
	if !bytes.HasPrefix(b, []byte(keyOpen)) {
		return attrRef{}, false
	}
	b = b[len(keyOpen):]
	k := plainStringLen(b)
	if k <= 0 || k > l.maxToken || !bytes.HasPrefix(b[k:], []byte(valueOpen)) {
		return attrRef{}, false
	}
	key := b[:k]
	b = b[k+len(valueOpen):]
	v := plainStringLen(b)
	if v < 0 || v > l.maxToken || !bytes.HasPrefix(b[v:], []byte(valueClose)) {
		return attrRef{}, false
	}
	val := b[:v]
	l.pos += len(keyOpen) + k + len(valueOpen) + v + len(valueClose)
	a := attrRef{key: p.intern(key)}
	if len(val) <= 16 { // as valueRef: short values repeat
		a.val = strRef{s: p.intern(val)}
	} else {
		a.val = p.ownRef(val)
	}
	return a, true
}

// plainStringLen is the length of the string content at the start of b,
// up to its closing quote, or -1 when b holds no closing quote or the
// content has an escape or a control character.
func plainStringLen(b []byte) int {
	for i, c := range b {
		if !plainStringByte[c] {
			if c == '"' {
				return i
			}
			return -1
		}
	}
	return -1
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
	r, err := p.valueRef(intern, false)
	return r.s, err
}

// valueRef is anyValue; with own, a value that is not interned goes to
// p.own instead of a string of its own.
func (p *parser) valueRef(intern, own bool) (strRef, error) {
	var out strRef
	keep := func(b []byte) strRef {
		if own {
			return p.ownRef(b)
		}
		return strRef{s: string(b)}
	}
	_, err := p.object(func(key []byte) error {
		switch string(key) {
		case "stringValue", "bytesValue":
			b, err := p.lx.stringBytes()
			if err != nil {
				return p.typeError("a string value", err)
			}
			if intern || len(b) <= 16 { // short values repeat: methods, ports, systems
				out = strRef{s: p.intern(b)}
			} else {
				out = keep(b)
			}
			return nil
		case "intValue", "doubleValue", "boolValue":
			b, err := p.scalarValue(p.val[:0], key)
			p.val = b[:0]
			out = keep(b)
			return err
		case "arrayValue", "kvlistValue":
			p.valStart = 0
			b, err := p.container(p.val[:0], key)
			p.val = b[:0]
			out = keep(b)
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
