// Package analyze turns traces into a report: the findings of every
// detector, ranked by what they cost the request, and per request type the
// shape of the request and where its critical path goes.
package analyze

import (
	"math"
	"runtime"
	"sort"
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

// Analyze runs the detectors over traces and summarizes the requests.
// Critical paths and operation fingerprints are computed up front on all
// cores, since every detector and the request breakdown need them.
//
// Detectors that can (detect.PerTrace) read the traces one at a time, all
// of them on one trace before the next, and what they share about a trace
// (its repeated units) is dropped once they are done with it: that working
// memory then follows the largest trace, not the input. The traces
// themselves stay, for three reasons:
//   - event-loop-blocking judges each event-loop thread by all its calls,
//     whichever trace they belong to (their times, callees and
//     connections);
//   - kafka-producer-contention judges each producer by all its sends
//     across traces (their times and what was in flight);
//   - dispatch-overhead relates each request's gap to the load at the
//     time, across traces;
//
// and the request breakdown reads each trace's critical path. Each of
// these needs a few numbers per call or per trace, not the spans, so
// they could become PerTrace too; and the traces could only be handed
// over one at a time once the parser yields them so (an OTLP file lists
// spans by service, so a trace is complete only at the end of the file
// unless the file is ordered by trace).
func Analyze(traces []*trace.Trace, detectors []detect.Detector) Report {
	warmCaches(traces)
	r := Report{Traces: len(traces), Findings: []detect.Finding{}, Requests: []RequestStats{}, Background: []Background{}}
	var requests, background []*trace.Trace
	for _, t := range traces {
		r.Spans += len(t.Spans)
		if t.Request() != nil {
			requests = append(requests, t)
		} else {
			background = append(background, t)
		}
	}
	for _, fs := range detectAll(requests, detectors) {
		r.Findings = append(r.Findings, fs...)
	}
	detect.Sort(r.Findings)
	r.Requests = requestStats(requests)
	r.Background = backgroundStats(background)
	return r
}

// detectAll returns each detector's findings, in the detectors' order.
func detectAll(traces []*trace.Trace, detectors []detect.Detector) [][]detect.Finding {
	out := make([][]detect.Finding, len(detectors))
	var aggs []detect.Aggregator
	var at []int // index in detectors of each of aggs
	for i, d := range detectors {
		if p, ok := d.(detect.PerTrace); ok {
			aggs = append(aggs, p.Aggregator())
			at = append(at, i)
		}
	}
	if len(aggs) > 0 {
		for _, t := range traces {
			for _, a := range aggs {
				a.Add(t)
			}
			t.ForgetMemos()
		}
		for j, a := range aggs {
			out[at[j]] = a.Findings()
		}
	}
	for i, d := range detectors {
		if _, ok := d.(detect.PerTrace); !ok {
			out[i] = d.Detect(traces)
		}
	}
	return out
}

func backgroundStats(traces []*trace.Trace) []Background {
	byRoot := map[string]*Background{}
	for _, t := range traces {
		if t.Root == nil {
			continue
		}
		name := t.Fingerprint(t.Root)
		b := byRoot[name]
		if b == nil {
			b = &Background{Root: name}
			byRoot[name] = b
		}
		b.Traces++
		b.Spans += len(t.Spans)
	}
	out := make([]Background, 0, len(byRoot))
	for _, b := range byRoot {
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
	workers := runtime.GOMAXPROCS(0)
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

func requestStats(traces []*trace.Trace) []RequestStats {
	byRequest := map[string]*requestAgg{}
	for _, t := range traces {
		name := t.Fingerprint(t.Request())
		a := byRequest[name]
		if a == nil {
			a = &requestAgg{request: name, onPath: map[segmentKey]int64{}}
			byRequest[name] = a
		}
		a.traces++
		a.duration += t.Duration()
		a.spans += len(t.Spans)
		calls, dbCalls := Calls(t)
		a.calls += calls
		a.dbCalls += dbCalls
		for _, sec := range t.CriticalPath() {
			a.onPath[segmentKey{sec.Span.Service, t.Operation(sec.Span)}] += sec.Duration()
		}
	}

	out := make([]RequestStats, 0, len(byRequest))
	for _, a := range byRequest {
		n := float64(a.traces)
		rs := RequestStats{
			Request:         a.request,
			Traces:          a.traces,
			MeanDurationMs:  round(float64(a.duration)/n/1e6, 3),
			SpansPerTrace:   round(float64(a.spans)/n, 2),
			CallsPerTrace:   round(float64(a.calls)/n, 2),
			DBCallsPerTrace: round(float64(a.dbCalls)/n, 2),
			CriticalPath:    []PathSegment{},
		}
		for k, d := range a.onPath {
			seg := PathSegment{Service: k.service, Operation: k.operation, MeanMs: round(float64(d)/n/1e6, 3)}
			if a.duration > 0 {
				seg.Share = round(float64(d)/float64(a.duration), 4)
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
