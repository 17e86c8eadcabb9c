package compare

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"tracelab/pkg/analyze"
	"tracelab/pkg/detect"
)

func finding(detector, service, request, operation string) detect.Finding {
	return detect.Finding{Detector: detector, Service: service, Request: request, Operation: operation}
}

func TestMatchFindings(t *testing.T) {
	nplus1 := finding("n-plus-one", "catalog", "GET /catalog/summary", "/prices/{id}")
	chatty := finding("chatty-db", "orders", "POST /orders", "INSERT orders")
	redundant := finding("redundant-call", "orders", "GET /orders/{id}", "SELECT orders")
	// Same detector, service and operation, another request: a different finding.
	nplus1Elsewhere := finding("n-plus-one", "catalog", "GET /catalog/items", "/prices/{id}")
	persistingCand := chatty
	persistingCand.CallsPerTrace = 12 // the candidate's numbers are the ones kept

	resolved, added, persisting := MatchFindings(
		[]detect.Finding{nplus1, chatty},
		[]detect.Finding{persistingCand, redundant, nplus1Elsewhere})
	if !reflect.DeepEqual(resolved, []detect.Finding{nplus1}) {
		t.Errorf("resolved = %+v, want the n-plus-one", resolved)
	}
	if !reflect.DeepEqual(added, []detect.Finding{redundant, nplus1Elsewhere}) {
		t.Errorf("new = %+v, want redundant-call and the other request's n-plus-one", added)
	}
	if !reflect.DeepEqual(persisting, []detect.Finding{persistingCand}) {
		t.Errorf("persisting = %+v, want the candidate's chatty-db", persisting)
	}

	resolved, added, persisting = MatchFindings(nil, nil)
	if resolved == nil || added == nil || persisting == nil {
		t.Error("empty sides must give empty, not nil, lists (JSON [] not null)")
	}
}

func TestMatchFindingsCountsDuplicates(t *testing.T) {
	// Two findings with the same key (e.g. under different parents): one
	// candidate finding matches one of them, the other is resolved.
	a := finding("n-plus-one", "s", "GET /a", "SELECT x")
	a2 := a
	a2.ParentOperation = "other parent"
	resolved, added, persisting := MatchFindings([]detect.Finding{a, a2}, []detect.Finding{a})
	if len(resolved) != 1 || len(added) != 0 || len(persisting) != 1 {
		t.Errorf("resolved %d new %d persisting %d, want 1 0 1", len(resolved), len(added), len(persisting))
	}
}

func samples(rng *rand.Rand, n int, scale float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = scale * (50 + rng.ExpFloat64()*10) // a floor and a right tail, like latencies
	}
	return out
}

func TestBootstrapReproducibleAndContainsTrueRatio(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	base := samples(rng, 200, 1)
	cand := samples(rng, 200, 3) // a clear 3× slowdown
	for _, q := range []float64{0.5, 0.95} {
		r1 := BootstrapRatio(base, cand, q, DefaultResamples, 42)
		r2 := BootstrapRatio(base, cand, q, DefaultResamples, 42)
		if r1 == nil || *r1 != *r2 {
			t.Fatalf("q=%v: same seed gave %+v and %+v", q, r1, r2)
		}
		if !(r1.Low <= 3 && 3 <= r1.High) {
			t.Errorf("q=%v: CI %+v does not contain the true ratio 3", q, *r1)
		}
		if !(r1.Low <= r1.Value && r1.Value <= r1.High) || r1.Low < 2 {
			t.Errorf("q=%v: CI %+v is not a tight interval around its value", q, *r1)
		}
	}
	if other := BootstrapRatio(base, cand, 0.95, DefaultResamples, 43); *other == *BootstrapRatio(base, cand, 0.95, DefaultResamples, 42) {
		t.Error("another seed gave the very same interval; is the seed used?")
	}
}

func TestBootstrapStraddlesOneForSameDistribution(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	base := samples(rng, 150, 1)
	cand := samples(rng, 150, 1)
	for _, q := range []float64{0.5, 0.95} {
		r := BootstrapRatio(base, cand, q, DefaultResamples, DefaultSeed)
		if !(r.Low < 1 && 1 < r.High) {
			t.Errorf("q=%v: CI %+v of two samples of one distribution does not straddle 1", q, *r)
		}
	}
}

func TestBootstrapEmptyOrZero(t *testing.T) {
	if BootstrapRatio(nil, []float64{1}, 0.95, 100, 1) != nil {
		t.Error("empty baseline must give no ratio")
	}
	if BootstrapRatio([]float64{0, 0}, []float64{1}, 0.95, 100, 1) != nil {
		t.Error("a zero baseline must give no ratio")
	}
}

