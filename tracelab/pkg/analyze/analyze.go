// Package analyze turns traces into a report: the findings of every
// detector, ranked by what they cost the request, and per request type the
// shape of the request and where its critical path goes.
package analyze

import (
	"math"
	"runtime"
	"sort"
	"strconv"
	"sync"

	"tracelab/pkg/detect"
	"tracelab/pkg/trace"
)

// Report is the result of an analysis; its JSON form is what
// `tracelab analyze --format json` prints.
type Report struct {
	Traces     int              `json:"traces"`
	Spans      int              `json:"spans"`
	Findings   []detect.Finding `json:"findings"`   // never null; ranked by share_of_critical_path, largest first
	Requests   []RequestStats   `json:"requests"`   // never null; most frequent request type first
	Background []Background     `json:"background"` // never null; traces that serve no request, most frequent first
	Warnings   []Warning        `json:"warnings"`   // never null; one per kind of broken span met, in trace.BrokenKinds' order
}

// Warning counts one kind of broken span or trace (trace.Broken) over
// every trace read, request or background.
type Warning struct {
	Kind           string `json:"kind"`             // trace.BrokenKinds' Name, e.g. "end-before-start"
	Count          int    `json:"count"`            // what it counts: spans, traces or cycles, as its message says
	ExampleTraceID string `json:"example_trace_id"` // the first trace read that has it
}

// Message says what the warning counts, e.g. "3 spans end before they
// start".
func (w Warning) Message() string {
	for _, k := range trace.BrokenKinds {
		if k.Name == w.Kind {
			if w.Count == 1 {
				return "1 " + k.One
			}
			return strconv.Itoa(w.Count) + " " + k.Many
		}
	}
	return strconv.Itoa(w.Count) + " " + w.Kind
}

// Background counts the traces of one root operation that serve no request
// (no SERVER or CONSUMER root, see trace.Request): an application's
// start-up, a scheduled job. They are kept out of the request types and out
// of the detectors, whose findings are about what a request pays.
type Background struct {
	Root   string `json:"root"` // fingerprint of the root span, e.g. "petclinic INSERT petclinic.owners"
	Traces int    `json:"traces"`
	Spans  int    `json:"spans"`
}

// RequestStats describes one request type: the traces whose root span has
// the same fingerprint (root service + operation).
type RequestStats struct {
	Request         string        `json:"request"` // e.g. "catalog GET /catalog/summary"
	Traces          int           `json:"traces"`
	MeanDurationMs  float64       `json:"mean_duration_ms"`
	SpansPerTrace   float64       `json:"spans_per_trace"`
	CallsPerTrace   float64       `json:"calls_per_trace"`    // outgoing calls (trace.IsCall) per trace
	DBCallsPerTrace float64       `json:"db_calls_per_trace"` // of those, database round trips (detect.IsDBRoundTrip)
	CriticalPath    []PathSegment `json:"critical_path"`      // largest first, at most MaxPathSegments
}

// PathSegment is the critical-path time of one operation, averaged over the
// traces of a request type.
type PathSegment struct {
	Service   string  `json:"service"`
	Operation string  `json:"operation"`
	MeanMs    float64 `json:"mean_ms"` // mean time per trace on the critical path
	Share     float64 `json:"share"`   // of the request's duration, 0..1
}

// MaxPathSegments is how many operations a request's critical-path
// breakdown lists; past ten, the rest is noise for a reader.
const MaxPathSegments = 10

// Analyze runs the detectors over traces and summarizes the requests: an
// Analyzer given all of them at once.
func Analyze(traces []*trace.Trace, detectors []detect.Detector) Report {
	a := NewAnalyzer(detectors)
	a.Add(traces)
	return a.Report()
}

