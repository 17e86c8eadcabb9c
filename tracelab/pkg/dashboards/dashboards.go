// Package dashboards reads the Grafana dashboards in dashboards/ and the
// TraceQL in the scenario guides, and checks their structure: what
// `tracelab dashboards check` and `tracelab dashboards queries` do. Proving
// the queries on data (internal/dashcheck) is the tests' job.
package dashboards

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Dashboard is the part of a Grafana dashboard the lab checks.
type Dashboard struct {
	File          string   `json:"-"`
	UID           string   `json:"uid"`
	Title         string   `json:"title"`
	Tags          []string `json:"tags"`
	SchemaVersion int      `json:"schemaVersion"`
	Panels        []Panel  `json:"panels"`
	Templating    struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

// Panel is one panel; rows are not used by the lab's dashboards.
type Panel struct {
	ID          int         `json:"id"`
	Type        string      `json:"type"`
	Title       string      `json:"title"`
	Description string      `json:"description"`
	GridPos     GridPos     `json:"gridPos"`
	Datasource  *Datasource `json:"datasource"`
	Targets     []Target    `json:"targets"`
}

// GridPos places a panel on Grafana's 24-column grid.
type GridPos struct{ H, W, X, Y int }

// Datasource names a datasource by type and uid (here always a variable).
type Datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// Target is one query of a panel.
type Target struct {
	RefID      string      `json:"refId"`
	Datasource *Datasource `json:"datasource"`
	Expr       string      `json:"expr"`      // PromQL
	Exemplar   bool        `json:"exemplar"`  // show exemplars (Prometheus)
	QueryType  string      `json:"queryType"` // Tempo: traceql, serviceMap
	Query      string      `json:"query"`     // TraceQL
}

// Scenario is the scenario a dashboard belongs to: the tag that is none of
// the lab's own ("tracelab", "scenario", "overview"); "" for the overview.
func (d *Dashboard) Scenario() string {
	for _, t := range d.Tags {
		if t != "tracelab" && t != "scenario" && t != "overview" {
			return t
		}
	}
	return ""
}

// Load reads every dashboards/*.json under root, sorted by file name.
func Load(root string) ([]*Dashboard, error) {
	files, err := filepath.Glob(filepath.Join(root, "dashboards", "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []*Dashboard
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var d Dashboard
		if err := json.Unmarshal(data, &d); err != nil {
			return nil, fmt.Errorf("%s: not valid JSON: %v", filepath.Base(f), err)
		}
		d.File = filepath.Base(f)
		out = append(out, &d)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no dashboards in %s", filepath.Join(root, "dashboards"))
	}
	return out, nil
}

// Query is one query found in a dashboard or a guide.
type Query struct {
	Where    string // "nplus1.json: Downstream calls per request (A)" or "scenarios/nplus1/README.md:120"
	Scenario string // "" for the overview
	Lang     string // "promql" or "traceql"
	Text     string
	Exemplar bool
}

// Queries lists the PromQL and TraceQL queries of a dashboard.
func (d *Dashboard) Queries() []Query {
	var out []Query
	for _, p := range d.Panels {
		for _, t := range p.Targets {
			where := fmt.Sprintf("%s: %s (%s)", d.File, p.Title, t.RefID)
			switch {
			case t.Expr != "":
				out = append(out, Query{Where: where, Scenario: d.Scenario(), Lang: "promql", Text: t.Expr, Exemplar: t.Exemplar})
			case t.QueryType == "traceql":
				out = append(out, Query{Where: where, Scenario: d.Scenario(), Lang: "traceql", Text: t.Query})
			}
		}
	}
	return out
}

// traceqlFence opens a fenced code block of TraceQL in a guide.
var traceqlFence = regexp.MustCompile("^```traceql\\s*$")

// GuideQueries lists the TraceQL of every scenario guide
// (scenarios/*/README.md): each line of a ```traceql block is one query.
func GuideQueries(root string) ([]Query, error) {
	files, err := filepath.Glob(filepath.Join(root, "scenarios", "*", "README.md"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []Query
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(root, f)
		scenario := filepath.Base(filepath.Dir(f))
		in := false
		for i, line := range strings.Split(string(data), "\n") {
			switch {
			case traceqlFence.MatchString(line):
				in = true
			case in && strings.HasPrefix(line, "```"):
				in = false
			case in && strings.TrimSpace(line) != "":
				out = append(out, Query{Where: fmt.Sprintf("%s:%d", rel, i+1), Scenario: scenario, Lang: "traceql", Text: strings.TrimSpace(line)})
			}
		}
	}
	return out, nil
}

// Validate checks what Grafana needs from a dashboard and what the lab
// relies on; the dashboard-linter checks the rest (PromQL syntax, units,
// descriptions). It returns every problem found.
func Validate(ds []*Dashboard) []string {
	var errs []string
	bad := func(d *Dashboard, format string, a ...any) {
		errs = append(errs, d.File+": "+fmt.Sprintf(format, a...))
	}
	uids := map[string]string{}
	for _, d := range ds {
		if d.UID == "" || len(d.UID) > 40 {
			bad(d, "uid %q: want 1 to 40 characters", d.UID)
		}
		if other, dup := uids[d.UID]; dup {
			bad(d, "uid %q also used by %s", d.UID, other)
		}
		uids[d.UID] = d.File
		if d.Title == "" {
			bad(d, "no title")
		}
		if d.SchemaVersion < 36 {
			bad(d, "schemaVersion %d: want >= 36 (datasource references by uid)", d.SchemaVersion)
		}
		if !slices.Contains(d.Tags, "tracelab") {
			bad(d, "no tracelab tag: the dashboards link each other by it")
		}
		vars := map[string]string{}
		for _, v := range d.Templating.List {
			vars[v.Name] = v.Type
		}
		ids := map[int]bool{}
		var boxes []GridPos
		for _, p := range d.Panels {
			if ids[p.ID] {
				bad(d, "panel %q: id %d used twice", p.Title, p.ID)
			}
			ids[p.ID] = true
			g := p.GridPos
			if g.W <= 0 || g.H <= 0 || g.X < 0 || g.Y < 0 || g.X+g.W > 24 {
				bad(d, "panel %q: gridPos %+v outside the 24-column grid", p.Title, g)
			}
			for _, o := range boxes {
				if g.X < o.X+o.W && o.X < g.X+g.W && g.Y < o.Y+o.H && o.Y < g.Y+g.H {
					bad(d, "panel %q overlaps another panel at %+v", p.Title, o)
				}
			}
			boxes = append(boxes, g)
			if p.Type == "text" {
				continue
			}
			refs := map[string]bool{}
			for _, t := range p.Targets {
				if t.RefID == "" || refs[t.RefID] {
					bad(d, "panel %q: refId %q missing or repeated", p.Title, t.RefID)
				}
				refs[t.RefID] = true
				ds := t.Datasource
				if ds == nil {
					ds = p.Datasource
				}
				if ds == nil {
					bad(d, "panel %q (%s): no datasource", p.Title, t.RefID)
					continue
				}
				name := strings.TrimSuffix(strings.TrimPrefix(ds.UID, "${"), "}")
				if vars[name] != "datasource" {
					bad(d, "panel %q (%s): datasource %q is not a datasource variable of the dashboard", p.Title, t.RefID, ds.UID)
				}
				switch ds.Type {
				case "prometheus":
					if t.Expr == "" {
						bad(d, "panel %q (%s): Prometheus target without expr", p.Title, t.RefID)
					}
				case "tempo":
					if t.QueryType == "traceql" && t.Query == "" || t.QueryType != "traceql" && t.QueryType != "serviceMap" {
						bad(d, "panel %q (%s): Tempo target needs a traceql query or the serviceMap query type", p.Title, t.RefID)
					}
				default:
					bad(d, "panel %q (%s): datasource type %q; the lab provisions prometheus and tempo", p.Title, t.RefID, ds.Type)
				}
			}
			if len(p.Targets) == 0 {
				bad(d, "panel %q has no query", p.Title)
			}
		}
	}
	return errs
}
