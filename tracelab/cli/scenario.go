package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"tracelab/pkg/lab"
	"tracelab/pkg/load"
	"tracelab/pkg/report"
	"tracelab/pkg/run"
	"tracelab/pkg/runtime"
	"tracelab/pkg/scenario"
)

func init() {
	register("scenario", "run, list or validate scenarios (tracelab scenario help)", runScenario)
}

const scenarioUsage = `usage:
  tracelab scenario run NAME [--variant baseline|fixed|both|all|NAME] [--profile smoke|full] [--record] [--keep] [--runtime local|kind|eks]
  tracelab scenario list
  tracelab scenario validate [NAME...]`

func runScenario(args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" {
		fmt.Println(scenarioUsage)
		return exitOK
	}
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
	return fail(exitUsage, "unknown scenario command %q; run 'tracelab scenario help'", args[0])
}

func runScenarioRun(co *lab.Checkout, args []string) int {
	name, rest := splitName(args)
	fs := flag.NewFlagSet("scenario run", flag.ContinueOnError)
	variant := fs.String("variant", "both", "baseline, fixed, both (baseline and fixed, or the profile's own list), all, or a variant's name")
	profile := fs.String("profile", "smoke", "load profile: smoke (CI) or full (the case's magnitude)")
	record := fs.Bool("record", false, "write the measured numbers into the scenario's baseline.json")
	keep := fs.Bool("keep", false, "leave the stack running afterwards (to browse the traces)")
	rtName := fs.String("runtime", "", "runtime: local (default), kind or eks; also RUNTIME")
	if err := fs.Parse(rest); err != nil {
		return exitUsage
	}
	if name == "" && fs.NArg() > 0 {
		name = fs.Arg(0)
	}
	if name == "" {
		return fail(exitUsage, "which scenario? known scenarios: %s", strings.Join(scenario.List(co), ", "))
	}
	s, err := scenario.Load(co, name)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	var variants []string
	switch *variant {
	case "both":
		variants = s.DefaultVariants(*profile)
	case "all":
		variants = s.VariantNames()
	default:
		variants = []string{*variant}
	}

	ses, err := startSession(co, *rtName, *keep)
	if err != nil {
		return fail(exitRuntime, "%v", err)
	}
	defer ses.end()

	runner := &run.Runner{Lab: co, Runtime: ses.rt, Load: ses.load, Progress: progress}
	res, err := runner.Run(ses.ctx, s, run.Options{Profile: *profile, Variants: variants, Record: *record})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return fail(130, "interrupted; stopping what the run started")
		}
		return fail(exitRuntime, "%v", err)
	}
	report.WriteTable(os.Stdout, res)
	fmt.Printf("result: %s\n", res.ResultFile)
	fmt.Printf("report: %s\n", res.ReportFile)
	if *record {
		fmt.Printf("recorded: %s/baseline.json (profile %s)\n", s.Dir, *profile)
	}
	if ses.wasRunning || *keep {
		fmt.Printf("Jaeger: %s (the stack is still running; 'make down' stops it)\n", ses.rt.JaegerURL())
	}
	if res.Verdict != "pass" {
		return exitFail
	}
	return exitOK
}

// session is what one run of scenarios needs: the runtime, the load, and a
// context that Ctrl-C cancels.
type session struct {
	rt         runtime.Runtime
	load       load.Driver
	ctx        context.Context
	wasRunning bool // the stack was up before this run
	end        func()
}

// startSession opens the runtime and its load driver. Its end stops, whatever
// happened, the stack this run started (unless keep), and only then the
// interrupt handling, so a second Ctrl-C cannot cut the teardown short.
func startSession(co *lab.Checkout, rtName string, keep bool) (*session, error) {
	rt, err := openRuntime(co, rtName)
	if err != nil {
		return nil, err
	}
	ses := &session{rt: rt, load: rt.LoadDriver(), wasRunning: rt.Running()}
	ctx, stop := interruptible()
	ses.ctx = ctx
	ses.end = func() {
		if !ses.wasRunning && !keep {
			rt.Down(context.Background())
		}
		stop()
	}
	return ses, nil
}
