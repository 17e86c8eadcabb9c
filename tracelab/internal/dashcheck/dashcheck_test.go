package dashcheck

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"tracelab/internal/tracegen"
	"tracelab/pkg/dashboards"
	"tracelab/pkg/otlp"
	"tracelab/pkg/prom"
	"tracelab/pkg/trace"
	"tracelab/pkg/traceql"
)

// labRoot is the checkout, from this package's folder.
const labRoot = "../../.."

func labTraces(batch bool) []*trace.Trace {
	var spans []*trace.Span
	for i := 0; i < 3; i++ {
		spans = append(spans, tracegen.LabTrace(tracegen.LabOptions{Items: 150, Batch: batch, Start: time.Unix(1700000000+int64(i)*10, 0), Seed: int64(i)})...)
	}
	return trace.Group(spans)
}

func TestTraceQLOnLabTraces(t *testing.T) {
	base, fixed := labTraces(false), labTraces(true)
	cases := []struct {
		q           string
		base, fixed bool
	}{
		{`{ resource.service.name = "catalog" && kind = client && span.url.full =~ ".*/prices/[0-9]+" } | count() > 100`, true, false},
		{`{ resource.service.name = "catalog" && kind = client && span.url.full =~ ".*/prices/batch" }`, false, true},
		{`{ resource.service.name = "catalog" && kind = server } > { kind = client }`, true, true},
		{`{ resource.service.name = "catalog" && kind = server } > { resource.service.name = "pricing" }`, false, false},
		{`{ resource.service.name = "catalog" && kind = server } >> { resource.service.name = "pricing" && kind = server }`, true, true},
		{`{ kind = server && traceDuration > 1s }`, true, false},
		{`{ name = "nope" || resource.service.name = "pricing" }`, true, true},
	}
	for _, c := range cases {
		q, err := traceql.Parse(c.q)
		if err != nil {
			t.Fatalf("%s: %v", c.q, err)
		}
		if got := q.Match(base[0]); got != c.base {
			t.Errorf("%s on the N+1: %v, want %v", c.q, got, c.base)
		}
		if got := q.Match(fixed[0]); got != c.fixed {
			t.Errorf("%s on the batch: %v, want %v", c.q, got, c.fixed)
		}
	}
	q, _ := traceql.Parse(`{ resource.service.name = "catalog" && span.db.system = "postgresql" }`)
	if why := q.Explain(base); !strings.Contains(why, `span.db.system = "postgresql"`) {
		t.Errorf("Explain: %s", why)
	}
	for _, bad := range []string{`{ span.x = 1 } | avg(duration) > 2`, `{ span.x ~ 1 }`, `span.x = 1`,
		// Tempo's type validation, which the grammar check does not do.
		`{ kind = "server" }`, `{ kind > server }`, `{ status = failed }`, `{ duration > "2ms" }`,
		`{ traceDuration > 500 }`, `{ name = GET }`, `{ span.url.full =~ prices }`, `{ span.a =~ "(" }`} {
		if _, err := traceql.Parse(bad); err == nil {
			t.Errorf("%s: parsed, want an error", bad)
		}
	}
}

// Every TraceQL query in the dashboards and the guides is in the subset
// tracelab can evaluate on real traces (the e2e smoke runs do).
func TestEveryTraceQLIsInTheEvaluatedSubset(t *testing.T) {
	ds, err := dashboards.Load(labRoot)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := dashboards.GuideQueries(labRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		qs = append(qs, d.Queries()...)
	}
	n := 0
	for _, q := range qs {
		if q.Lang != "traceql" {
			continue
		}
		n++
		if _, err := traceql.Parse(q.Text); err != nil {
			t.Errorf("%s: %v", q.Where, err)
		}
	}
	if n == 0 {
		t.Error("no TraceQL found")
	}
}

func corpusTraces(t *testing.T, dir string) []*trace.Trace {
	t.Helper()
	traces, err := otlp.ReadFile(filepath.Join(labRoot, "tracelab", "testdata", "corpus", dir, "traces.json"))
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	return traces
}

