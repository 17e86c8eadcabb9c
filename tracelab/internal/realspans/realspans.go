// Package realspans writes large OTLP JSON inputs made of real recorded
// traces: the recorded cases of the labelled corpus (testdata/corpus, every
// case whose labels do not say "generated"), repeated with fresh trace and
// span ids until the file holds the spans asked for. Each repetition of a
// case is written whole, as the case's own resourceSpans entries in their
// order, so every trace in the output is complete and keeps the shape, the
// attributes and the producer's layout its recording had. The tracelab
// binary never uses it; the scale benchmark (corpus/benchdetect -scale-only, make bench-scale)
// does.
package realspans

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"tracelab/pkg/otlp"
)

// Case is one recorded case ready to be repeated.
type Case struct {
	Name   string
	Spans  int // spans the parser reads from it
	Traces int
	Roots  int // spans whose parent is not in their trace
	// entries are the case's resourceSpans entries as compact JSON; ids
	// are the places of the ids in them.
	entries [][]byte
	ids     [][]idAt
}

// idAt is an id string's content at entry[lo:hi].
type idAt struct{ lo, hi int }

// idKeys are the members whose string values are ids: a span's own, and
// a link's, which point into the same traces and are remapped alike.
var idKeys = [][]byte{[]byte(`"traceId":"`), []byte(`"spanId":"`), []byte(`"parentSpanId":"`)}

// Load reads the recorded cases under corpusDir, in name order.
func Load(corpusDir string) ([]Case, error) {
	dirs, err := os.ReadDir(corpusDir)
	if err != nil {
		return nil, err
	}
	var cases []Case
	for _, d := range dirs {
		labels, err := os.ReadFile(filepath.Join(corpusDir, d.Name(), "labels.yaml"))
		if err != nil {
			continue // not a case (record/, README.md)
		}
		if bytes.Contains(labels, []byte("\nsource: \"generated")) || bytes.HasPrefix(labels, []byte("source: \"generated")) {
			continue // made by tracelab's own generators: not a recording
		}
		c, err := loadCase(filepath.Join(corpusDir, d.Name(), "traces.json"))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", d.Name(), err)
		}
		c.Name = d.Name()
		cases = append(cases, c)
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("no recorded case under %s", corpusDir)
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].Name < cases[j].Name })
	return cases, nil
}

func loadCase(path string) (Case, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Case{}, err
	}
	traces, err := otlp.Parse(bytes.NewReader(raw))
	if err != nil {
		return Case{}, err
	}
	c := Case{Traces: len(traces)}
	for _, t := range traces {
		c.Spans += len(t.Spans)
		for _, s := range t.Spans {
			if t.Parent(s) == nil {
				c.Roots++
			}
		}
	}
	var doc struct {
		ResourceSpans []json.RawMessage `json:"resourceSpans"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return Case{}, err
	}
	for _, rs := range doc.ResourceSpans {
		var b bytes.Buffer
		if err := json.Compact(&b, rs); err != nil {
			return Case{}, err
		}
		e := b.Bytes()
		ids, err := findIDs(e)
		if err != nil {
			return Case{}, err
		}
		c.entries = append(c.entries, e)
		c.ids = append(c.ids, ids)
	}
	return c, nil
}

// findIDs finds every id in a compact entry. An id must be lower-case hex
// (what tracelab convert writes), so that remapping keeps it an id of the
// same length; an empty one (a root's parent) stays empty.
func findIDs(e []byte) ([]idAt, error) {
	var ids []idAt
	for _, key := range idKeys {
		for i := 0; ; {
			j := bytes.Index(e[i:], key)
			if j < 0 {
				break
			}
			lo := i + j + len(key)
			hi := lo + bytes.IndexByte(e[lo:], '"')
			for _, ch := range e[lo:hi] {
				if !(ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'f') {
					return nil, fmt.Errorf("id %q is not lower-case hex", e[lo:hi])
				}
			}
			if hi > lo {
				ids = append(ids, idAt{lo, hi})
			}
			i = hi
		}
	}
	return ids, nil
}

// Written is what Write wrote.
type Written struct {
	Spans, Traces, Repetitions int
	Bytes                      int64
}

// Write writes one OTLP JSON document holding at least spans spans: the
// cases in turn, each whole, again and again, each repetition's ids made
// fresh by XOR with a mask drawn from seed (a bijection on each case's
// ids, so that parent links and links hold, and repetitions do not share
// an id but by a chance of 2^-64). It stops after the case that reaches
// spans.
func Write(w io.Writer, cases []Case, spans int, seed int64) (Written, error) {
	rng := rand.New(rand.NewSource(seed))
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &countingWriter{w: bw}
	var out Written
	io.WriteString(cw, `{"resourceSpans":[`)
	first := true
	var buf []byte
	var mask [32]byte
	for out.Spans < spans {
		for _, c := range cases {
			if out.Spans >= spans {
				break
			}
			for i := range mask {
				mask[i] = byte(rng.Intn(16))
			}
			for k, e := range c.entries {
				buf = append(buf[:0], e...)
				for _, id := range c.ids[k] {
					remap(buf[id.lo:id.hi], &mask)
				}
				if !first {
					cw.Write([]byte{','})
				}
				first = false
				cw.Write(buf)
			}
			out.Spans += c.Spans
			out.Traces += c.Traces
		}
		out.Repetitions++
	}
	io.WriteString(cw, "]}\n")
	if cw.err != nil {
		return out, cw.err
	}
	out.Bytes = cw.n
	return out, bw.Flush()
}

const hexDigits = "0123456789abcdef"

// remap XORs each hex digit of id with the mask's digit at its place.
func remap(id []byte, mask *[32]byte) {
	for i, ch := range id {
		v := strings.IndexByte(hexDigits, ch)
		id[i] = hexDigits[byte(v)^mask[i%32]]
	}
}

// WriteFile is Write to a new file at path.
func WriteFile(path string, cases []Case, spans int, seed int64) (Written, error) {
	f, err := os.Create(path)
	if err != nil {
		return Written{}, err
	}
	out, err := Write(f, cases, spans, seed)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return out, err
}

type countingWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countingWriter) Write(b []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(b)
	c.n += int64(n)
	c.err = err
	return n, err
}