func TestRegressionRule(t *testing.T) {
	sides := func(n int) (*Side, *Side) { return &Side{Traces: n}, &Side{Traces: n} }
	q := func(low, high float64) Request {
		b, c := sides(MinTracesForP95)
		return Request{Request: "svc GET /x", Baseline: b, Candidate: c, P95Ratio: &Ratio{Value: (low + high) / 2, Low: low, High: high}}
	}
	few := q(1.5, 2.5)
	few.Baseline.Traces = MinTracesForP95 - 1
	cases := []struct {
		name    string
		req     Request
		max     float64
		regress bool
	}{
		{"clearly slower", q(1.5, 2.5), 0.10, true},
		{"slower but within noise", q(0.9, 1.8), 0.10, false},
		{"lower bound within the allowance", q(1.08, 1.3), 0.10, false},
		{"lower bound past the allowance", q(1.12, 1.3), 0.10, true},
		{"a larger allowance", q(1.12, 1.3), 0.20, false},
		{"faster", q(0.3, 0.5), 0.10, false},
		{"one side only", Request{Request: "svc GET /y", Candidate: &Side{Traces: 3}}, 0.10, false},
		{"too few traces for a p95", few, 0.10, false},
	}
	for _, c := range cases {
		reason, bad := Regressed(c.req, c.max)
		if bad != c.regress {
			t.Errorf("%s: regressed = %v, want %v", c.name, bad, c.regress)
		}
		if bad && reason == "" {
			t.Errorf("%s: no reason given", c.name)
		}
	}
}

func input(findings []detect.Finding, durations map[string][]float64) Input {
	r := analyze.Report{Findings: findings}
	for n, d := range durations {
		r.Requests = append(r.Requests, analyze.RequestStats{Request: n, Traces: len(d), CallsPerTrace: 3, DBCallsPerTrace: 1})
	}
	return Input{Report: r, Durations: durations}
}

func TestCompareVerdict(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	fast := samples(rng, 100, 1)
	slow := samples(rng, 100, 3)
	same := samples(rng, 100, 1)
	nplus1 := finding("n-plus-one", "catalog", "catalog GET /a", "/prices/{id}")
	opt := Options{MaxP95Regression: 0.10, FailOnNew: true}

	// The fix: the finding is resolved, the request faster.
	r := Compare(input([]detect.Finding{nplus1}, map[string][]float64{"catalog GET /a": slow}),
		input(nil, map[string][]float64{"catalog GET /a": fast, "catalog GET /only-new": same}), opt)
	if !r.Verdict.Pass || len(r.Verdict.Reasons) != 0 {
		t.Errorf("fix: verdict %+v, want a pass", r.Verdict)
	}
	if len(r.Resolved) != 1 || len(r.New) != 0 {
		t.Errorf("fix: resolved %d new %d", len(r.Resolved), len(r.New))
	}
	if len(r.Requests) != 2 {
		t.Fatalf("fix: %d request types, want 2", len(r.Requests))
	}
	if o := r.Requests[1]; o.Request != "catalog GET /only-new" || o.Baseline != nil || o.Candidate == nil || o.P95Ratio != nil {
		t.Errorf("a request type of the candidate only: %+v", o)
	}
	if a := r.Requests[0]; a.P95Ratio == nil || a.P95Ratio.High >= 1 || a.Baseline.CallsPerRequest != 3 {
		t.Errorf("the faster request type: %+v", a)
	}

	// The reverse: a new finding and a p95 regression, two reasons.
	r = Compare(input(nil, map[string][]float64{"catalog GET /a": fast}),
		input([]detect.Finding{nplus1}, map[string][]float64{"catalog GET /a": slow}), opt)
	if r.Verdict.Pass || len(r.Verdict.Reasons) != 2 {
		t.Errorf("regression: verdict %+v, want a failure with 2 reasons", r.Verdict)
	}

	// --fail-on none: the new finding is listed but does not fail.
	opt.FailOnNew = false
	r = Compare(input(nil, map[string][]float64{"catalog GET /a": fast}),
		input([]detect.Finding{nplus1}, map[string][]float64{"catalog GET /a": same}), opt)
	if !r.Verdict.Pass || len(r.New) != 1 {
		t.Errorf("fail-on none: verdict %+v, new %d", r.Verdict, len(r.New))
	}

	// Reproducible end to end.
	a := Compare(input(nil, map[string][]float64{"x": fast}), input(nil, map[string][]float64{"x": slow}), opt)
	b := Compare(input(nil, map[string][]float64{"x": fast}), input(nil, map[string][]float64{"x": slow}), opt)
	if !reflect.DeepEqual(a, b) {
		t.Error("two runs of the same comparison differ")
	}
}
