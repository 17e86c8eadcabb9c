package cli

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"tracelab/pkg/report"
	"tracelab/pkg/run"
	"tracelab/pkg/scenario"
	"tracelab/pkg/train"
)

func init() {
	register("train", "a trace-reading round: a random scenario and variant, its report without the answer, your diagnosis graded", runTrain)
}

// trainUsage is train's usage: offline rounds by default, --live for a
// round on a run of the stack.
const trainUsage = `usage: tracelab train [--seed N] [--level 1-4] [--learner NAME] [--addr HOST:PORT]
       tracelab train --json [--seed N] [--level 1-4] [--learner NAME] [--answer FILE|-]
       tracelab train --reference [--level 1-4]
       tracelab train --live [--seed N] [--profile smoke|full] [--keep] | train --grade ROUND.json`

func runTrain(args []string) int {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	seed := fs.Int64("seed", 0, "pick the round from this seed (default: from the clock); the same seed replays the same round")
	live := fs.Bool("live", false, "run a scenario on the stack for the round (minutes) instead of drawing it from the recordings")
	profile := fs.String("profile", "smoke", "load profile of the run (--live)")
	keep := fs.Bool("keep", false, "leave the stack running after grading (--live)")
	regrade := fs.String("grade", "", "grade new answers for a finished live round (its round.json) without running again")
	o := offlineFlags{}
	fs.IntVar(&o.level, "level", train.LevelFix, "ask up to this level: 1 detect, 2 localize, 3 explain, 4 fix")
	fs.StringVar(&o.learner, "learner", "", "whose record the round goes to (default $USER)")
	fs.StringVar(&o.addr, "addr", "127.0.0.1:0", "where the round's explorer listens (default: a free port)")
	fs.BoolVar(&o.json, "json", false, "hand the round as JSON on stdout and grade a JSON answer (for scripts and agents)")
	fs.StringVar(&o.answer, "answer", "-", "with --json: the answer's file (- for stdin)")
	fs.BoolVar(&o.reference, "reference", false, "print random guessing's and the analyzer's scores on every round of the set")
	if code, ok := parseFlags(fs, args, 0, trainUsage, os.Stdout); !ok {
		return code
	}
	if *seed == 0 {
		*seed = time.Now().UnixNano()
	}
	if !*live && *regrade == "" {
		o.seed = *seed
		return runOffline(o)
	}
	in := bufio.NewReader(os.Stdin)
	if *regrade != "" {
		r, err := train.ReadRound(*regrade)
		if err != nil {
			return fail(exitUsage, "%v", err)
		}
		return askAndGrade(in, r, "")
	}
	co, code, err := openCheckout()
	if err != nil {
		return fail(code, "%v", err)
	}
	var all []*scenario.Scenario
	for _, n := range scenario.List(co) {
		s, err := scenario.Load(co, n)
		if err != nil {
			return fail(exitUsage, "%v", err)
		}
		all = append(all, s)
	}
	r, s, err := train.NewRound(all, *seed)
	if err != nil {
		return fail(exitUsage, "%v under %s/scenarios", err, co.Root)
	}
	prof, err := s.ProfileNamed(*profile)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}

	ses, err := startSession(co, "", *keep)
	if err != nil {
		return fail(exitRuntime, "%v", err)
	}
	defer ses.end()
	fmt.Printf("Training round (seed %d: 'tracelab train --live --seed %d' replays it).\n", *seed, *seed)
	fmt.Println("A scenario and a variant were picked at random; running them now (progress on stderr).")
	// Progress lines would name the scenario and the variant.
	hide := strings.NewReplacer(r.Picked.Scenario, "…", r.Picked.Variant, "run")
	quiet := func(format string, a ...any) { progress("%s", hide.Replace(fmt.Sprintf(format, a...))) }
	runner := &run.Runner{Lab: co, Runtime: ses.rt, Load: ses.load, Progress: quiet}
	res, err := runner.Run(ses.ctx, s, run.Options{Profile: prof, Variants: []string{r.Picked.Variant}})
	if err != nil {
		return ses.failed(err)
	}
	r.Result, r.Report = res.ResultFile, res.ReportFile
	// The round's own folder: the result's folder is named after the scenario.
	roundDir := filepath.Join(co.State, "train", "round-"+res.StartedAt.Format("20060102T150405Z"))
	if err := os.MkdirAll(roundDir, 0o755); err != nil {
		return fail(exitRuntime, "%v", err)
	}
	blind := filepath.Join(roundDir, "training.html")
	if err := report.WriteFile(blind, res, report.Options{Blind: true}); err != nil {
		return fail(exitRuntime, "writing the training report: %v", err)
	}

	fmt.Printf("\nOpen the report (it does not say what it found): %s\n", blind)
	if id := train.ExampleTrace(res.Variants[0]); id != "" {
		fmt.Printf("a trace of this round, raw, while it waits for your answer: %s/api/traces/%s (Jaeger's query API)\n", ses.rt.JaegerURL(), id)
	}
	fmt.Println("The run's result under .state/results holds the answer: do not peek.")
	graded := askAndGrade(in, r, filepath.Join(roundDir, "round.json"))
	// Only now: the run's id names its scenario, and the explorer its findings.
	fmt.Printf("explore the round's traces, dashboards and findings: make ui, then %s\n", explorerURL(co, "#/run/"+filepath.Base(filepath.Dir(res.ResultFile))))
	return graded
}

// askAndGrade asks the trainee, prints the grade and the round's answer,
// and saves the round unless save is "".
func askAndGrade(in *bufio.Reader, r *train.Round, save string) int {
	if err := r.Ask(in, os.Stdout); err != nil {
		return fail(exitUsage, "%v", err)
	}
	verdict := "WRONG"
	if r.Correct {
		verdict = "RIGHT"
	}
	fmt.Printf("\n%s: %s\n", verdict, r.Feedback)
	fmt.Printf("The round was scenario %s, variant %s. The full report, with tracelab's findings: %s\n", r.Picked.Scenario, r.Picked.Variant, r.Report)
	fmt.Printf("The guide to reading it: scenarios/%s/README.md\n", r.Picked.Scenario)
	if save != "" {
		if err := r.Save(save); err != nil {
			return fail(exitRuntime, "%v", err)
		}
		fmt.Printf("round: %s\n", save)
	}
	if !r.Correct {
		return exitFail
	}
	return exitOK
}
