// Package otlp reads traces in OTLP JSON, the encoding every backend the lab
// talks to can produce:
//
//   - Jaeger api/v3 (GET /api/v3/traces/{id} and /api/v3/traces):
//     {"result":{"resourceSpans":[...]}}, possibly several such objects
//     concatenated in one body when many traces are returned;
//   - plain OTLP, as written by the collector or an SDK exporter:
//     {"resourceSpans":[...]};
//   - Tempo trace by id (GET /api/traces/{id}): {"batches":[...]};
//   - one bare ResourceSpans object per document, as the OpenTelemetry
//     Java agent's logging-otlp exporter prints them, one per line:
//     {"resource":{...},"scopeSpans":[...]}.
//
// Producers disagree on details and all variants are accepted: ids in hex
// or base64, 64-bit integers as strings or numbers, span kinds and status
// codes as numbers or enum names, "scopeSpans" or the older
// "instrumentationLibrarySpans".
//
// The input is read as a stream of JSON values and spans are decoded one at
// a time, so memory grows with the spans kept, not with the size of the
// file: a file with a million spans never sits in memory as text.
package otlp

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"tracelab/pkg/trace"
)

// FormatError means the input is not OTLP JSON in any accepted form. Its
// message is a single line that says what was expected.
type FormatError struct{ Msg string }

func (e *FormatError) Error() string { return e.Msg }

const expectedForms = `expected "resourceSpans", "result.resourceSpans", "batches" or a bare "scopeSpans" at the top level`

// ParseReader reads OTLP JSON from r and groups the spans into traces.
// Spans of one trace spread over several documents or resources are merged,
// and a span seen twice is kept once. It applies DefaultLimits; see
// ParseReaderLimits.
func ParseReader(r io.Reader) ([]*trace.Trace, error) {
	spans, err := ParseSpans(r)
	if err != nil {
		return nil, err
	}
	return trace.Group(spans), nil
}

// Parse is ParseReader: it streams too. For a byte slice, pass
// bytes.NewReader(b).
func Parse(r io.Reader) ([]*trace.Trace, error) { return ParseReader(r) }

// ReadFile parses a trace file, such as a run's <variant>-traces.json.
func ReadFile(path string) ([]*trace.Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseReader(f)
}

// ParseSpans reads every JSON value in r (one document, or many
// concatenated) and returns their spans in input order, without grouping.
// It applies DefaultLimits.
func ParseSpans(r io.Reader) ([]*trace.Span, error) { return ParseSpansLimits(r, Limits{}) }

// ParseSpansLimits is ParseSpans under the given limits; going past one is
// a *LimitError.
func ParseSpansLimits(r io.Reader, lim Limits) ([]*trace.Span, error) {
	return parseSpans(r, lexerBufSize, lim.resolved())
}

func parseSpans(r io.Reader, bufSize int, lim Limits) ([]*trace.Span, error) {
	p := newParser(r, bufSize, lim)
	spans, err := p.all()
	if p.lx.lerr != nil {
		// Whatever the parser made of the input cut short, the limit is
		// the cause.
		return nil, p.lx.lerr
	}
	return spans, err
}

func newParser(r io.Reader, bufSize int, lim Limits) *parser {
	return &parser{lx: newLexer(r, bufSize, lim), strs: make(map[string]string), lim: lim, perTrace: make(map[string]int)}
}

func (p *parser) all() ([]*trace.Span, error) {
	p.skipBOM()
	docs := 0
	for {
		if p.lx.peek() == 0 {
			if p.lx.rerr != nil {
				return nil, fmt.Errorf("reading input: %v", p.lx.rerr)
			}
			break
		}
		docs++
		if p.lx.peek() != '{' {
			what := p.lx.describe()
			if what[0] == '\'' { // not the start of any JSON value
				return nil, &FormatError{fmt.Sprintf("not OTLP JSON: invalid JSON at byte %d: unexpected %s; %s", p.lx.offset(), what, expectedForms)}
			}
			return nil, &FormatError{fmt.Sprintf("not OTLP JSON: document %d is %s, not an object; %s", docs, what, expectedForms)}
		}
		if err := p.document(docs); err != nil {
			return nil, err
		}
	}
	if docs == 0 {
		return nil, &FormatError{"not OTLP JSON: the input is empty; " + expectedForms}
	}
	return p.spans, nil
}

type parser struct {
	lx     *lexer
	key    []byte // the current object key, see nextKey
	spans  []*trace.Span
	count  int               // spans read, for MaxSpans
	sink   spanSink          // when set, spans go there as each resource ends (see flush)
	bare   bool              // the document being read is a bare ResourceSpans
	strs   map[string]string // interned strings: keys, names, ids shared by many spans
	recent [509]string       // the strings interned last, see intern

	lim       Limits         // resolved: no zero or negative fields
	perTrace  map[string]int // spans read per trace id, for MaxSpansPerTrace, but for:
	lastTrace string         // the trace of the last span read
	lastCount int            // and its spans read
	depth     int            // arrayValue/kvlistValue levels open, for MaxDepth
	val       []byte         // scratch for rendering arrays and kvlists
	valStart  int            // where the attribute value being rendered starts in val

	// The span being read (see span): its Span, its own strings' bytes
	// and its attributes.
	slab  []trace.Span
	own   []byte
	attrs []attrRef
	kvs   []trace.KeyValue // see sortedAttrs
	// The keys of the last span whose attributes were sorted, as read, and
	// the order sortedAttrs took them in (see sortedAttrs).
	lastKeys  []string
	lastOrder []int32
}

