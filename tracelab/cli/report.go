package cli

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"tracelab/pkg/report"
	"tracelab/pkg/result"
)

func init() {
	register("report", "render a scenario run's result.json as a self-contained HTML report", runReport)
}

func runReport(args []string) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	resultPath := fs.String("result", "", "a run's result.json (.state/results/<run>/result.json)")
	out := fs.String("out", "", "where to write the HTML (default: report.html beside the result)")
	noVerdict := fs.Bool("no-verdict", false, "leave out the checks and the verdict")
	blind := fs.Bool("blind", false, "also hide the scenario, the variants and the findings (as tracelab train does)")
	if code, ok := parseFlags(fs, args, 0, "usage: tracelab report --result FILE [--out FILE] [--no-verdict] [--blind]", os.Stdout); !ok {
		return code
	}
	if *resultPath == "" {
		return fail(exitUsage, "--result is required, e.g. --result .state/results/<run>/result.json")
	}
	res, err := result.Read(*resultPath)
	if err == nil {
		err = res.ReadTraces()
	}
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	if *out == "" {
		*out = filepath.Join(filepath.Dir(*resultPath), "report.html")
	}
	if err := report.WriteFile(*out, res, report.Options{HideVerdict: *noVerdict, Blind: *blind}); err != nil {
		return fail(exitRuntime, "%v", err)
	}
	fmt.Println(*out)
	return exitOK
}
