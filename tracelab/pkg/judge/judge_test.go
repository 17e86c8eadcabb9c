package judge

import (
	"slices"
	"strings"
	"testing"

	"tracelab/internal/labtest"
	"tracelab/pkg/analyze"
	"tracelab/pkg/bootstrap"
	"tracelab/pkg/compare"
	"tracelab/pkg/detect"
	"tracelab/pkg/load"
	"tracelab/pkg/result"
	"tracelab/pkg/scenario"
)

func variant(name string, p50, calls float64, findings ...detect.Finding) result.VariantResult {
	return result.VariantResult{
		Variant:  name,
		Load:     load.Summary{Requests: 3},
		Metrics:  map[string]float64{"p50_ms": p50, "calls_per_request": calls, "spans_per_request": 2 * calls},
		Analysis: analyze.Report{Findings: findings},
	}
}

var nplus1 = detect.Finding{Detector: "n-plus-one", Service: "catalog", CallsPerTrace: 200, ShareOfParent: 0.95, ShareOfCriticalPath: 0.94}

func failed(checks []result.Check) []string {
	var out []string
	for _, c := range checks {
		if !c.OK {
			out = append(out, c.Name+": "+c.Detail)
		}
	}
	return out
}

func loadNplus1(t *testing.T) *scenario.Scenario {
	s, err := scenario.Load(labtest.Open(t, "../../.."), "nplus1")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func emptyBaseline() *scenario.Baseline {
	return &scenario.Baseline{Profiles: map[string]*scenario.ProfileBaseline{}}
}

func TestJudgePassesTheExpectedShape(t *testing.T) {
	checks := judge(loadNplus1(t), "smoke", []result.VariantResult{variant("baseline", 3000, 201, nplus1), variant("fixed", 100, 2)}, emptyBaseline())
	if f := failed(checks); len(f) != 0 {
		t.Fatalf("unexpected failures: %v", f)
	}
}

func TestJudgeFailsEachBrokenExpectation(t *testing.T) {
	weak := nplus1
	weak.ShareOfParent = 0.5
	cases := map[string][]result.VariantResult{
		"n-plus-one found":  {variant("baseline", 3000, 201), variant("fixed", 100, 2)},
		"too weak":          {variant("baseline", 3000, 201, weak), variant("fixed", 100, 2)},
		"fixed: no n-plus":  {variant("baseline", 3000, 201, nplus1), variant("fixed", 100, 2, nplus1)},
		"p50_ms(baseline)":  {variant("baseline", 3000, 201, nplus1), variant("fixed", 1000, 2)},
		"request succeeded": {variant("baseline", 3000, 201, nplus1), {Variant: "fixed", Load: load.Summary{Requests: 3, Failed: 0.34}, Metrics: map[string]float64{"p50_ms": 1}}},
	}
	for want, measured := range cases {
		f := failed(judge(loadNplus1(t), "smoke", measured, emptyBaseline()))
		if len(f) == 0 || !strings.Contains(strings.Join(f, "\n"), want) {
			t.Errorf("%s: got failures %v", want, f)
		}
	}
}

// A fix run alone is judged against the recorded baseline.
func TestJudgeRatioUsesTheRecordedBaseline(t *testing.T) {
	s := loadNplus1(t)
	base := emptyBaseline()
	base.Record("smoke", &result.Result{Scenario: "nplus1", Variants: []result.VariantResult{variant("baseline", 3000, 201, nplus1)}})
	checks := judge(s, "smoke", []result.VariantResult{variant("fixed", 100, 2)}, base)
	if f := failed(checks); len(f) != 0 {
		t.Fatalf("unexpected failures: %v", f)
	}
	if !strings.Contains(checks[len(checks)-1].Detail, "recorded") {
		t.Errorf("ratio should say it used the recorded baseline: %s", checks[len(checks)-1].Detail)
	}
	if f := failed(judge(s, "smoke", []result.VariantResult{variant("fixed", 200, 2)}, base)); len(f) == 0 {
		t.Error("a fix only 15× faster than the recorded baseline passed a 25× expectation")
	}
	if f := failed(judge(s, "full", []result.VariantResult{variant("fixed", 100, 2)}, base)); len(f) == 0 {
		t.Error("a ratio without any baseline measurement passed")
	}
}

// A baseline that silently stops reproducing the pathology must fail.
func TestJudgeCatchesDriftFromTheRecord(t *testing.T) {
	s := loadNplus1(t)
	base := emptyBaseline()
	base.Record("smoke", &result.Result{Scenario: "nplus1", Variants: []result.VariantResult{variant("baseline", 3000, 201, nplus1), variant("fixed", 100, 2)}})
	drifted := []result.VariantResult{variant("baseline", 3000, 101, nplus1), variant("fixed", 100, 2)}
	f := strings.Join(failed(judge(s, "smoke", drifted, base)), "\n")
	if !strings.Contains(f, "calls_per_request within 10%") {
		t.Errorf("calls per request halved but passed: %s", f)
	}
}

// judge judges as the runner does: the fixes compared with the baseline
// first.
func judge(s *scenario.Scenario, profile string, measured []result.VariantResult, base *scenario.Baseline) []result.Check {
	return Judge(s, profile, measured, CompareFixes(s, measured), base)
}

// The fix is held to `tracelab compare`'s verdict against the baseline: a
// finding the baseline lacked, or a slower request beyond noise, fails it.
func TestJudgeComparesTheFixWithTheBaseline(t *testing.T) {
	s := loadNplus1(t)
	request := "catalog GET /catalog/summary"
	timed := func(v result.VariantResult, ms ...float64) result.VariantResult {
		v.Analysis.Requests = []analyze.RequestStats{{Request: request, Traces: len(ms)}}
		v.Durations = map[string][]float64{request: ms}
		return v
	}
	// compare judges a p95 from compare.MinTracesForP95 traces a side on.
	spread := func(ms float64) []float64 {
		out := make([]float64, compare.MinTracesForP95)
		for i := range out {
			out[i] = ms * (0.95 + 0.1*float64(i)/float64(len(out)))
		}
		return out
	}
	base := timed(variant("baseline", 3000, 201, nplus1), spread(3000)...)
	fast := timed(variant("fixed", 100, 2), spread(100)...)
	if f := failed(judge(s, "smoke", []result.VariantResult{base, fast}, emptyBaseline())); len(f) != 0 {
		t.Fatalf("unexpected failures: %v", f)
	}
	checks := judge(s, "smoke", []result.VariantResult{base, fast}, emptyBaseline())
	if !slices.ContainsFunc(checks, func(c result.Check) bool {
		return strings.HasPrefix(c.Name, "fixed against baseline (tracelab compare)") && strings.Contains(c.Detail, "resolved: n-plus-one in catalog")
	}) {
		t.Errorf("no comparison check that names the resolved finding: %+v", checks)
	}

	redundant := detect.Finding{Detector: "redundant-call", Service: "catalog", Operation: "GET /prices"}
	slow := timed(variant("fixed", 100, 2, redundant), spread(6000)...)
	f := strings.Join(failed(judge(s, "smoke", []result.VariantResult{base, slow}, emptyBaseline())), "\n")
	for _, want := range []string{"new finding: redundant-call in catalog", "p95 of " + request + " regressed"} {
		if !strings.Contains(f, want) {
			t.Errorf("failures lack %q:\n%s", want, f)
		}
	}
}

func TestFixes(t *testing.T) {
	s := loadNplus1(t)
	if got := Fixes(s, []result.VariantResult{variant("baseline", 1, 1), variant("fixed", 1, 1)}); !slices.Equal(got, []string{"fixed"}) {
		t.Errorf("Fixes = %v, want [fixed]", got)
	}
	if got := CompareFixes(s, []result.VariantResult{variant("fixed", 1, 1)}); len(got) != 0 {
		t.Errorf("without a measured baseline: %v, want no comparisons", got)
	}
}

// A ratio whose point clears its minimum only by the luck of the run does
// not pass: the interval's lower bound must clear it.
func TestJudgeRatioNeedsTheIntervalsLowerBound(t *testing.T) {
	s := loadNplus1(t) // p50_ms(baseline) / p50_ms(fixed) >= 25
	withDurations := func(v result.VariantResult, ms ...float64) result.VariantResult {
		v.Samples = map[string]bootstrap.Sample{"p50_ms": bootstrap.NewQuantile(ms, 0.5)}
		return v
	}
	ratioCheck := func(checks []result.Check) result.Check {
		for _, c := range checks {
			if strings.HasPrefix(c.Name, "p50_ms(") {
				return c
			}
		}
		t.Fatal("no p50 ratio check")
		return result.Check{}
	}
	// Medians 3000 and 100 (30×), but the fix's requests spread from 10 to
	// 1000 ms: a resample's median often lands far above 100.
	noisy := ratioCheck(judge(s, "smoke", []result.VariantResult{
		withDurations(variant("baseline", 3000, 201, nplus1), 2900, 3000, 3100),
		withDurations(variant("fixed", 100, 2), 10, 20, 100, 900, 1000),
	}, emptyBaseline()))
	if noisy.OK || noisy.Ratio == nil || noisy.Ratio.Value < 25 || noisy.Ratio.Low >= 25 {
		t.Errorf("a 30× median with a wide interval passed, or had no interval: %+v", noisy)
	}
	steady := ratioCheck(judge(s, "smoke", []result.VariantResult{
		withDurations(variant("baseline", 3000, 201, nplus1), 2900, 3000, 3100, 3000, 2950),
		withDurations(variant("fixed", 100, 2), 95, 100, 105, 100, 98),
	}, emptyBaseline()))
	if !steady.OK || steady.Ratio.Low < 25 {
		t.Errorf("a steady 30× ratio failed: %+v", steady)
	}
}

// min_error_rate and max_error_rate bound the failed share from both sides,
// in place of "every request succeeded".
func TestJudgeErrorRateBounds(t *testing.T) {
	s := &scenario.Scenario{Expectations: scenario.Expectations{Variants: map[string]scenario.VariantExpectation{
		"baseline": {MinErrorRate: 0.1, MaxErrorRate: 0.5},
	}}}
	for failedShare, want := range map[float64]bool{0: false, 0.05: false, 0.1: true, 0.3: true, 0.6: false} {
		v := variant("baseline", 10, 1)
		v.Load.Failed = failedShare
		checks := judge(s, "smoke", []result.VariantResult{v}, emptyBaseline())
		if got := len(failed(checks)) == 0; got != want || len(checks) != 2 {
			t.Errorf("%.0f%% failed: pass %v, want %v; checks %+v", 100*failedShare, got, want, checks)
		}
	}
}
