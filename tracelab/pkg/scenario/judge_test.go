package scenario

import (
	"strings"
	"testing"

	"tracelab/pkg/analyze"
	"tracelab/pkg/detect"
	"tracelab/pkg/k6"
)

func variant(name string, p50, calls float64, findings ...detect.Finding) VariantResult {
	return VariantResult{
		Variant:  name,
		Load:     k6.Summary{Requests: 3},
		Metrics:  map[string]float64{"p50_ms": p50, "calls_per_request": calls, "spans_per_request": 2 * calls},
		Analysis: analyze.Report{Findings: findings},
	}
}

var nplus1 = detect.Finding{Detector: "n-plus-one", Service: "catalog", CallsPerTrace: 200, ShareOfParent: 0.95, ShareOfCriticalPath: 0.94}

func failed(checks []Check) []string {
	var out []string
	for _, c := range checks {
		if !c.OK {
			out = append(out, c.Name+": "+c.Detail)
		}
	}
	return out
}

func loadNplus1(t *testing.T) *Scenario {
	s, err := Parse([]byte(nplus1YAML(t)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func emptyBaseline() *Baseline { return &Baseline{Profiles: map[string]*ProfileBaseline{}} }

func TestJudgePassesTheExpectedShape(t *testing.T) {
	checks := Judge(loadNplus1(t), "smoke", []VariantResult{variant("baseline", 3000, 201, nplus1), variant("fixed", 100, 2)}, emptyBaseline())
	if f := failed(checks); len(f) != 0 {
		t.Fatalf("unexpected failures: %v", f)
	}
}

func TestJudgeFailsEachBrokenExpectation(t *testing.T) {
	weak := nplus1
	weak.ShareOfParent = 0.5
	cases := map[string][]VariantResult{
		"n-plus-one found":  {variant("baseline", 3000, 201), variant("fixed", 100, 2)},
		"too weak":          {variant("baseline", 3000, 201, weak), variant("fixed", 100, 2)},
		"fixed: no n-plus":  {variant("baseline", 3000, 201, nplus1), variant("fixed", 100, 2, nplus1)},
		"p50_ms(baseline)":  {variant("baseline", 3000, 201, nplus1), variant("fixed", 1000, 2)},
		"request succeeded": {variant("baseline", 3000, 201, nplus1), {Variant: "fixed", Load: k6.Summary{Requests: 3, Failed: 0.34}, Metrics: map[string]float64{"p50_ms": 1}}},
	}
	for want, measured := range cases {
		f := failed(Judge(loadNplus1(t), "smoke", measured, emptyBaseline()))
		if len(f) == 0 || !strings.Contains(strings.Join(f, "\n"), want) {
			t.Errorf("%s: got failures %v", want, f)
		}
	}
}

// A fix run alone is judged against the recorded baseline.
func TestJudgeRatioUsesTheRecordedBaseline(t *testing.T) {
	s := loadNplus1(t)
	base := emptyBaseline()
	base.Record("smoke", &Result{Scenario: "nplus1", Variants: []VariantResult{variant("baseline", 3000, 201, nplus1)}})
	checks := Judge(s, "smoke", []VariantResult{variant("fixed", 100, 2)}, base)
	if f := failed(checks); len(f) != 0 {
		t.Fatalf("unexpected failures: %v", f)
	}
	if !strings.Contains(checks[len(checks)-1].Detail, "recorded") {
		t.Errorf("ratio should say it used the recorded baseline: %s", checks[len(checks)-1].Detail)
	}
	if f := failed(Judge(s, "smoke", []VariantResult{variant("fixed", 200, 2)}, base)); len(f) == 0 {
		t.Error("a fix only 15× faster than the recorded baseline passed a 25× expectation")
	}
	if f := failed(Judge(s, "full", []VariantResult{variant("fixed", 100, 2)}, base)); len(f) == 0 {
		t.Error("a ratio without any baseline measurement passed")
	}
}

// A baseline that silently stops reproducing the pathology must fail.
func TestJudgeCatchesDriftFromTheRecord(t *testing.T) {
	s := loadNplus1(t)
	base := emptyBaseline()
	base.Record("smoke", &Result{Scenario: "nplus1", Variants: []VariantResult{variant("baseline", 3000, 201, nplus1), variant("fixed", 100, 2)}})
	drifted := []VariantResult{variant("baseline", 3000, 101, nplus1), variant("fixed", 100, 2)}
	f := strings.Join(failed(Judge(s, "smoke", drifted, base)), "\n")
	if !strings.Contains(f, "calls_per_request within 10%") {
		t.Errorf("calls per request halved but passed: %s", f)
	}
}
