// Package source names where traces come from — a file, a Jaeger window
// or a Tempo search — and fetches them. analyze's flags (--file, --jaeger,
// --tempo and their options) and compare's SRC strings (FILE,
// jaeger:URL?…, tempo:URL?…) are two spellings of the same parameters,
// read by one parser (Parse) into one Source.
package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"tracelab/pkg/backend"
	"tracelab/pkg/jaeger"
	"tracelab/pkg/otlp"
	"tracelab/pkg/tempo"
	"tracelab/pkg/trace"
)

// Kind is where a source's traces are.
type Kind string

const (
	File   Kind = "file"
	Jaeger Kind = "jaeger"
	Tempo  Kind = "tempo"
)

// What a remote source fetches unless told otherwise.
const (
	DefaultSince            = 15 * time.Minute
	DefaultLimit            = 20
	DefaultTimeout          = 30 * time.Second
	DefaultMaxResponseBytes = backend.DefaultMaxResponseBytes
)

// Source is one place to read traces from, checked (see Parse).
type Source struct {
	Kind Kind
	Path string // File: the file, "-" for stdin

	URL                string // Jaeger, Tempo: the query API, without a trailing slash
	Service, Operation string // Jaeger
	Query              string // Tempo: TraceQL
	From, To           time.Time
	Limit              int // the most traces to fetch and analyze, whatever the backend answers
	// Timeout is the deadline of the whole fetch: every request, retry and
	// wait of it ends within Timeout of Fetch's start.
	Timeout time.Duration
	// MaxResponseBytes bounds each answer of the backend.
	MaxResponseBytes int64

	// Limits bound each parse (otlp.Limits; zero fields take the defaults).
	Limits otlp.Limits

	// Parse reads a trace document; nil is otlp.ParseReaderFirst with
	// Limits and Limit (0 for a file: every trace).
	Parse func(io.Reader) ([]*trace.Trace, error)
	// Log receives progress notes of a slow fetch; nil drops them.
	Log io.Writer
}

// String names the source in messages.
func (s *Source) String() string {
	window := s.From.UTC().Format(time.RFC3339) + " to " + s.To.UTC().Format(time.RFC3339)
	switch s.Kind {
	case Jaeger:
		name := fmt.Sprintf("service %q", s.Service)
		if s.Operation != "" {
			name += fmt.Sprintf(" operation %q", s.Operation)
		}
		return fmt.Sprintf("%s in Jaeger at %s, %s", name, s.URL, window)
	case Tempo:
		return fmt.Sprintf("%s in Tempo at %s, %s", s.Query, s.URL, window)
	}
	if s.Path == "-" {
		return "stdin"
	}
	return s.Path
}

// NoTracesError is a source that yields no trace to analyze. A gate must
// not pass on it: nothing was checked.
type NoTracesError struct{ Source *Source }

func (e *NoTracesError) Error() string {
	if e.Source.Kind == File {
		return fmt.Sprintf("no traces in %s: it holds no span with both a traceId and a spanId, so there is nothing to analyze", e.Source)
	}
	return fmt.Sprintf("no traces found for %s", e.Source)
}

// Environment reports whether err, from Fetch, is the environment's
// failure (a backend that does not answer, fails, or keeps asking to
// wait), which trying later may mend, rather than the input's (a file, a
// query, an answer that cannot be read or is too large).
func Environment(err error) bool {
	var na *backend.NotAnsweringError
	if errors.As(err, &na) {
		return true
	}
	var he *backend.HTTPError
	return errors.As(err, &he) && !he.Rejected()
}

// Fetch reads the source's traces. It fails with *NoTracesError when there
// are none.
func (s *Source) Fetch(ctx context.Context) ([]*trace.Trace, error) {
	parse := s.Parse
	dropped := 0 // spans of the traces past Limit
	if parse == nil {
		parse = func(r io.Reader) ([]*trace.Trace, error) {
			// A backend may answer more traces than it was asked for.
			traces, n, err := otlp.ParseReaderFirst(r, s.Limits, s.Limit)
			dropped += n
			return traces, err
		}
	}
	var traces []*trace.Trace
	var err error
	switch s.Kind {
	case File:
		traces, err = s.readFile(ctx, parse)
	case Jaeger, Tempo:
		ctx, cancel := context.WithTimeout(ctx, s.Timeout)
		defer cancel()
		if s.Kind == Jaeger {
			traces, err = s.fetchJaeger(ctx, parse)
		} else {
			traces, err = s.fetchTempo(ctx, parse)
		}
	default:
		err = fmt.Errorf("unknown source kind %q", s.Kind)
	}
	if err != nil {
		return nil, err
	}
	if len(traces) == 0 {
		return nil, &NoTracesError{s}
	}
	if dropped > 0 {
		s.logf("%s: more traces answered than the limit of %d; analyzing the first %d, dropped %d spans of the others", s, s.Limit, len(traces), dropped)
	}
	return traces, nil
}

