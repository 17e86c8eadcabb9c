//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"tracelab/internal/dashcheck"
	"tracelab/pkg/dashboards"
	"tracelab/pkg/prom"
	"tracelab/pkg/result"
	"tracelab/pkg/trace"
	"tracelab/pkg/traceql"
)

// checkDashboards proves a scenario's dashboard, and the overview, against
// the stack that just ran the scenario:
//   - every PromQL query returns numbers from the local Prometheus over the
//     run (except the service graph's, which only Tempo makes);
//   - the exemplars of the latency panels name traces Jaeger holds;
//   - each pathology query of the dashboard selects baseline traces of the
//     run and no fixed one, a fix query the reverse (dashcheck.roles), and
//     every other TraceQL query of the dashboard and of the scenario's
//     guide selects at least one of the run's traces (the overview's are
//     checked in the nplus1 run, whose requests are the slow ones they
//     look for).
func checkDashboards(t *testing.T, name string, res result.Result) {
	ports := labPorts(t)
	pc := prom.New("http://127.0.0.1:" + ports["PROMETHEUS_PORT"])
	jaegerURL := "http://127.0.0.1:" + ports["JAEGER_QUERY_PORT"]
	ds, err := dashboards.Load(root(t))
	if err != nil {
		t.Fatal(err)
	}
	guides, err := dashboards.GuideQueries(root(t))
	if err != nil {
		t.Fatal(err)
	}
	start := res.StartedAt.Add(-30 * time.Second)
	window := fmt.Sprintf("%ds", int(time.Since(start).Seconds())+60)
	ctx := context.Background()

	var traceQueries []dashboards.Query
	for _, g := range guides {
		if g.Scenario == name {
			traceQueries = append(traceQueries, g)
		}
	}
	checked := 0
	for _, d := range ds {
		if d.Scenario() != name && d.Scenario() != "" {
			continue
		}
		exemplarQueries, exemplarIDs := 0, 0
		for _, q := range d.Queries() {
			if q.Lang == "traceql" {
				if d.Scenario() == name || name == "nplus1" {
					traceQueries = append(traceQueries, q)
				}
				continue
			}
			if dashboards.NeedsTempo(q.Text) {
				t.Logf("skipped (Tempo's metrics-generator only): %s", q.Where)
				continue
			}
			expr := dashboards.Expand(q.Text, "30s", window)
			r, err := queryUntilData(ctx, pc, expr, start)
			checked++
			if err != nil {
				t.Errorf("%s: %v\n  %s", q.Where, err, expr)
				continue
			}
			if r.FiniteSamples == 0 {
				t.Errorf("%s: no data over the run (%d series, all NaN or empty)\n  %s", q.Where, r.Series, expr)
				continue
			}
			if min, ok := exposes[q.Where]; ok {
				b, f := r.Max["baseline"], r.Max["fixed"]
				t.Logf("%s: baseline %.2f, fixed %.2f", q.Where, b, f)
				if f <= 0 || b/f < min {
					t.Errorf("%s: baseline %.2f against fixed %.2f; the panel should show at least %.0fx between them", q.Where, b, f, min)
				}
			}
			if q.Exemplar {
				exemplarQueries++
				ids, err := dashcheck.ExemplarTraceIDs(ctx, pc, expr, start, time.Now())
				if err != nil {
					t.Errorf("%s: exemplars: %v", q.Where, err)
					continue
				}
				exemplarIDs += len(ids)
				// The newest: Jaeger keeps the last 50,000 traces, and a
				// capacity probe sends more than that before the runs.
				if len(ids) > 0 && !jaegerHas(jaegerURL, ids[len(ids)-1]) {
					t.Errorf("%s: exemplar trace %s is not in Jaeger", q.Where, ids[len(ids)-1])
				}
			}
		}
		if exemplarQueries > 0 && exemplarIDs == 0 {
			t.Errorf("%s: none of its %d exemplar panels has an exemplar over the run", d.File, exemplarQueries)
		}
	}
	t.Logf("%d PromQL queries returned data", checked)

	if err := res.ReadTraces(); err != nil {
		t.Fatal(err)
	}
	byVariant := map[string][]*trace.Trace{}
	for _, v := range res.Variants {
		byVariant[v.Variant] = v.Traces
	}
	for _, q := range traceQueries {
		p, err := traceql.Parse(q.Text)
		if err != nil {
			t.Errorf("%s: %v", q.Where, err)
			continue
		}
		// A query of another scenario's dashboard (the overview's) is read
		// on this run's traces only to find some.
		role := dashcheck.RoleOf(q)
		if q.Scenario != name {
			role = dashcheck.Browse
		}
		if err := dashcheck.Selects(p, role, byVariant["baseline"], byVariant["fixed"]); err != nil {
			t.Errorf("%s: %v\n  %s", q.Where, err, q.Text)
		} else {
			t.Logf("%s: as it should", q.Where)
		}
	}
}

// exposes holds the panels whose whole point is the difference between a
// baseline and its fix: the baseline's value over the run must be at least
// this many times the fixed one's. They are ratios of two rates over the
// same window, so the window's length cancels out; but rate() needs a
// series to grow between two scrapes, so a variant whose few requests all
// land in one collector flush has no rate at all. nplus1's smoke fixed
// variant (3 requests of 0.1 s) is such a run, so only chatty-db's load
// (10 s per variant) is long enough for this check.
var exposes = map[string]float64{
	"chatty-db.json: Database spans per request (A)": 3, // 7 against 1
}

// queryUntilData retries while the run's last samples may still be on
// their way: the collector flushes span metrics every 5 s and Prometheus
// scrapes every 5 s.
func queryUntilData(ctx context.Context, pc *prom.Client, expr string, start time.Time) (dashcheck.RangeResult, error) {
	deadline := time.Now().Add(20 * time.Second)
	for {
		r, err := dashcheck.QueryRange(ctx, pc, expr, start, time.Now(), 5*time.Second)
		if err != nil || r.FiniteSamples > 0 || time.Now().After(deadline) {
			return r, err
		}
		time.Sleep(2 * time.Second)
	}
}

func jaegerHas(base, traceID string) bool {
	resp, err := http.Get(base + "/api/traces/" + traceID)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
