// Package compare compares two analyses of the same application, a
// baseline and a candidate: which findings were resolved, which are new and
// which persist, and per request type how its latency and its calls changed,
// with a bootstrap confidence interval of the latency ratio so a change can
// be told from noise.
package compare

import (
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"sort"

	"tracelab/pkg/analyze"
	"tracelab/pkg/bootstrap"
	"tracelab/pkg/detect"
	"tracelab/pkg/trace"
)

// Input is one side of a comparison: its analysis and the duration of each
// of its requests, in milliseconds, by request type (RequestStats.Request).
type Input struct {
	Report    analyze.Report
	Durations map[string][]float64
}

// NewInput analyzes traces with detectors and records their durations.
func NewInput(traces []*trace.Trace, detectors []detect.Detector) Input {
	return Input{Report: analyze.Analyze(traces, detectors), Durations: Durations(traces)}
}

// Durations groups the durations of the traces that serve a request (in
// milliseconds) by request type, keyed as analyze keys RequestStats: the
// fingerprint of the trace's request span.
func Durations(traces []*trace.Trace) map[string][]float64 {
	out := map[string][]float64{}
	for _, t := range traces {
		r := t.Request()
		if r == nil {
			continue
		}
		name := t.Fingerprint(r)
		out[name] = append(out[name], float64(t.Duration())/1e6)
	}
	return out
}

// Options are the thresholds of the verdict and the bootstrap's settings.
type Options struct {
	// MaxP95Regression fails the comparison when, for a request type on
	// both sides, the lower bound of the p95 ratio's confidence interval
	// exceeds 1+MaxP95Regression (0.10: 10% slower beyond noise).
	MaxP95Regression float64
	// FailOnNew fails the comparison when any finding is new.
	FailOnNew bool
	// Resamples is the number of bootstrap resamples (default 2000).
	Resamples int
	// Seed makes the bootstrap reproducible.
	Seed uint64
}

// DefaultMaxP95Regression is the p95 regression `tracelab compare` allows
// unless told otherwise.
const DefaultMaxP95Regression = 0.10

// DefaultOptions are `tracelab compare`'s defaults: fail on a new finding
// or on a p95 regression beyond DefaultMaxP95Regression.
func DefaultOptions() Options {
	return Options{MaxP95Regression: DefaultMaxP95Regression, FailOnNew: true}
}

// DefaultResamples and DefaultSeed are what Options' zero values mean.
const (
	DefaultResamples = 2000
	DefaultSeed      = 13
)

// Result is the comparison; its JSON form is what `tracelab compare
// --format json` prints.
type Result struct {
	Resolved   []detect.Finding `json:"resolved"`   // in the baseline only; never null
	New        []detect.Finding `json:"new"`        // in the candidate only; never null
	Persisting []detect.Finding `json:"persisting"` // on both sides, as the candidate has it; never null
	Requests   []Request        `json:"requests"`   // never null
	Verdict    Verdict          `json:"verdict"`
}

// Request compares one request type. A side it is missing from is null, and
// so are the ratios then.
type Request struct {
	Request   string `json:"request"`
	Baseline  *Side  `json:"baseline"`
	Candidate *Side  `json:"candidate"`
	P50Ratio  *Ratio `json:"p50_ratio"`
	P95Ratio  *Ratio `json:"p95_ratio"`
}

// Side is one request type on one side.
type Side struct {
	Traces            int     `json:"traces"`
	P50Ms             float64 `json:"p50_ms"`
	P95Ms             float64 `json:"p95_ms"`
	CallsPerRequest   float64 `json:"calls_per_request"`
	DBCallsPerRequest float64 `json:"db_calls_per_request"`
}

// Ratio is candidate/baseline of a percentile with its 95% percentile
// bootstrap confidence interval [Low, High].
type Ratio = bootstrap.Interval

// Verdict says whether nothing got worse beyond the thresholds, and if
// something did, what.
type Verdict struct {
	Pass    bool     `json:"pass"`
	Reasons []string `json:"reasons"` // never null; empty when Pass
}

// Compare compares a baseline with a candidate.
func Compare(base, cand Input, opt Options) Result {
	if opt.Resamples <= 0 {
		opt.Resamples = DefaultResamples
	}
	if opt.Seed == 0 {
		opt.Seed = DefaultSeed
	}
	r := Result{Requests: []Request{}, Verdict: Verdict{Reasons: []string{}}}
	r.Resolved, r.New, r.Persisting = MatchFindings(base.Report.Findings, cand.Report.Findings)
	r.Requests = compareRequests(base, cand, opt)

	if opt.FailOnNew {
		for _, f := range r.New {
			r.Verdict.Reasons = append(r.Verdict.Reasons, "new finding: "+describe(f))
		}
	}
	for _, q := range r.Requests {
		if reason, bad := Regressed(q, opt.MaxP95Regression); bad {
			r.Verdict.Reasons = append(r.Verdict.Reasons, reason)
		}
	}
	r.Verdict.Pass = len(r.Verdict.Reasons) == 0
	return r
}

