package sarif

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"tracelab/internal/corpustest"
	"tracelab/internal/schematest"
	"tracelab/pkg/analyze"
	"tracelab/pkg/compare"
	"tracelab/pkg/detect"
)

// schema compiles the OASIS SARIF 2.1.0 schema in testdata (see
// testdata/README.md for where it comes from).
func schema(t *testing.T) *jsonschema.Schema {
	raw, err := os.ReadFile("testdata/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	return schematest.Compile(t, "sarif-schema-2.1.0.json", map[string][]byte{"sarif-schema-2.1.0.json": raw})
}

func analyzeCase(t *testing.T, name string) analyze.Report {
	return analyze.Analyze(corpustest.Traces(t, name), detect.All())
}

// encode writes r as SARIF and reads it back as generic JSON, as a
// validator or a CI system sees it.
func encode(t *testing.T, r analyze.Report) (any, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, r, IDs(detect.All()), nil); err != nil {
		t.Fatal(err)
	}
	return schematest.Parse(t, buf.Bytes()), buf.Bytes()
}

func TestCorpusValidates(t *testing.T) {
	s := schema(t)
	for _, name := range []string{"petclinic-batch-off", "lab-nplus1-baseline", "hotrod-dispatch"} {
		t.Run(name, func(t *testing.T) {
			r := analyzeCase(t, name)
			if len(r.Findings) == 0 {
				t.Fatalf("%s: no findings; the test needs a case with some", name)
			}
			inst, raw := encode(t, r)
			if err := s.Validate(inst); err != nil {
				t.Fatalf("SARIF does not validate: %v", err)
			}
			var log Log
			if err := json.Unmarshal(raw, &log); err != nil {
				t.Fatal(err)
			}
			run := log.Runs[0]
			if got, want := len(run.Results), len(r.Findings); got != want {
				t.Fatalf("%d results for %d findings", got, want)
			}
			for i, res := range run.Results {
				f := r.Findings[i]
				if res.RuleID != f.Detector || run.Tool.Driver.Rules[res.RuleIndex].ID != f.Detector {
					t.Errorf("result %d: ruleId %q, rule %q; want %q", i, res.RuleID, run.Tool.Driver.Rules[res.RuleIndex].ID, f.Detector)
				}
				if res.Message.Text != f.Summary {
					t.Errorf("result %d: message %q, want the summary %q", i, res.Message.Text, f.Summary)
				}
				if res.PartialFingerprints[FingerprintKey] != Fingerprint(f) {
					t.Errorf("result %d: fingerprint %v", i, res.PartialFingerprints)
				}
				if res.Properties["share_of_critical_path"] != f.ShareOfCriticalPath {
					t.Errorf("result %d: share_of_critical_path %v, want %v", i, res.Properties["share_of_critical_path"], f.ShareOfCriticalPath)
				}
				if id, ok := f.Evidence["example_trace_id"]; ok && res.Properties["example_trace_id"] != id {
					t.Errorf("result %d: example_trace_id %v, want %v", i, res.Properties["example_trace_id"], id)
				}
				// The location, and the chain of parents in the run's table,
				// lead from the operation to the service.
				l := res.Locations[0].LogicalLocations[0]
				want := f.Service + " " + f.Operation
				if f.Request != "" {
					want = f.Service + " " + f.Request + " " + f.Operation
				}
				if l.FullyQualifiedName != want || l.Kind != "member" || l.Index == nil {
					t.Fatalf("result %d: location %+v, want member %q with an index", i, l, want)
				}
				top := run.LogicalLocations[*l.Index]
				for top.ParentIndex != nil {
					top = run.LogicalLocations[*top.ParentIndex]
				}
				if top.Kind != "module" || top.Name != f.Service {
					t.Errorf("result %d: top location %+v, want module %q", i, top, f.Service)
				}
			}
		})
	}
}

func TestEmptyReportValidates(t *testing.T) {
	r := analyze.Analyze(nil, detect.All())
	inst, raw := encode(t, r)
	if err := schema(t).Validate(inst); err != nil {
		t.Fatalf("SARIF of an empty report does not validate: %v\n%s", err, raw)
	}
	var log Log
	if err := json.Unmarshal(raw, &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Runs) != 1 || log.Runs[0].Results == nil || len(log.Runs[0].Results) != 0 {
		t.Fatalf("want one run with an empty results list, got %s", raw)
	}
}

// The schema must be strict enough to catch a broken log, or the tests
// above prove nothing.
func TestSchemaRejects(t *testing.T) {
	s := schema(t)
	for name, doc := range map[string]string{
		"no runs":         `{"version":"2.1.0"}`,
		"wrong version":   `{"version":"2.0.0","runs":[]}`,
		"bad level":       `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"tracelab"}},"results":[{"ruleId":"x","level":"fatal","message":{"text":"m"}}]}]}`,
		"result, no text": `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"tracelab"}},"results":[{"ruleId":"x","message":{}}]}]}`,
	} {
		if s.Validate(schematest.Parse(t, []byte(doc))) == nil {
			t.Errorf("%s: validates", name)
		}
	}
}

