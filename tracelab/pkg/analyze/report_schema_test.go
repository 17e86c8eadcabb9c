package analyze

import (
	"encoding/json"
	"reflect"
	"sort"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"tracelab/internal/corpustest"
	"tracelab/internal/schematest"
	"tracelab/pkg/detect"
)

func reportSchema(t *testing.T) *jsonschema.Schema {
	return schematest.Compile(t, "report.schema.json", map[string][]byte{"report.schema.json": ReportSchema})
}

// reportJSON is r as `analyze --format json` prints it, read back as
// generic JSON.
func reportJSON(t *testing.T, r Report) any {
	return schematest.Instance(t, r)
}

func corpusReport(t *testing.T, name string) Report {
	return Analyze(corpustest.Traces(t, name), detect.All())
}

// Cases chosen so that, together, they have a finding of every detector,
// background traces and a report without findings.
var schemaCases = []string{
	"petclinic-batch-off",         // chatty-db, n-plus-one, redundant-call
	"lab-antpath-baseline",        // dispatch-overhead
	"lab-eventloop-baseline",      // event-loop-blocking
	"lab-kafka-batching-baseline", // kafka-producer-contention
	"shape-startup-ddl",           // background
	"few-calls",                   // no findings
	"python-django-nplus1",        // n-plus-one-or-redundant
}

func TestReportSchemaValidatesCorpus(t *testing.T) {
	s := reportSchema(t)
	seen := map[string]bool{}
	background := false
	for _, name := range schemaCases {
		r := corpusReport(t, name)
		if err := s.Validate(reportJSON(t, r)); err != nil {
			t.Errorf("%s: the report does not validate: %v", name, err)
		}
		for _, f := range r.Findings {
			seen[f.Detector] = true
		}
		background = background || len(r.Background) > 0
	}
	for _, d := range detect.All() {
		if !seen[d.ID()] {
			t.Errorf("no case has a %s finding; add one to schemaCases", d.ID())
		}
	}
	if !background {
		t.Error("no case has background traces; add one to schemaCases")
	}
	if err := s.Validate(reportJSON(t, Analyze(nil, detect.All()))); err != nil {
		t.Errorf("the empty report does not validate: %v", err)
	}
}

func TestReportSchemaDetectorEnum(t *testing.T) {
	var doc struct {
		Defs struct {
			Finding struct {
				Properties struct {
					Detector struct {
						Enum []string `json:"enum"`
					} `json:"detector"`
				} `json:"properties"`
			} `json:"finding"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(ReportSchema, &doc); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range detect.All() {
		ids = append(ids, d.ID())
	}
	enum := append([]string(nil), doc.Defs.Finding.Properties.Detector.Enum...)
	sort.Strings(enum)
	if !reflect.DeepEqual(enum, ids) {
		t.Errorf("report.schema.json's detector enum is %v; the registered detectors are %v", enum, ids)
	}
}

// Reports the schema must refuse: each breaks a real report one way.
func TestReportSchemaRejects(t *testing.T) {
	s := reportSchema(t)
	base := corpusReport(t, "petclinic-batch-off")
	if len(base.Findings) == 0 || len(base.Requests) == 0 {
		t.Fatal("petclinic-batch-off has no findings or requests")
	}
	generic := func() map[string]any {
		m, ok := reportJSON(t, base).(map[string]any)
		if !ok {
			t.Fatal("report is not an object")
		}
		return m
	}
	first := func(m map[string]any, key string) map[string]any {
		return m[key].([]any)[0].(map[string]any)
	}
	for name, breakIt := range map[string]func(m map[string]any){
		"no findings key":          func(m map[string]any) { delete(m, "findings") },
		"no traces key":            func(m map[string]any) { delete(m, "traces") },
		"finding without detector": func(m map[string]any) { delete(first(m, "findings"), "detector") },
		"finding without summary":  func(m map[string]any) { delete(first(m, "findings"), "summary") },
		"unknown detector":         func(m map[string]any) { first(m, "findings")["detector"] = "n-plus-two" },
		"share above 1":            func(m map[string]any) { first(m, "findings")["share_of_critical_path"] = json.Number("1.5") },
		"evidence not an object":   func(m map[string]any) { first(m, "findings")["evidence"] = "trace 1" },
		"request without path":     func(m map[string]any) { delete(first(m, "requests"), "critical_path") },
		"unknown top-level key":    func(m map[string]any) { m["verdict"] = "ok" },
		"findings null":            func(m map[string]any) { m["findings"] = nil },
	} {
		m := generic()
		breakIt(m)
		if s.Validate(m) == nil {
			t.Errorf("%s: validates", name)
		}
	}
}