// MinTracesForP95 is how many traces each side needs before a request
// type's p95 is judged. Below it the p95 is the sample's largest value or
// next to it, and a bootstrap never draws beyond the largest value, so the
// interval comes out falsely narrow: over the 1,895 routes of an antpath
// smoke run, with 2 to 5 traces each, 118 "regressed" by chance.
const MinTracesForP95 = 20

// Regressed applies the latency rule to one request type: it regressed when
// it has at least MinTracesForP95 traces on each side and the lower bound
// of its p95 ratio's confidence interval exceeds 1+maxRegression, i.e. it
// is slower beyond the allowance even at the favourable end of the noise.
func Regressed(q Request, maxRegression float64) (string, bool) {
	if q.P95Ratio == nil || q.Baseline.Traces < MinTracesForP95 || q.Candidate.Traces < MinTracesForP95 {
		return "", false
	}
	if q.P95Ratio.Low > 1+maxRegression {
		return fmt.Sprintf("p95 of %s regressed: %.2f× (95%% CI %.2f–%.2f×), beyond the allowed %.0f%%",
			q.Request, q.P95Ratio.Value, q.P95Ratio.Low, q.P95Ratio.High, maxRegression*100), true
	}
	return "", false
}

func describe(f detect.Finding) string {
	s := f.Detector + " in " + f.Service
	if f.Request != "" {
		s += " " + f.Request
	}
	if f.Operation != "" {
		s += ": " + f.Operation
	}
	return s
}

type findingKey struct{ detector, service, request, operation string }

func keyOf(f detect.Finding) findingKey {
	return findingKey{f.Detector, f.Service, f.Request, f.Operation}
}

// MatchFindings splits findings into resolved (baseline only), new
// (candidate only) and persisting (both; the candidate's), matching them by
// detector, service, request and operation. Each keeps its side's order;
// none is null.
func MatchFindings(base, cand []detect.Finding) (resolved, added, persisting []detect.Finding) {
	resolved, added, persisting = []detect.Finding{}, []detect.Finding{}, []detect.Finding{}
	left := map[findingKey]int{}
	for _, f := range base {
		left[keyOf(f)]++
	}
	matched := map[findingKey]int{}
	for _, f := range cand {
		k := keyOf(f)
		if left[k] > 0 {
			left[k]--
			matched[k]++
			persisting = append(persisting, f)
		} else {
			added = append(added, f)
		}
	}
	for _, f := range base {
		k := keyOf(f)
		if matched[k] > 0 {
			matched[k]--
			continue
		}
		resolved = append(resolved, f)
	}
	return resolved, added, persisting
}

func compareRequests(base, cand Input, opt Options) []Request {
	stats := func(in Input) map[string]analyze.RequestStats {
		m := map[string]analyze.RequestStats{}
		for _, s := range in.Report.Requests {
			m[s.Request] = s
		}
		return m
	}
	bs, cs := stats(base), stats(cand)
	both := maps.Clone(bs)
	maps.Copy(both, cs)

	out := []Request{}
	for _, n := range slices.Sorted(maps.Keys(both)) {
		q := Request{Request: n}
		if s, ok := bs[n]; ok {
			q.Baseline = side(s, base.Durations[n])
		}
		if s, ok := cs[n]; ok {
			q.Candidate = side(s, cand.Durations[n])
		}
		if q.Baseline != nil && q.Candidate != nil {
			// Each request type its own stream, drawn from its name, so a
			// request type on one side only does not move the others'
			// intervals.
			h := fnv.New64a()
			h.Write([]byte(n))
			seed := opt.Seed ^ h.Sum64()
			q.P50Ratio = BootstrapRatio(base.Durations[n], cand.Durations[n], 0.50, opt.Resamples, seed)
			q.P95Ratio = BootstrapRatio(base.Durations[n], cand.Durations[n], 0.95, opt.Resamples, seed)
		}
		out = append(out, q)
	}
	return out
}

func side(s analyze.RequestStats, durations []float64) *Side {
	sorted := append([]float64(nil), durations...)
	sort.Float64s(sorted)
	return &Side{
		Traces:            s.Traces,
		P50Ms:             round(bootstrap.Quantile(sorted, 0.50), 3),
		P95Ms:             round(bootstrap.Quantile(sorted, 0.95), 3),
		CallsPerRequest:   s.CallsPerTrace,
		DBCallsPerRequest: s.DBCallsPerTrace,
	}
}

// BootstrapRatio estimates the ratio of the q-quantile of cand to that of
// base, with its 95% bootstrap interval (package bootstrap). Nil when a
// side is empty or the baseline's quantile is not positive.
func BootstrapRatio(base, cand []float64, q float64, resamples int, seed uint64) *Ratio {
	b, c := bootstrap.NewQuantile(base, q), bootstrap.NewQuantile(cand, q)
	if b == nil || c == nil {
		return nil
	}
	return bootstrap.Ratio(c, b, resamples, seed)
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}
