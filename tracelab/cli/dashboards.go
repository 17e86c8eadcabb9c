package cli

import (
	"fmt"
	"strings"

	"tracelab/pkg/dashboards"
	"tracelab/pkg/lab"
)

func init() {
	registerInternal("dashboards", "check the Grafana dashboards, or list their queries", runDashboards)
	withSubcommands("dashboards", dashboardsUsage)
}

const dashboardsUsage = `usage:
  tracelab dashboards check                        structure of dashboards/*.json; a dashboard per scenario
  tracelab dashboards queries [--lang promql|traceql]   every query: WHERE<TAB>QUERY, guides' TraceQL included`

func runDashboards(args []string) int {
	root, err := lab.Find()
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	ds, err := dashboards.Load(root)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	switch args[0] {
	case "check":
		if errs := dashboards.Validate(ds); len(errs) > 0 {
			return fail(exitUsage, "%s", strings.Join(errs, "; "))
		}
		for _, d := range ds {
			fmt.Printf("%s: valid (%d panels)\n", d.File, len(d.Panels))
		}
		return exitOK
	case "queries":
		lang := ""
		if len(args) == 3 && args[1] == "--lang" {
			lang = args[2]
		} else if len(args) != 1 {
			return fail(exitUsage, "usage: tracelab dashboards queries [--lang promql|traceql]")
		}
		qs, err := dashboards.GuideQueries(root)
		if err != nil {
			return fail(exitUsage, "%v", err)
		}
		for _, d := range ds {
			qs = append(qs, d.Queries()...)
		}
		for _, q := range qs {
			if lang == "" || q.Lang == lang {
				fmt.Printf("%s\t%s\n", q.Where, q.Text)
			}
		}
		return exitOK
	}
	return fail(exitUsage, "unknown dashboards command %q; run 'tracelab dashboards --help'", args[0])
}
