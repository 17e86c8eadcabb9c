package otlp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"

	"tracelab/pkg/trace"
)

// StreamFile reads the OTLP JSON file at path and hands its traces to a
// sink in batches, each trace as soon as its last span has been read, so
// that a caller done with a trace when the sink returns holds only the
// traces still open, not the file. The sink runs on a goroutine of its
// own, one batch at a time. newSink makes it; it is called once, or twice
// when the file turns out not to be readable in one pass (below).
//
// Knowing when a trace is complete takes a first pass: a scan for the
// "traceId" keys, without parsing, counts each trace's spans (about a
// tenth of the parse's CPU on a million spans). A trace whose count is never
// reached, because the scan also counted a link's traceId or a span the
// parser drops, is handed over at the end, with the rest, in Group's
// order. Only a key or id the scan cannot see (written with \u escapes)
// can make it count too few; a span of a trace already handed over then
// shows it, and the file is read again, whole, into a fresh sink.
//
// How much stays open depends on the file: the collector's file exporter
// writes a batch of spans at a time, and Write writes traces in batches
// of whole traces, so a trace is complete within its batch. A file that
// lists all spans by service completes its traces only at the end.
//
// Both passes stop at the next read once ctx is done, with ctx's error.
func StreamFile(ctx context.Context, path string, lim Limits, newSink func() func([]*trace.Trace)) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	f := &seekReader{WithContext(ctx, file), file}
	counts, err := countSpans(f)
	if err != nil {
		return fmt.Errorf("reading input: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	lim = lim.resolved()
	// The sink reads one batch while the parser reads the next: on two
	// cores that nearly halves the wall time, for little more CPU.
	batches := make(chan []*trace.Trace, 1)
	sunk := make(chan struct{})
	go func(sink func([]*trace.Trace)) {
		for b := range batches {
			sink(b)
		}
		close(sunk)
	}(newSink())
	p := newParser(f, lexerBufSize, lim)
	a := &assembler{expect: counts, open: map[string][]*trace.Span{},
		each: func(b []*trace.Trace) { batches <- b }, forget: p.forgetTrace}
	p.sink = a
	_, err = p.all()
	if p.lx.lerr != nil {
		err = p.lx.lerr
	} else if err == nil {
		a.finish()
	}
	close(batches)
	<-sunk
	if !errors.Is(err, errSpread) {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	traces, err := ParseReaderLimits(f, lim)
	if err != nil {
		return err
	}
	newSink()(traces)
	return nil
}

// WithContext returns a reader of r that fails with ctx's error at the
// first read after ctx is done, so that a parse of a long input stops on
// an interrupt. A read already blocked in r (a pipe that stays open) is not
// woken: a caller that must not wait for it reads on a goroutine of its
// own and abandons it.
func WithContext(ctx context.Context, r io.Reader) io.Reader { return &ctxReader{ctx, r} }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(b)
}

// seekReader reads through one reader and seeks another, the same file.
type seekReader struct {
	io.Reader
	io.Seeker
}

// errSpread is a span of a trace already handed over.
var errSpread = errors.New("a trace's spans are spread further than the first pass counted")

// streamBatch is how many spans of completed traces the assembler gathers
// before handing them over: enough traces for the sink to share among
// cores (analyze.Analyzer computes their critical paths in parallel).
const streamBatch = 8192

// assembler gathers the spans the parser reads into traces, and hands each
// trace over once it holds as many spans as the first pass counted.
type assembler struct {
	// expect is the spans per trace from countSpans, handedOver once the
	// trace is. It is the one thing kept per trace of the input, so it is
	// keyed by a hash of the id (12 bytes an entry, not the id's 48): two
	// ids of one hash share a count that neither reaches alone, so both
	// are handed over at the end, whole, as Group makes them.
	expect map[uint64]int32
	open   map[string][]*trace.Span
	forget func(id string) // called as a trace is handed over
	ready  []*trace.Trace
	spans  int // in ready
	each   func([]*trace.Trace)
}

func (a *assembler) add(spans []*trace.Span) error {
	// Spans come in runs of one trace (a scope's spans of one request),
	// so the maps are read once per run rather than once per span.
	for len(spans) > 0 {
		id := spans[0].TraceID
		n := 1
		for n < len(spans) && spans[n].TraceID == id {
			n++
		}
		run := spans[:n]
		spans = spans[n:]
		h := idHash(id)
		want := a.expect[h]
		if want == handedOver {
			return errSpread
		}
		l := append(a.open[id], run...)
		if int32(len(l)) < want {
			a.open[id] = l
			continue
		}
		delete(a.open, id)
		a.expect[h] = handedOver
		a.forget(id)
		a.ready = append(a.ready, trace.New(id, l))
		a.spans += len(l)
	}
	if a.spans >= streamBatch {
		a.each(a.ready)
		a.ready, a.spans = nil, 0
	}
	return nil
}

// handedOver is the count of a trace handed over.
const handedOver = -1

// idSeed keys idHash, for the life of the process.
var idSeed = maphash.MakeSeed()

func idHash(id string) uint64 { return maphash.String(idSeed, id) }

// finish hands over what is left: the last batch, and the traces whose
// count was never reached.
func (a *assembler) finish() {
	var rest []*trace.Span
	for _, l := range a.open {
		rest = append(rest, l...)
	}
	a.open = nil
	if batch := append(a.ready, trace.Group(rest)...); len(batch) > 0 {
		a.each(batch)
	}
}

// traceIDKey is how countSpans finds a span's trace id. It looks for the
// key's capital I first: bytes.IndexByte skips ahead fastest on a rare
// byte, and a capital I comes about three times a span.
var traceIDKey = []byte(`"traceId"`)

const traceIDRare = len(`"trace`) // the index of the I in traceIDKey

// countSpans counts the spans per trace id in an OTLP JSON document by
// finding every "traceId" key followed by a string, without parsing the
// rest. Inside a JSON string a quote is escaped, so the key's bytes
// cannot occur there. Ids are normalized as the parser normalizes them.
func countSpans(r io.Reader) (map[uint64]int32, error) { return countSpansBuf(r, 1<<20) }

// countSpansWindow is what must follow a match in the buffer for it to be
// read there: the colon, spaces and an id as long as any producer writes.
const countSpansWindow = 256

func countSpansBuf(r io.Reader, size int) (map[uint64]int32, error) {
	const window = countSpansWindow
	buf := make([]byte, size)
	counts := map[uint64]int32{}
	var last []byte
	var run int32
	flushRun := func() {
		if run > 0 {
			if isLowerHex(last) && !allZero(last) { // normal already, as the parser finds most
				counts[maphash.Bytes(idSeed, last)] += run
			} else {
				counts[idHash(normalizeID(unescaped(string(last))))] += run
			}
			run = 0
		}
	}
	n := 0
	for {
		m, err := io.ReadFull(r, buf[n:])
		n += m
		eof := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !eof {
			return nil, err
		}
		data := buf[:n]
		next := max(0, n-len(traceIDKey)+1) // where the next read's search resumes
		for i := 0; ; {
			j := bytes.IndexByte(data[i:], traceIDKey[traceIDRare])
			if j < 0 {
				break
			}
			start := i + j - traceIDRare
			end := start + len(traceIDKey)
			if !eof && n-end < window {
				next = max(0, start)
				break
			}
			if start >= 0 && end <= n && bytes.Equal(data[start:end], traceIDKey) {
				if id, ok := stringAfterKey(data[end:]); ok {
					// Runs of one id are counted before they touch the map.
					if !bytes.Equal(id, last) {
						flushRun()
						last = append(last[:0], id...)
					}
					run++
				}
			}
			i = start + traceIDRare + 1
		}
		if eof {
			break
		}
		n = copy(buf, data[next:])
	}
	flushRun()
	return counts, nil
}

// stringAfterKey returns the string that follows a key: a colon, then the
// string, with JSON whitespace around the colon. The string is returned
// as written, escapes included.
func stringAfterKey(b []byte) ([]byte, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != ':' {
		return nil, false
	}
	i = skipSpace(b, i+1)
	if i >= len(b) || b[i] != '"' {
		return nil, false
	}
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '"':
			return b[i+1 : j], true
		case '\\':
			j++
		}
	}
	return nil, false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// unescaped decodes a JSON string's escapes (ids written with \/ in
// base64); nearly every id has none.
func unescaped(s string) string {
	if !bytes.ContainsRune([]byte(s), '\\') {
		return s
	}
	var out string
	if json.Unmarshal([]byte(`"`+s+`"`), &out) != nil {
		return s
	}
	return out
}
