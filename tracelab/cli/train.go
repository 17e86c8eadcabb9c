package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"tracelab/pkg/report"
	"tracelab/pkg/result"
	"tracelab/pkg/run"
	"tracelab/pkg/scenario"
	"tracelab/pkg/train"
)

func init() {
	register("train", "a trace-reading round: a random scenario and variant, its report without the answer, your diagnosis graded", runTrain)
}

// round is what a training round records in its result folder (round.json).
type round struct {
	Seed     int64           `json:"seed"`
	Picked   train.Candidate `json:"picked"`
	Truth    train.Truth     `json:"truth"`
	Answer   train.Answer    `json:"answer"`
	Correct  bool            `json:"correct"`
	Feedback string          `json:"feedback"`
	Report   string          `json:"report"`
	Result   string          `json:"result"`
}

func runTrain(args []string) int {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	seed := fs.Int64("seed", 0, "pick the round from this seed (default: from the clock); the same seed replays the same round")
	profile := fs.String("profile", "smoke", "load profile of the run")
	keep := fs.Bool("keep", false, "leave the stack running after grading")
	regrade := fs.String("grade", "", "grade new answers for a finished round (its round.json) without running again")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	in := bufio.NewReader(os.Stdin)
	if *regrade != "" {
		var r round
		data, err := os.ReadFile(*regrade)
		if err == nil {
			err = json.Unmarshal(data, &r)
		}
		if err != nil || r.Picked.Scenario == "" {
			return fail(exitUsage, "%s is not a training round.json", *regrade)
		}
		return askAndGrade(in, &r, "")
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
	cands := train.Candidates(all)
	if len(cands) == 0 {
		return fail(exitUsage, "no scenarios under %s/scenarios", co.Root)
	}
	if *seed == 0 {
		*seed = time.Now().UnixNano()
	}
	r := &round{Seed: *seed, Picked: train.Pick(cands, *seed)}
	var s *scenario.Scenario
	for _, x := range all {
		if x.Name == r.Picked.Scenario {
			s = x
		}
	}
	r.Truth = train.TruthOf(s, r.Picked.Variant)

	ses, err := startSession(co, "", *keep)
	if err != nil {
		return fail(exitRuntime, "%v", err)
	}
	defer ses.end()
	fmt.Printf("Training round (seed %d: 'tracelab train --seed %d' replays it).\n", *seed, *seed)
	fmt.Println("A scenario and a variant were picked at random; running them now (progress on stderr).")
	// Progress lines would name the scenario and the variant.
	hide := strings.NewReplacer(r.Picked.Scenario, "…", r.Picked.Variant, "run")
	quiet := func(format string, a ...any) { progress("%s", hide.Replace(fmt.Sprintf(format, a...))) }
	runner := &run.Runner{Lab: co, Runtime: ses.rt, Load: ses.load, Progress: quiet}
	res, err := runner.Run(ses.ctx, s, run.Options{Profile: *profile, Variants: []string{r.Picked.Variant}})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return fail(130, "interrupted; stopping what the round started")
		}
		return fail(exitRuntime, "%v", err)
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
	if id := exampleTrace(res); id != "" {
		fmt.Printf("Jaeger, while this round waits for your answer: %s/api/traces/%s (the query API; the UI is a placeholder when built from source)\n", ses.rt.JaegerURL(), id)
	}
	fmt.Println("Grafana: in the Kubernetes runtimes only (dashboards/); the local runtime has no Grafana.")
	fmt.Println("The run's result under .state/results holds the answer: do not peek.")
	return askAndGrade(in, r, filepath.Join(roundDir, "round.json"))
}

// exampleTrace is the trace the report's waterfall shows, or any trace.
func exampleTrace(res *result.Result) string {
	v := res.Variants[0]
	for _, f := range v.Analysis.Findings {
		if id, ok := f.Evidence["example_trace_id"].(string); ok {
			return id
		}
	}
	if len(v.Traces) == 0 {
		return ""
	}
	return v.Traces[len(v.Traces)/2].ID
}

func askAndGrade(in *bufio.Reader, r *round, save string) int {
	fmt.Println("\nWhich pathology does the trace show?")
	for i, p := range train.Pathologies {
		fmt.Printf("  %d) %s\n", i+1, p)
	}
	var err error
	if r.Answer.Pathology, err = ask(in, "pathology> "); err != nil {
		return fail(exitUsage, "%v", err)
	}
	if train.NormalizePathology(r.Answer.Pathology) != train.None {
		if r.Answer.Service, err = ask(in, "in which service? "); err != nil {
			return fail(exitUsage, "%v", err)
		}
	} else {
		r.Answer.Service = ""
	}
	r.Correct, r.Feedback = train.Grade(r.Truth, r.Answer)
	verdict := "WRONG"
	if r.Correct {
		verdict = "RIGHT"
	}
	fmt.Printf("\n%s: %s\n", verdict, r.Feedback)
	fmt.Printf("The round was scenario %s, variant %s. The full report, with tracelab's findings: %s\n", r.Picked.Scenario, r.Picked.Variant, r.Report)
	fmt.Printf("The guide to reading it: scenarios/%s/README.md\n", r.Picked.Scenario)
	if save != "" {
		data, _ := json.MarshalIndent(r, "", "  ")
		if err := os.WriteFile(save, data, 0o644); err != nil {
			return fail(exitRuntime, "%v", err)
		}
		fmt.Printf("round: %s\n", save)
	}
	if !r.Correct {
		return exitFail
	}
	return exitOK
}

func ask(in *bufio.Reader, prompt string) (string, error) {
	fmt.Print(prompt)
	line, err := in.ReadString('\n')
	if err != nil && (err != io.EOF || strings.TrimSpace(line) == "") {
		return "", errors.New("no answer on standard input")
	}
	fmt.Println()
	return strings.TrimSpace(line), nil
}
