package cli

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"tracelab/pkg/lab"
	"tracelab/pkg/report"
	"tracelab/pkg/run"
	"tracelab/pkg/scenario"
)

func init() {
	register("scenario", "run, list or validate scenarios", runScenario)
	withSubcommands("scenario", scenarioUsage)
}

const (
	scenarioRunUsage = "tracelab scenario run NAME [--variant baseline|fixed|both|all|NAME] [--profile smoke|full] [--record] [--keep] [--runtime local|kind|eks]"
	scenarioUsage    = "usage:\n  " + scenarioRunUsage + "\n  tracelab scenario list\n  tracelab scenario validate [NAME...]"
)

func runScenario(args []string) int {
	co, code, err := openCheckout()
	if err != nil {
		return fail(code, "%v", err)
	}
	switch args[0] {
	case "list":
		for _, n := range scenario.List(co) {
			s, err := scenario.Load(co, n)
			if err != nil {
				fmt.Printf("%-16s (invalid: %v)\n", n, err)
				continue
			}
			fmt.Printf("%-16s %s\n", n, s.Title)
		}
		return exitOK
	case "validate":
		names := args[1:]
		if len(names) == 0 {
			names = scenario.List(co)
		}
		for _, n := range names {
			if _, err := scenario.Load(co, n); err != nil {
				return fail(exitUsage, "%v", err)
			}
			fmt.Printf("%s: valid\n", n)
		}
		return exitOK
	case "run":
		return runScenarioRun(co, args[1:])
	}
	return fail(exitUsage, "unknown scenario command %q; run 'tracelab scenario --help'", args[0])
}

func runScenarioRun(co *lab.Checkout, args []string) int {
	fs := flag.NewFlagSet("scenario run", flag.ContinueOnError)
	variant := fs.String("variant", "both", "baseline, fixed, both (baseline and fixed, or the profile's own list), all, or a variant's name")
	profile := fs.String("profile", "smoke", "load profile: smoke (CI) or full (the case's magnitude)")
	record := fs.Bool("record", false, "write the measured numbers into the scenario's baseline.json")
	keep := fs.Bool("keep", false, "leave the stack running afterwards (to browse the traces)")
	rtName := fs.String("runtime", "", "runtime: local (default), kind or eks; also RUNTIME")
	name, code, ok := parseNamed(fs, args, "usage: "+scenarioRunUsage, os.Stdout)
	if !ok {
		return code
	}
	if name == "" {
		return fail(exitUsage, "which scenario? known scenarios: %s", strings.Join(scenario.List(co), ", "))
	}
	s, err := scenario.Load(co, name)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	// Resolved before anything starts: the run gets the profile, not its name.
	prof, err := s.ProfileNamed(*profile)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}

	ses, err := startSession(co, *rtName, *keep)
	if err != nil {
		return fail(exitRuntime, "%v", err)
	}
	defer ses.end()

	runner := &run.Runner{Lab: co, Runtime: ses.rt, Load: ses.load, Progress: progress}
	res, err := runner.Run(ses.ctx, s, run.Options{Profile: prof, Variants: s.Selected(*variant, prof.Name), Record: *record})
	if err != nil {
		return ses.failed(err)
	}
	report.WriteTable(os.Stdout, res)
	fmt.Printf("result: %s\n", res.ResultFile)
	fmt.Printf("report: %s\n", res.ReportFile)
	if *record {
		fmt.Printf("recorded: %s/baseline.json (profile %s)\n", s.Dir, prof.Name)
	}
	fmt.Printf("explore its traces: make ui, then %s\n", explorerURL(co, "#/run/"+filepath.Base(filepath.Dir(res.ResultFile))))
	if ses.wasRunning || *keep {
		fmt.Printf("the stack is still running (Jaeger %s, Prometheus %s): the explorer reads them live too; 'make down' stops it\n", ses.rt.JaegerURL(), ses.rt.PrometheusURL())
	}
	if res.Verdict != "pass" {
		return exitFail
	}
	return exitOK
}
