package dashboards

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tracelab/pkg/analyze"
	"tracelab/pkg/scenario"
	"tracelab/pkg/trace"
)

func root(t *testing.T) string {
	r, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The dashboards in the tree are well formed, and every scenario in the
// tree has a dashboard of its own (a new scenario must bring one).
func TestDashboardsInTheTree(t *testing.T) {
	ds, err := Load(root(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) < 6 {
		t.Errorf("%d dashboards, want at least 6 (the overview and one per scenario)", len(ds))
	}
	for _, e := range Validate(ds) {
		t.Error(e)
	}
	have := map[string]bool{}
	for _, d := range ds {
		have[d.Scenario()] = true
		var traceql, exemplars int
		for _, q := range d.Queries() {
			if q.Lang == "traceql" {
				traceql++
			}
			if q.Exemplar {
				exemplars++
			}
		}
		if traceql == 0 || exemplars == 0 {
			t.Errorf("%s: %d TraceQL queries and %d panels with exemplars; want both", d.File, traceql, exemplars)
		}
	}
	if !have[""] {
		t.Error("no overview dashboard")
	}
	guides, err := GuideQueries(root(t))
	if err != nil {
		t.Fatal(err)
	}
	guided := map[string]bool{}
	for _, q := range guides {
		guided[q.Scenario] = true
	}
	for _, s := range scenario.List(root(t)) {
		if !have[s] {
			t.Errorf("scenario %s has no dashboard (a dashboards/*.json tagged %q)", s, s)
		}
		if !guided[s] {
			t.Errorf("scenarios/%s/README.md has no ```traceql block: its guide must say which TraceQL finds the pathology", s)
		}
	}
}

func TestValidateFindsBrokenDashboards(t *testing.T) {
	d := &Dashboard{File: "x.json", UID: "x", Title: "x", SchemaVersion: 39, Tags: []string{"tracelab"}}
	d.Panels = []Panel{
		{ID: 1, Type: "timeseries", Title: "a", GridPos: GridPos{H: 8, W: 12}, Targets: []Target{{RefID: "A", Datasource: &Datasource{Type: "prometheus", UID: "${nope}"}, Expr: "up"}}},
		{ID: 1, Type: "timeseries", Title: "b", GridPos: GridPos{H: 8, W: 20, X: 6}, Targets: []Target{{RefID: "A", Datasource: &Datasource{Type: "loki", UID: "${nope}"}}}},
	}
	got := strings.Join(Validate([]*Dashboard{d}), "\n")
	for _, want := range []string{"id 1 used twice", "outside the 24-column grid", "overlaps", "not a datasource variable", `type "loki"`} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
}

func TestExpandForTheLocalPrometheus(t *testing.T) {
	got := Expand(`sum(rate(x{lab_variant=~"$variant"}[$__rate_interval])) / increase(y[$__range])`, "30s", "10m")
	if got != `sum(rate(x{lab_variant=~".*"}[30s])) / increase(y[10m])` {
		t.Error(got)
	}
	if !NeedsTempo("rate(traces_service_graph_request_total[1m])") || NeedsTempo("traces_span_metrics_calls_total") {
		t.Error("NeedsTempo")
	}
}

func labTraces(batch bool) []*trace.Trace {
	var spans []*trace.Span
	for i := 0; i < 3; i++ {
		spans = append(spans, analyze.LabTrace(analyze.LabOptions{Items: 150, Batch: batch, Start: time.Unix(1700000000+int64(i)*10, 0), Seed: int64(i)})...)
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
		q, err := ParseTraceQL(c.q)
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
	q, _ := ParseTraceQL(`{ resource.service.name = "catalog" && span.db.system = "postgresql" }`)
	if why := q.Explain(base); !strings.Contains(why, `span.db.system = "postgresql"`) {
		t.Errorf("Explain: %s", why)
	}
	for _, bad := range []string{`{ span.x = 1 } | avg(duration) > 2`, `{ span.x ~ 1 }`, `span.x = 1`} {
		if _, err := ParseTraceQL(bad); err == nil {
			t.Errorf("%s: parsed, want an error", bad)
		}
	}
}

// Every TraceQL query in the dashboards and the guides is in the subset
// tracelab can evaluate on real traces (the e2e smoke runs do).
func TestEveryTraceQLIsInTheEvaluatedSubset(t *testing.T) {
	ds, err := Load(root(t))
	if err != nil {
		t.Fatal(err)
	}
	qs, err := GuideQueries(root(t))
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
		if _, err := ParseTraceQL(q.Text); err != nil {
			t.Errorf("%s: %v", q.Where, err)
		}
	}
	if n == 0 {
		t.Error("no TraceQL found")
	}
}