func TestEveryDetectorHasARule(t *testing.T) {
	ids := IDs(detect.All())
	if len(ids) == 0 {
		t.Fatal("no detectors registered")
	}
	log := FromReport(analyze.Report{}, ids, nil)
	rules := log.Runs[0].Tool.Driver.Rules
	if len(rules) != len(ids) {
		t.Fatalf("%d rules for %d detectors", len(rules), len(ids))
	}
	for i, id := range ids {
		if rules[i].ID != id {
			t.Errorf("rule %d is %q, want %q", i, rules[i].ID, id)
		}
		if _, described := ruleText[id]; !described {
			t.Errorf("detector %q has no rule text in sarif.ruleText", id)
		}
	}
}

func TestLevelAndFingerprint(t *testing.T) {
	f := detect.Finding{Detector: "n-plus-one", Service: "s", Request: "GET /a", Operation: "SELECT x", ShareOfCriticalPath: 0.49, TracesAffected: 3}
	if Level(f) != "warning" {
		t.Errorf("share 0.49: level %q, want warning", Level(f))
	}
	g := f
	g.ShareOfCriticalPath, g.TracesAffected, g.CallsPerTrace, g.Summary = 0.5, 9, 12, "other words"
	if Level(g) != "error" {
		t.Errorf("share 0.5: level %q, want error", Level(g))
	}
	if Fingerprint(f) != Fingerprint(g) {
		t.Error("the fingerprint changes with the numbers; it must not")
	}
	for _, h := range []detect.Finding{
		{Detector: "chatty-db", Service: f.Service, Request: f.Request, Operation: f.Operation},
		{Detector: f.Detector, Service: "t", Request: f.Request, Operation: f.Operation},
		{Detector: f.Detector, Service: f.Service, Request: "GET /b", Operation: f.Operation},
		{Detector: f.Detector, Service: f.Service, Request: f.Request, Operation: "SELECT y"},
		// fields run together must not collide
		{Detector: f.Detector, Service: "s GET", Request: "/a", Operation: f.Operation},
	} {
		if Fingerprint(h) == Fingerprint(f) {
			t.Errorf("%+v has the fingerprint of %+v", h, f)
		}
	}
}

func compareCases(t *testing.T, base, cand string) compare.Result {
	input := func(name string) compare.Input { return compare.NewInput(corpustest.Traces(t, name), detect.All()) }
	return compare.Compare(input(base), input(cand), compare.DefaultOptions())
}

// A comparison's SARIF validates, and says for each finding whether it is
// new, unchanged or absent, and which request type regressed.
func TestComparisonValidates(t *testing.T) {
	s := schema(t)
	for _, tc := range []struct {
		base, cand  string
		states      map[string]int // baselineState -> results
		regressions int
	}{
		{"lab-nplus1-baseline", "lab-nplus1-fixed", map[string]int{"absent": 1}, 0},
		{"lab-chatty-db-fixed", "lab-chatty-db-baseline", map[string]int{"new": 1}, 1},
		{"petclinic-batch-off", "petclinic-batch-off", nil, 0},
	} {
		t.Run(tc.base+"->"+tc.cand, func(t *testing.T) {
			c := compareCases(t, tc.base, tc.cand)
			var buf bytes.Buffer
			if err := WriteComparison(&buf, c, IDs(detect.All()), 0.10, nil); err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(schematest.Parse(t, buf.Bytes())); err != nil {
				t.Fatalf("SARIF does not validate: %v", err)
			}
			var log Log
			if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
				t.Fatal(err)
			}
			states, regressions := map[string]int{}, 0
			for _, r := range log.Runs[0].Results {
				if r.RuleID == RegressionRule {
					regressions++
					if r.Level != "error" || r.BaselineState != "" {
						t.Errorf("regression result %+v", r)
					}
					continue
				}
				states[r.BaselineState]++
				if (r.BaselineState == "absent") != (r.Level == "none") {
					t.Errorf("%s result at level %s", r.BaselineState, r.Level)
				}
			}
			want := tc.states
			if want == nil { // the same traces on both sides: everything persists
				want = map[string]int{"unchanged": len(c.Persisting)}
				if len(c.Persisting) == 0 {
					t.Fatal("the case has no findings")
				}
			}
			if !reflect.DeepEqual(states, want) || regressions != tc.regressions {
				t.Errorf("baseline states %v, %d regressions; want %v, %d", states, regressions, want, tc.regressions)
			}
		})
	}
}
