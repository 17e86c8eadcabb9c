package compare

import (
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"tracelab/internal/corpustest"
	"tracelab/internal/schematest"
	"tracelab/pkg/analyze"
	"tracelab/pkg/detect"
)

// resultSchema compiles compare.schema.json with the report schema its
// findings refer to, under the names of their directories.
func resultSchema(t *testing.T) *jsonschema.Schema {
	return schematest.Compile(t, "compare/compare.schema.json", map[string][]byte{
		"compare/compare.schema.json": ResultSchema,
		"analyze/report.schema.json":  analyze.ReportSchema,
	})
}

func corpusInput(t *testing.T, name string) Input {
	return NewInput(corpustest.Traces(t, name), detect.All())
}

// Comparisons chosen so that, together, they have resolved, new and
// persisting findings, a failing verdict, and request types on one side
// only (null sides and ratios).
func TestResultSchemaValidatesComparisons(t *testing.T) {
	s := resultSchema(t)
	var resolved, added, persisting, failed, oneSided bool
	for _, pair := range [][2]string{
		{"lab-nplus1-baseline", "lab-nplus1-fixed"},
		{"lab-nplus1-fixed", "lab-nplus1-baseline"},
		{"petclinic-batch-off", "petclinic-batch-on"},
		{"lab-chatty-db-baseline", "lab-nplus1-fixed"},
	} {
		r := Compare(corpusInput(t, pair[0]), corpusInput(t, pair[1]), Options{MaxP95Regression: 0.10, FailOnNew: true})
		if err := s.Validate(schematest.Instance(t, r)); err != nil {
			t.Errorf("%s -> %s: does not validate: %v", pair[0], pair[1], err)
		}
		resolved = resolved || len(r.Resolved) > 0
		added = added || len(r.New) > 0
		persisting = persisting || len(r.Persisting) > 0
		failed = failed || !r.Verdict.Pass
		for _, q := range r.Requests {
			oneSided = oneSided || q.Baseline == nil || q.Candidate == nil
		}
	}
	if !resolved || !added || !persisting || !failed || !oneSided {
		t.Errorf("the cases lack a kind of output: resolved %v, new %v, persisting %v, failed %v, one-sided request %v",
			resolved, added, persisting, failed, oneSided)
	}
}

// Results the schema must refuse: each breaks a real one one way.
func TestResultSchemaRejects(t *testing.T) {
	s := resultSchema(t)
	r := Compare(corpusInput(t, "lab-nplus1-fixed"), corpusInput(t, "lab-nplus1-baseline"), Options{FailOnNew: true})
	for name, breakIt := range map[string]func(m map[string]any){
		"no verdict":  func(m map[string]any) { delete(m, "verdict") },
		"new is null": func(m map[string]any) { m["new"] = nil },
		"new finding, no detector": func(m map[string]any) {
			delete(m["new"].([]any)[0].(map[string]any), "detector")
		},
		"ratio without interval": func(m map[string]any) {
			delete(m["requests"].([]any)[0].(map[string]any)["p95_ratio"].(map[string]any), "low")
		},
		"unknown key": func(m map[string]any) { m["regressions"] = []any{} },
	} {
		m := schematest.Instance(t, r).(map[string]any)
		breakIt(m)
		if s.Validate(m) == nil {
			t.Errorf("%s: validates", name)
		}
	}
}
