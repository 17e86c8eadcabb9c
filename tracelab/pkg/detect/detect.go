// Package detect holds the pathology detectors. Each detector reads whole
// traces and returns findings aggregated across them; the registry lets the
// analyzer run every known detector without naming them.
//
// Detector ids are part of the lab's contract (scenario.yaml expectations
// refer to them): n-plus-one, redundant-call, chatty-db,
// event-loop-blocking, kafka-producer-contention, dispatch-overhead.
//
// Adding a detector: one file, a type with ID and Detect, and
// `func init() { Register(MyDetector{}) }`. Build on the trace package
// rather than on raw attributes: t.Operation(span) for what a span does
// (cached per trace), trace.IsCall / trace.Classify for outgoing calls,
// trace.Concurrency for sibling overlap, and t.CriticalTimeUnder(spans) /
// t.Duration() for ShareOfCriticalPath, which is what findings are ranked
// by; a call's spans there are its wrappers (t.Wrapper: the repository and
// ORM spans around it), whose time is part of what the call costs. Detectors must only read the traces: Analyze may share them between
// goroutines. Cite in a comment where each threshold comes from.
//
// A detector whose per-trace work needs only the trace should also be a
// PerTrace, keeping per finding only what it reports, so that the
// analyzer can drop each trace's working data after reading it. Per-trace
// structures several detectors read belong in t.Memo (repeatedUnits,
// redundantReads), computed once per trace.
package detect

import (
	"math"
	"sort"
	"sync"

	"tracelab/pkg/trace"
)

// Finding is one pathology found in a set of traces. The common fields mean
// the same for every detector; Evidence carries detector-specific extras.
type Finding struct {
	Detector            string         `json:"detector"`
	Service             string         `json:"service"`           // service that makes the calls
	Request             string         `json:"request,omitempty"` // the request type: the operation of the trace's root span, e.g. "GET /owners/{ownerId}"
	ParentOperation     string         `json:"parent_operation,omitempty"`
	Operation           string         `json:"operation"`                 // fingerprint of the repeated call / the culprit
	CallsPerTrace       float64        `json:"calls_per_trace,omitempty"` // mean over affected traces
	MaxConcurrency      int            `json:"max_concurrency,omitempty"`
	ShareOfParent       float64        `json:"share_of_parent,omitempty"` // union of the calls / parent duration, mean, 0..1
	ShareOfCriticalPath float64        `json:"share_of_critical_path"`    // the calls' time on the trace's critical path / trace duration, mean, 0..1
	TracesAffected      int            `json:"traces_affected"`
	Summary             string         `json:"summary"`            // one human sentence
	Evidence            map[string]any `json:"evidence,omitempty"` // detector-specific extras, e.g. example trace id
	// Code is the code that made the finding's spans, from their OpenTelemetry
	// code attributes or their handler's; nil when the spans name none.
	// The analyzer fills it in (package analyze), not the detectors.
	Code *trace.Code `json:"code,omitempty"`
}

// Detector finds one kind of pathology.
type Detector interface {
	// ID is the stable detector id, e.g. "n-plus-one".
	ID() string
	// Detect examines all traces together and returns one finding per
	// distinct culprit, aggregated across the traces it affects.
	Detect(traces []*trace.Trace) []Finding
}

// PerTrace is a Detector whose per-trace work needs nothing but the trace
// itself, so that it can run trace by trace: Aggregator returns a fresh
// accumulator, Add reads one trace, and Findings gives what Detect would
// have given for all the traces added. An accumulator keeps per finding
// only what the finding reports (ids, names, sums and one example's
// spans), never a whole trace, so a trace can be dropped once every
// accumulator has read it. Analyze feeds each trace to all of them in
// turn. A detector that judges across traces (event-loop-blocking's loops,
// kafka-producer-contention's producers) keeps what it reads of each call
// and judges in Findings; one that cannot be written so is Selective.
type PerTrace interface {
	Detector
	Aggregator() Aggregator
}

// Selective is a Detector that must see its traces all at once but reads
// only some of them: Needs says which, so that the analyzer keeps those
// and can drop the others as it goes. Needs must be exact: Detect over the
// traces it accepts finds what Detect over all of them finds.
type Selective interface {
	Detector
	Needs(t *trace.Trace) bool
}

// Aggregator is the cross-trace half of a PerTrace detector. It is not
// safe for concurrent use.
type Aggregator interface {
	Add(t *trace.Trace)
	Findings() []Finding
}

// detectEach is Detect for a PerTrace detector.
func detectEach(d PerTrace, traces []*trace.Trace) []Finding {
	a := d.Aggregator()
	for _, t := range traces {
		a.Add(t)
	}
	return a.Findings()
}

var (
	mu       sync.Mutex
	registry = map[string]Detector{}
)

// Register adds a detector to the registry; detectors call it from init.
// Registering an id twice panics: it is a programming error.
func Register(d Detector) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registry[d.ID()]; dup {
		panic("detect: detector " + d.ID() + " registered twice")
	}
	registry[d.ID()] = d
}

// All returns every registered detector, sorted by id.
func All() []Detector {
	mu.Lock()
	defer mu.Unlock()
	ds := make([]Detector, 0, len(registry))
	for _, d := range registry {
		ds = append(ds, d)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].ID() < ds[j].ID() })
	return ds
}

// Sort orders findings by share of the critical path, largest first: what
// costs the request the most comes first. Ties are broken by the number
// of traces affected, then by the text fields, so the order is stable.
func Sort(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.ShareOfCriticalPath != b.ShareOfCriticalPath {
			return a.ShareOfCriticalPath > b.ShareOfCriticalPath
		}
		if a.TracesAffected != b.TracesAffected {
			return a.TracesAffected > b.TracesAffected
		}
		if a.Detector != b.Detector {
			return a.Detector < b.Detector
		}
		if a.Service != b.Service {
			return a.Service < b.Service
		}
		if a.ParentOperation != b.ParentOperation {
			return a.ParentOperation < b.ParentOperation
		}
		return a.Operation < b.Operation
	})
}

// Metrics are numbers a detector reads from Prometheus rather than from
// traces: service -> name -> value, over the window of a load run.
type Metrics map[string]map[string]float64

// MetricsReader is a detector that also weighs metrics. The scenario runner
// evaluates its queries against Prometheus over the run's window and hands
// the results back through WithMetrics; `tracelab analyze --file` has only
// traces, so a MetricsReader must still work, on its span signal alone,
// when it never gets any.
type MetricsReader interface {
	Detector
	// MetricQueries returns PromQL per metric name; window is a PromQL
	// duration such as "95s". Each query returns one series per service,
	// labelled with the service's exported_job (what the collector's
	// Prometheus exporter makes of service.name).
	MetricQueries(window string) map[string]string
	// MetricSeries names the series the queries read, so that the runner
	// can wait until Prometheus holds their samples from after the run.
	MetricSeries() []string
	// WithMetrics returns the detector reading m.
	WithMetrics(m Metrics) Detector
}

// WithMetrics returns ds with every MetricsReader given m.
func WithMetrics(ds []Detector, m Metrics) []Detector {
	out := make([]Detector, len(ds))
	for i, d := range ds {
		if mr, ok := d.(MetricsReader); ok && m != nil {
			out[i] = mr.WithMetrics(m)
		} else {
			out[i] = d
		}
	}
	return out
}

// quantile is the nearest-rank quantile of xs, shared by the detectors that
// summarize timings; xs is not modified.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}