// Analyzer builds a Report from traces handed over in batches, so that a
// caller that reads traces one after another (otlp.StreamFile) never holds
// them all. Once Add returns, a trace is no longer referenced unless a
// Selective detector needs it:
//   - PerTrace detectors and the request breakdown keep per finding and per
//     request type only sums, names and an example's few spans; those that
//     judge across traces (event-loop-blocking per loop, kafka-producer-
//     contention per producer, dispatch-overhead per service) keep a few
//     numbers and names per call or request, never the trace;
//   - a Selective detector keeps the traces it needs (every detector of
//     the lab is PerTrace: none does);
//   - a detector that is neither would keep every request trace.
//
// Memory then follows the requests read and the largest batch, not the
// traces. An Analyzer is not safe for concurrent use.
type Analyzer struct {
	detectors []detect.Detector
	aggs      []detect.Aggregator // one per PerTrace detector, in detectors' order
	at        []int               // index in detectors of each of aggs
	kept      []*trace.Trace      // request traces some whole-input detector needs
	r         Report
	byRequest map[string]*requestAgg
	byRoot    map[string]*Background

	broken        [len(trace.BrokenKinds)]int
	brokenExample [len(trace.BrokenKinds)]string
	// brokenTraces is each broken trace's count of what is wrong with it,
	// for the evidence of the findings that name it; few traces are broken.
	brokenTraces map[string]int
	code         codeIndex
}

// NewAnalyzer returns an Analyzer running detectors.
func NewAnalyzer(detectors []detect.Detector) *Analyzer {
	a := &Analyzer{detectors: detectors, byRequest: map[string]*requestAgg{}, byRoot: map[string]*Background{}, brokenTraces: map[string]int{}, code: codeIndex{}}
	for i, d := range detectors {
		if p, ok := d.(detect.PerTrace); ok {
			a.aggs = append(a.aggs, p.Aggregator())
			a.at = append(a.at, i)
		}
	}
	return a
}

// Add reads a batch of traces. Their critical paths and operation
// fingerprints, which every detector and the breakdown need, are computed
// on all cores first.
func (a *Analyzer) Add(traces []*trace.Trace) {
	warmCaches(traces)
	for _, t := range traces {
		a.r.Traces++
		a.r.Spans += len(t.Spans)
		if n := t.Broken.Total(); n > 0 {
			a.addBroken(t, n)
		}
		if t.Request() == nil {
			a.addBackground(t)
			continue
		}
		for _, agg := range a.aggs {
			agg.Add(t)
		}
		t.ForgetMemos()
		a.addRequest(t)
		a.code.add(t)
		if a.needed(t) {
			a.kept = append(a.kept, t)
		}
	}
}

// needed reports whether a detector that is not PerTrace reads t.
func (a *Analyzer) needed(t *trace.Trace) bool {
	for _, d := range a.detectors {
		if _, ok := d.(detect.PerTrace); ok {
			continue
		}
		if s, ok := d.(detect.Selective); !ok || s.Needs(t) {
			return true
		}
	}
	return false
}

// Report returns the findings and the breakdown of every trace added.
func (a *Analyzer) Report() Report {
	r := a.r
	r.Findings = []detect.Finding{}
	// Traces arrive in the order they completed; the whole-input
	// detectors get them in Group's order, as from a whole file.
	sort.Slice(a.kept, func(i, j int) bool { return trace.Before(a.kept[i], a.kept[j]) })
	for i, d := range a.detectors {
		if _, ok := d.(detect.PerTrace); !ok {
			r.Findings = append(r.Findings, d.Detect(a.kept)...)
			continue
		}
		for j, at := range a.at {
			if at == i {
				r.Findings = append(r.Findings, a.aggs[j].Findings()...)
			}
		}
	}
	detect.Sort(r.Findings)
	for i := range r.Findings {
		r.Findings[i].Code = a.code.codeOf(r.Findings[i])
	}
	for _, f := range r.Findings {
		// A finding names one of its traces; whether that one is broken is
		// what the report can say of it.
		if id, ok := f.Evidence["example_trace_id"].(string); ok && a.brokenTraces[id] > 0 {
			f.Evidence["trace_warnings"] = a.brokenTraces[id]
		}
	}
	r.Requests = a.requestStats()
	r.Background = a.backgroundStats()
	r.Warnings = []Warning{}
	for k, n := range a.broken {
		if n > 0 {
			r.Warnings = append(r.Warnings, Warning{Kind: trace.BrokenKinds[k].Name, Count: n, ExampleTraceID: a.brokenExample[k]})
		}
	}
	return r
}

func (a *Analyzer) addBroken(t *trace.Trace, n int) {
	a.brokenTraces[t.ID] = n
	for k, c := range t.Broken {
		if c > 0 {
			a.broken[k] += int(c)
			if a.brokenExample[k] == "" {
				a.brokenExample[k] = t.ID
			}
		}
	}
}