// Stream hands the source's traces to a sink made by newSink: a regular
// file's trace by trace as it is read (otlp.StreamFile, which may make a
// second sink), any other source's all at once after Fetch. It fails with
// *NoTracesError when there are none.
func (s *Source) Stream(ctx context.Context, newSink func() func([]*trace.Trace)) error {
	if s.Kind != File || s.Parse != nil || !regularFile(s.Path) {
		traces, err := s.Fetch(ctx)
		if err != nil {
			return err
		}
		newSink()(traces)
		return nil
	}
	n := 0
	err := otlp.StreamFile(ctx, s.Path, s.Limits, func() func([]*trace.Trace) {
		n = 0
		add := newSink()
		return func(traces []*trace.Trace) {
			n += len(traces)
			add(traces)
		}
	})
	if err != nil {
		return fmt.Errorf("%s: %w", s, unwrapPathError(err))
	}
	if n == 0 {
		return &NoTracesError{s}
	}
	return nil
}

// regularFile reports whether path is a file that can be read twice, as
// StreamFile does; stdin, a pipe or a missing file go through Fetch.
func regularFile(path string) bool {
	st, err := os.Stat(path)
	return path != "-" && err == nil && st.Mode().IsRegular()
}

// readFile reads the file or stdin until ctx is done. The read runs on a
// goroutine of its own, which an interrupt abandons: nothing wakes a read
// blocked on a pipe that stays open (stdin cannot be closed from here) or
// an open of a FIFO that no one writes, and the process is about to exit
// anyway. A read that does not block stops at its next read.
func (s *Source) readFile(ctx context.Context, parse func(io.Reader) ([]*trace.Trace, error)) ([]*trace.Trace, error) {
	type result struct {
		traces []*trace.Trace
		err    error
	}
	done := make(chan result, 1)
	go func() {
		traces, err := s.readFileBlocking(ctx, parse)
		done <- result{traces, err}
	}()
	select {
	case r := <-done:
		return r.traces, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", s, ctx.Err())
	}
}

func (s *Source) readFileBlocking(ctx context.Context, parse func(io.Reader) ([]*trace.Trace, error)) ([]*trace.Trace, error) {
	var in io.Reader = os.Stdin
	if s.Path != "-" {
		if st, err := os.Stat(s.Path); err != nil {
			return nil, fmt.Errorf("cannot read %s: %v", s.Path, unwrapPathError(err))
		} else if st.IsDir() {
			return nil, fmt.Errorf("%s is a directory; pass an OTLP JSON file", s.Path)
		}
		f, err := os.Open(s.Path)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %v", s.Path, unwrapPathError(err))
		}
		defer f.Close()
		in = f
	}
	traces, err := parse(otlp.WithContext(ctx, in))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s, err)
	}
	return traces, nil
}

// client sets up a backend client for one fetch: no per-request timeout of
// its own beyond connecting, so the fetch's deadline is the one that counts.
func (s *Source) client(c *backend.Client) {
	c.HTTP.Timeout = 0
	c.MaxResponseBytes = s.MaxResponseBytes
}

func (s *Source) fetchJaeger(ctx context.Context, parse func(io.Reader) ([]*trace.Trace, error)) ([]*trace.Trace, error) {
	c := jaeger.New(s.URL)
	s.client(c.Client)
	stop := s.slowNotice(fmt.Sprintf("fetching up to %d traces of %s", s.Limit, s))
	defer stop()
	var traces []*trace.Trace
	err := c.FindInto(ctx, jaeger.Query{Service: s.Service, Operation: s.Operation, From: s.From, To: s.To, Limit: s.Limit},
		func(r io.Reader) error {
			var err error
			traces, err = parse(r)
			return err
		})
	return traces, err
}

func (s *Source) fetchTempo(ctx context.Context, parse func(io.Reader) ([]*trace.Trace, error)) ([]*trace.Trace, error) {
	c := tempo.New(s.URL)
	s.client(c.Client)
	stop := s.slowNotice("searching " + s.String())
	found, err := c.Search(ctx, s.Query, s.From, s.To, s.Limit)
	stop()
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(found))
	for i, t := range found {
		ids[i] = t.TraceID
	}
	// At most a line a second, and a last one if any was printed.
	last, printed := time.Now(), false
	progress := func(done, total int) {
		if time.Since(last) < time.Second && !(printed && done == total) {
			return
		}
		s.logf("fetched %d/%d traces from Tempo", done, total)
		last, printed = time.Now(), true
	}
	// Each trace is parsed as it arrives, so no answer's text outlives it.
	var traces []*trace.Trace
	missing, err := c.Traces(ctx, ids, func(r io.Reader) error {
		t, err := parse(r)
		traces = append(traces, t...)
		return err
	}, progress)
	if err != nil {
		return nil, err
	}
	// In the order one document of them all would have given (trace.Group's).
	sort.SliceStable(traces, func(i, j int) bool {
		a, b := traces[i], traces[j]
		if a.Root.Start != b.Root.Start {
			return a.Root.Start < b.Root.Start
		}
		return a.ID < b.ID
	})
	if missing > 0 && len(traces) > 0 {
		s.logf("Tempo no longer holds %d of the %d traces its search found; analyzing the rest", missing, len(ids))
	}
	return traces, nil
}

func (s *Source) logf(format string, a ...any) {
	if s.Log != nil {
		fmt.Fprintf(s.Log, "tracelab: "+format+"\n", a...)
	}
}

// slowNotice logs msg if the call it wraps takes over 2 s; call the
// returned func when it ends.
func (s *Source) slowNotice(msg string) (stop func()) {
	t := time.AfterFunc(2*time.Second, func() { s.logf("%s…", msg) })
	return func() { t.Stop() }
}

// unwrapPathError drops the "open <path>:" prefix the message already has.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