// Each scenario dashboard's pathology query (antpath has none: see roles)
// selects the recorded baseline run's traces and none of the recorded
// fix's (a fix query the reverse), and every other query selects some trace
// of the two: the check the e2e smoke runs make on fresh traces, here on the
// runs recorded in the corpus. Every query roles names must exist, so that
// a renamed panel does not silently lose its check.
func TestDashboardQueriesTellBaselineFromFix(t *testing.T) {
	ds, err := dashboards.Load(labRoot)
	if err != nil {
		t.Fatal(err)
	}
	pathologies := map[string]int{}
	seen := map[string]bool{}
	for _, d := range ds {
		name := d.Scenario()
		if name == "" {
			continue
		}
		baseline, fixed := corpusTraces(t, "lab-"+name+"-baseline"), corpusTraces(t, "lab-"+name+"-fixed")
		for _, q := range d.Queries() {
			if q.Lang != "traceql" {
				continue
			}
			seen[q.Where] = true
			p, err := traceql.Parse(q.Text)
			if err != nil {
				t.Fatalf("%s: %v", q.Where, err)
			}
			if RoleOf(q) == Pathology {
				pathologies[name]++
			}
			if err := Selects(p, RoleOf(q), baseline, fixed); err != nil {
				t.Errorf("%s: %v", q.Where, err)
			}
		}
		if name != "antpath" && pathologies[name] == 0 {
			t.Errorf("%s has no pathology query (dashcheck.roles)", d.File)
		}
	}
	for where := range roles {
		if !seen[where] {
			t.Errorf("roles names %q, which is no TraceQL query of a scenario dashboard", where)
		}
	}
}

// The check fails where it should: a query that selects every trace is no
// pathology query, and one that selects none finds nothing.
func TestSelectsFailsAQueryThatCannotTell(t *testing.T) {
	baseline, fixed := labTraces(false), labTraces(true)
	everything, _ := traceql.Parse(`{ resource.service.name = "catalog" && kind = server }`)
	if err := Selects(everything, Pathology, baseline, fixed); err == nil || !strings.Contains(err.Error(), "fixed traces too") {
		t.Errorf("a query selecting both variants passed as a pathology query: %v", err)
	}
	nothing, _ := traceql.Parse(`{ resource.service.name = "nope" }`)
	if err := Selects(nothing, Pathology, baseline, fixed); err == nil || !strings.Contains(err.Error(), "none of the 3 baseline traces") {
		t.Errorf("a query selecting nothing passed: %v", err)
	}
	if err := Selects(nothing, Browse, baseline, fixed); err == nil {
		t.Error("a browse query selecting nothing passed")
	}
	batch, _ := traceql.Parse(`{ resource.service.name = "catalog" && kind = client && span.url.full =~ ".*/prices/batch" }`)
	if err := Selects(batch, Fix, baseline, fixed); err != nil {
		t.Errorf("the batch call as a fix query: %v", err)
	}
	if err := Selects(batch, Pathology, baseline, fixed); err == nil {
		t.Error("the fix's query passed as a pathology query")
	}
	if err := Selects(everything, Pathology, baseline, nil); err == nil || !strings.Contains(err.Error(), "both variants") {
		t.Errorf("a pathology query checked without fixed traces passed: %v", err)
	}
}

// One stray fixed trace among many does not fail a pathology query; the
// same trace among few does, because then the fix is selected nearly as
// often as the pathology.
func TestSelectsToleratesARareFixedTrace(t *testing.T) {
	baseline := labTraces(false)
	pathology, _ := traceql.Parse(`{ resource.service.name = "catalog" && kind = client && span.url.full =~ ".*/prices/[0-9]+" } | count() > 100`)
	many := append(labTraces(true), labTraces(true)...)
	for len(many) < 40 {
		many = append(many, labTraces(true)...)
	}
	stray := append([]*trace.Trace{baseline[0]}, many...)
	if err := Selects(pathology, Pathology, baseline, stray); err != nil {
		t.Errorf("1 stray of %d fixed traces failed the query: %v", len(stray), err)
	}
	few := append([]*trace.Trace{baseline[0]}, labTraces(true)...)
	if err := Selects(pathology, Pathology, baseline, few); err == nil || !strings.Contains(err.Error(), "less than 10 times") {
		t.Errorf("1 stray of %d fixed traces passed: %v", len(few), err)
	}
}

// Prometheus answers exemplars series by series; the last of the answer is
// not the newest when an earlier series saw a request later.
func TestExemplarTraceIDsOldestFirst(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"status":"success","data":[
			{"seriesLabels":{"route":"/api/orders"},"exemplars":[
				{"labels":{"trace_id":"a"},"timestamp":100.5},{"labels":{"trace_id":"c"},"timestamp":300}]},
			{"seriesLabels":{"route":"/api/rare"},"exemplars":[
				{"labels":{"trace_id":"b"},"timestamp":200},{"labels":{"span_id":"no-trace"},"timestamp":400}]}]}`)
	}))
	defer srv.Close()
	ids, err := ExemplarTraceIDs(context.Background(), prom.New(srv.URL), "x", time.Unix(0, 0), time.Unix(500, 0))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "c"}; !slices.Equal(ids, want) {
		t.Errorf("ids = %v, want %v", ids, want)
	}
}