func (a *Analyzer) addBackground(t *trace.Trace) {
	if t.Root == nil {
		return
	}
	name := t.Fingerprint(t.Root)
	b := a.byRoot[name]
	if b == nil {
		b = &Background{Root: name}
		a.byRoot[name] = b
	}
	b.Traces++
	b.Spans += len(t.Spans)
}

func (a *Analyzer) backgroundStats() []Background {
	out := make([]Background, 0, len(a.byRoot))
	for _, b := range a.byRoot {
		out = append(out, *b)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Traces != out[j].Traces {
			return out[i].Traces > out[j].Traces
		}
		return out[i].Root < out[j].Root
	})
	return out
}

func warmCaches(traces []*trace.Trace) {
	workers := min(runtime.GOMAXPROCS(0), len(traces))
	next := make(chan *trace.Trace)
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range next {
				t.CriticalPath()
				if t.Root != nil {
					t.Operation(t.Root) // fills the trace's fingerprint cache
				}
			}
		}()
	}
	for _, t := range traces {
		next <- t
	}
	close(next)
	wg.Wait()
}

type segmentKey struct{ service, operation string }

type requestAgg struct {
	request      string
	traces       int
	duration     int64
	spans, calls int
	dbCalls      int
	onPath       map[segmentKey]int64
}

// Calls counts a trace's outgoing calls and, of those, its database round
// trips (detect.IsDBRoundTrip). A call counts once however many layers
// trace it (trace.OwnCall): Node's knex span and the pg span under it are
// one query.
func Calls(t *trace.Trace) (calls, dbCalls int) {
	for _, s := range t.Spans {
		if !t.OwnCall(s) {
			continue
		}
		calls++
		if detect.IsDBRoundTrip(s) {
			dbCalls++
		}
	}
	return calls, dbCalls
}

func (a *Analyzer) addRequest(t *trace.Trace) {
	name := t.Fingerprint(t.Request())
	ra := a.byRequest[name]
	if ra == nil {
		ra = &requestAgg{request: name, onPath: map[segmentKey]int64{}}
		a.byRequest[name] = ra
	}
	ra.traces++
	ra.duration += t.Duration()
	ra.spans += len(t.Spans)
	calls, dbCalls := Calls(t)
	ra.calls += calls
	ra.dbCalls += dbCalls
	for _, sec := range t.CriticalPath() {
		ra.onPath[segmentKey{sec.Span.Service, t.Operation(sec.Span)}] += sec.Duration()
	}
}

func (a *Analyzer) requestStats() []RequestStats {
	out := make([]RequestStats, 0, len(a.byRequest))
	for _, ra := range a.byRequest {
		n := float64(ra.traces)
		rs := RequestStats{
			Request:         ra.request,
			Traces:          ra.traces,
			MeanDurationMs:  round(float64(ra.duration)/n/1e6, 3),
			SpansPerTrace:   round(float64(ra.spans)/n, 2),
			CallsPerTrace:   round(float64(ra.calls)/n, 2),
			DBCallsPerTrace: round(float64(ra.dbCalls)/n, 2),
			CriticalPath:    []PathSegment{},
		}
		for k, d := range ra.onPath {
			seg := PathSegment{Service: k.service, Operation: k.operation, MeanMs: round(float64(d)/n/1e6, 3)}
			if ra.duration > 0 {
				seg.Share = round(float64(d)/float64(ra.duration), 4)
			}
			rs.CriticalPath = append(rs.CriticalPath, seg)
		}
		sort.Slice(rs.CriticalPath, func(i, j int) bool {
			x, y := rs.CriticalPath[i], rs.CriticalPath[j]
			if x.MeanMs != y.MeanMs {
				return x.MeanMs > y.MeanMs
			}
			if x.Service != y.Service {
				return x.Service < y.Service
			}
			return x.Operation < y.Operation
		})
		if len(rs.CriticalPath) > MaxPathSegments {
			rs.CriticalPath = rs.CriticalPath[:MaxPathSegments]
		}
		out = append(out, rs)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Traces != out[j].Traces {
			return out[i].Traces > out[j].Traces
		}
		return out[i].Request < out[j].Request
	})
	return out
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}
