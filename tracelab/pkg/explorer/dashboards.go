package explorer

import (
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"tracelab/pkg/dashboards"
	"tracelab/pkg/prom"
)

// DashboardEntry is a dashboard as the page lists it.
type DashboardEntry struct {
	File     string `json:"file"`
	Title    string `json:"title"`
	Scenario string `json:"scenario"` // "" for the overview
}

func (s *Server) listDashboards(*http.Request) (any, error) {
	ds, err := dashboards.Load(s.cfg.Root)
	if err != nil {
		return nil, err
	}
	out := []DashboardEntry{}
	for _, d := range ds {
		out = append(out, DashboardEntry{File: filepath.Base(d.File), Title: d.Title, Scenario: d.Scenario()})
	}
	return out, nil
}

// getDashboard answers a dashboard's own JSON, as Grafana reads it: the
// page renders its panels from it.
func (s *Server) getDashboard(r *http.Request) (any, error) {
	name := r.PathValue("file")
	if filepath.Base(name) != name || !strings.HasSuffix(name, ".json") {
		return nil, badRequest("%q is not a dashboard file", name)
	}
	data, err := os.ReadFile(filepath.Join(s.cfg.Root, "dashboards", name))
	if err != nil {
		return nil, notFound("no dashboard %s in %s", name, filepath.Join(s.cfg.Root, "dashboards"))
	}
	return rawJSON(data), nil
}

type rawJSON []byte

func (j rawJSON) MarshalJSON() ([]byte, error) { return j, nil }

// promQL runs a panel's PromQL over [start, end] (Unix seconds) against
// the stack's Prometheus, its Grafana variables given what Grafana would
// give them (dashboards.Expand, every variant). A query only Tempo's
// metrics-generator can answer is refused with the reason.
func (s *Server) promQL(r *http.Request) (any, error) {
	q := r.URL.Query()
	expr := q.Get("expr")
	if expr == "" {
		return nil, badRequest("expr is required")
	}
	if dashboards.NeedsTempo(expr) {
		return nil, &httpError{http.StatusUnprocessableEntity, "this query reads the service graph, which only Tempo's metrics-generator makes; Tempo runs on kind and EKS, not locally"}
	}
	if s.cfg.PrometheusURL == "" {
		return nil, &httpError{http.StatusServiceUnavailable, "no Prometheus is configured"}
	}
	end := time.Unix(int64(number(q.Get("end"), float64(time.Now().Unix()))), 0)
	start := time.Unix(int64(number(q.Get("start"), float64(end.Add(-15*time.Minute).Unix()))), 0)
	if !start.Before(end) {
		return nil, badRequest("start must be before end")
	}
	// About 200 points across the panel, and a rate window of four steps
	// (Grafana's $__rate_interval at a 15 s scrape is at least 1 m).
	step := max(time.Duration(end.Sub(start).Seconds()/200)*time.Second, 5*time.Second)
	rate := max(4*step, 30*time.Second)
	expanded := dashboards.Expand(expr, strconv.Itoa(int(rate.Seconds()))+"s", strconv.Itoa(int(end.Sub(start).Seconds()))+"s")
	series, err := prom.New(s.cfg.PrometheusURL).QueryRange(r.Context(), expanded, start, end, step)
	if err != nil {
		return nil, &httpError{http.StatusBadGateway, err.Error()}
	}
	out := struct {
		Expr   string        `json:"expr"`
		Series []prom.Series `json:"series"`
	}{expanded, series}
	slices.SortFunc(out.Series, func(a, b prom.Series) int {
		return strings.Compare(labelKey(a.Labels), labelKey(b.Labels))
	})
	return out, nil
}

func labelKey(m map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		b.WriteString(k + "=" + m[k] + ",")
	}
	return b.String()
}