// forgetTrace drops what the parser counts of a trace handed over whole,
// so that a stream keeps no count per trace read: a span of the trace
// read later stops the stream anyway (errSpread).
func (p *parser) forgetTrace(id string) {
	delete(p.perTrace, id)
	if p.lastTrace == id {
		p.lastTrace, p.lastCount = "", 0
	}
}

func (p *parser) skipBOM() {
	if p.lx.end < 3 {
		p.lx.more(0)
	}
	if bytes.HasPrefix(p.lx.buf[p.lx.pos:p.lx.end], []byte("\xef\xbb\xbf")) {
		p.lx.pos += 3
	}
}

// document reads one top-level object.
func (p *parser) document(n int) error {
	found := false
	hint := ""
	bare := resourceSpans{first: len(p.spans)}
	_, err := p.object(func(key []byte) error {
		switch string(key) {
		case "resourceSpans", "batches":
			found = true
			return p.resourceSpansList()
		case "resource", "scopeSpans", "instrumentationLibrarySpans":
			found, bare.seen, p.bare = true, true, true
			return p.resourceSpansMember(key, &bare)
		case "result", "trace":
			// Jaeger api/v3 wraps OTLP in "result"; Tempo's v2 API in "trace".
			ok, err := p.wrapper()
			found = found || ok
			return err
		case "error":
			return p.apiError()
		case "data":
			hint = ` (this looks like Jaeger's /api/traces format; fetch /api/v3/traces instead)`
		}
		return p.lx.skip()
	})
	if err != nil {
		return err
	}
	if bare.seen {
		p.applyResource(bare)
		p.bare = false
		if err := p.flush(); err != nil {
			return err
		}
	}
	if !found {
		return &FormatError{fmt.Sprintf("not OTLP JSON: document %d: %s%s", n, expectedForms, hint)}
	}
	return nil
}

// wrapper reads {"resourceSpans":[...]} (or {"batches":[...]}) nested under
// a wrapper key. An empty or null wrapper is an empty result, not an error.
func (p *parser) wrapper() (bool, error) {
	found, empty := false, true
	isObj, err := p.object(func(key []byte) error {
		empty = false
		switch string(key) {
		case "resourceSpans", "batches":
			found = true
			return p.resourceSpansList()
		}
		return p.lx.skip()
	})
	if !isObj {
		return err == nil, err
	}
	return found || empty, err
}

func (p *parser) apiError() error {
	msg := ""
	_, err := p.object(func(key []byte) error {
		if string(key) == "message" && p.lx.peek() == '"' {
			b, err := p.lx.stringBytes()
			msg = string(b)
			return err
		}
		return p.lx.skip()
	})
	if err != nil {
		return err
	}
	if msg == "" {
		msg = "no message"
	}
	return &FormatError{fmt.Sprintf("the trace API returned an error instead of traces: %s", oneLine(msg))}
}

func (p *parser) resourceSpansList() error {
	return p.array("resourceSpans", p.resourceSpans)
}

// spanSink takes the spans of each resource as it ends, in place of
// p.spans: the assembler of StreamFile, the first traces of
// ParseReaderFirst. The slice is reused after add returns.
type spanSink interface {
	add(spans []*trace.Span) error
}

// resourceSpans is one ResourceSpans object being read: its spans are
// p.spans[first:] once it is done.
type resourceSpans struct {
	first int
	attrs map[string]string
	seen  bool
}

// resourceSpans reads one entry of resourceSpans/batches. Members may come
// in any order, so the resource is applied to this entry's spans at the end.
func (p *parser) resourceSpans() error {
	rs := resourceSpans{first: len(p.spans)}
	_, err := p.object(func(key []byte) error { return p.resourceSpansMember(key, &rs) })
	if err != nil {
		return err
	}
	p.applyResource(rs)
	return p.flush()
}

// flush hands the spans read so far to the sink, if any. Their resource
// is applied by then: flush runs at the end of a ResourceSpans, except
// inside a bare one, whose resource may come after its spans.
func (p *parser) flush() error {
	if p.sink == nil || p.bare {
		return nil
	}
	err := p.sink.add(p.spans)
	clear(p.spans)
	p.spans = p.spans[:0]
	return err
}

// resourceSpansMember reads the member key of a ResourceSpans object.
func (p *parser) resourceSpansMember(key []byte, rs *resourceSpans) error {
	switch string(key) {
	case "resource":
		_, err := p.object(func(key []byte) error {
			if string(key) == "attributes" {
				var err error
				rs.attrs, err = p.attributes(true)
				return err
			}
			return p.lx.skip()
		})
		return err
	case "scopeSpans", "instrumentationLibrarySpans":
		return p.array("scopeSpans", p.scopeSpans)
	}
	return p.lx.skip()
}

func (p *parser) applyResource(rs resourceSpans) {
	if rs.attrs == nil {
		rs.attrs = map[string]string{}
	}
	service := rs.attrs["service.name"]
	for _, s := range p.spans[rs.first:] {
		s.Service = service
		s.ResourceAttrs = rs.attrs
	}
}

func (p *parser) scopeSpans() error {
	first := len(p.spans)
	scope := ""
	_, err := p.object(func(key []byte) error {
		switch string(key) {
		case "scope", "instrumentationLibrary":
			_, err := p.object(func(key []byte) error {
				if string(key) == "name" {
					var err error
					scope, err = p.internedString("scope name")
					return err
				}
				return p.lx.skip()
			})
			return err
		case "spans":
			return p.array("spans", p.span)
		}
		return p.lx.skip()
	})
	for _, s := range p.spans[first:] {
		s.Scope = scope
	}
	return err
}

func oneLine(s string) string {
	return string(bytes.Join(bytes.Fields([]byte(s)), []byte(" ")))
}
