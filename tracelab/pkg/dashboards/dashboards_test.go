package dashboards

import (
	"strings"
	"testing"

	"tracelab/internal/labtest"
	"tracelab/internal/repotest"
	"tracelab/pkg/scenario"
)

// The dashboards in the tree are well formed, and every scenario in the
// tree has a dashboard of its own (a new scenario must bring one).
func TestDashboardsInTheTree(t *testing.T) {
	ds, err := Load(repotest.Root(t))
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
	guides, err := GuideQueries(repotest.Root(t))
	if err != nil {
		t.Fatal(err)
	}
	guided := map[string]bool{}
	for _, q := range guides {
		guided[q.Scenario] = true
	}
	for _, s := range scenario.List(labtest.Lab(t)) {
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
