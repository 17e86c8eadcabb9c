package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"tracelab/pkg/explorer"
	"tracelab/pkg/lab"
	"tracelab/pkg/scenario"
	"tracelab/pkg/train"
)

// offlineFlags are train's flags for rounds drawn from the recordings.
type offlineFlags struct {
	seed                  int64
	level                 int
	learner, addr, answer string
	json, reference       bool
}

// Handout is the round `train --json` hands out: where its traces are
// (plain OTLP JSON, already masked) and the lists to answer from.
type Handout struct {
	Round   string        `json:"round"`
	Seed    int64         `json:"seed"`
	Level   int           `json:"level"`
	Levels  []string      `json:"levels"` // the levels asked, in order
	Traces  string        `json:"traces"`
	Choices train.Choices `json:"choices"`
}

// Graded is what `train --json` answers a reply with.
type Graded struct {
	Round    string        `json:"round"`
	Grade    train.Marks   `json:"grade"`
	Random   float64       `json:"random"`   // random guessing's expected score on this round
	Analyzer float64       `json:"analyzer"` // tracelab analyze's top finding, graded
	Key      AnswerKey     `json:"key"`
	Record   train.Summary `json:"record"`
}

// AnswerKey is the round's answer, given once it is graded.
type AnswerKey struct {
	Case      string            `json:"case"`
	Stack     string            `json:"stack"`
	Pathology string            `json:"pathology"`
	Service   string            `json:"service,omitempty"`   // as the round names it
	Operation string            `json:"operation,omitempty"` // part of the operation's name, as the round names it
	Scenario  string            `json:"scenario,omitempty"`
	Variant   string            `json:"variant,omitempty"`
	Fix       []string          `json:"fix,omitempty"`
	Services  map[string]string `json:"renamed,omitempty"` // recorded name -> name in the round
	Analyzer  train.Reply       `json:"analyzer_reply"`
}

func loadScenarios(co *lab.Checkout) ([]*scenario.Scenario, error) {
	var all []*scenario.Scenario
	for _, n := range scenario.List(co) {
		s, err := scenario.Load(co, n)
		if err != nil {
			return nil, err
		}
		all = append(all, s)
	}
	return all, nil
}

func runOffline(o offlineFlags) int {
	co, code, err := openCheckout()
	if err != nil {
		return fail(code, "%v", err)
	}
	all, err := loadScenarios(co)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	set, err := train.LoadSet(co.Root, all)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	if o.level < train.LevelDetect || o.level > train.LevelFix {
		return fail(exitUsage, "train: --level %d: the levels are 1 (detect) to 4 (fix); %s", o.level, strings.SplitN(trainUsage, "\n", 2)[0])
	}
	if o.reference {
		return printReference(set, o.level)
	}
	if o.learner == "" {
		o.learner = cmpOr(os.Getenv("USER"), "learner")
	}
	recPath, err := train.RecordPath(co.State, o.learner)
	if err != nil {
		return fail(exitUsage, "train: --learner: %v", err)
	}
	r, err := set.Draw(o.seed, o.level)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	dir := filepath.Join(co.State, "train", "rounds", r.ID)
	tracesPath := filepath.Join(dir, "traces.json")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(exitRuntime, "%v", err)
	}
	if err := r.WriteTraces(tracesPath); err != nil {
		return fail(exitRuntime, "writing the round's traces: %v", err)
	}
	// The analyzer reads the round while the learner does.
	ref := make(chan refResult, 1)
	go func() { a, err := r.AnalyzerReply(); ref <- refResult{a, err} }()

	var reply train.Reply
	if o.json {
		var levels []string
		for _, l := range r.Levels() {
			levels = append(levels, train.LevelNames[l])
		}
		json.NewEncoder(os.Stdout).Encode(Handout{Round: r.ID, Seed: r.Seed, Level: r.Level, Levels: levels, Traces: tracesPath, Choices: r.Choices})
		data, err := readAnswer(o.answer)
		if err != nil {
			return fail(exitUsage, "train: %v", err)
		}
		if len(bytes.TrimSpace(data)) == 0 {
			return exitOK // handed out only: grade it later with the same --seed, --level and --answer FILE
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&reply); err != nil {
			return fail(exitUsage, "train: the answer is not a JSON reply (pathology, service, operation, spans, mechanism, fix): %v", err)
		}
	} else {
		stop, err := serveRound(o.addr, r)
		if err != nil {
			return fail(exitRuntime, "%v", err)
		}
		defer stop()
		if reply, err = askOffline(bufio.NewReader(os.Stdin), os.Stdout, r, tracesPath); err != nil {
			return fail(exitUsage, "%v", err)
		}
	}

	g := r.Score(reply)
	rr := <-ref
	if rr.err != nil {
		return fail(exitRuntime, "the analyzer on the round: %v", rr.err)
	}
	played := train.Played{Round: r.ID, At: time.Now().UTC(), Case: r.Case.Name, Stack: r.Case.Stack, Pathology: r.Case.Pathology,
		Reply: reply, Marks: g, Random: r.Random(), Analyzer: r.Score(rr.reply).Score}
	rec, err := train.ReadRecord(recPath, o.learner)
	if err != nil {
		return fail(exitRuntime, "%v", err)
	}
	rec.Rounds = append(rec.Rounds, played)
	if err := rec.Save(recPath); err != nil {
		return fail(exitRuntime, "%v", err)
	}
	svc, op := r.Where()
	key := AnswerKey{Case: r.Case.Name, Stack: r.Case.Stack, Pathology: r.Case.Pathology, Service: svc, Operation: op, Scenario: r.Case.Scenario,
		Variant: r.Case.Variant, Fix: r.Case.Fix, Services: r.Mask.Services, Analyzer: rr.reply}
	sum := train.Summarize(rec.Rounds)
	if o.json {
		json.NewEncoder(os.Stdout).Encode(Graded{Round: r.ID, Grade: g, Random: played.Random, Analyzer: played.Analyzer, Key: key, Record: sum})
	} else {
		printGrade(os.Stdout, g, played, key)
		fmt.Printf("\nYour record (%s), beside random guessing and tracelab analyze on the same rounds:\n", recPath)
		sum.Print(os.Stdout)
	}
	if !g.Perfect() {
		return exitFail
	}
	return exitOK
}

type refResult struct {
	reply train.Reply
	err   error
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// readAnswer reads the reply: a file, or stdin for "-".
func readAnswer(path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(os.Stdin)
	}
	return os.ReadFile(path)
}

// serveRound serves the round's traces in the blind explorer until stop.
func serveRound(addr string, r *train.Offline) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %v (--addr picks another)", addr, err)
	}
	srv := &http.Server{Handler: explorer.New(explorer.Config{Round: &explorer.Round{ID: r.ID, Traces: r.Traces()}, Log: os.Stderr}),
		ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	fmt.Printf("Training round %s (level %d; 'tracelab train --seed %d --level %d' replays it).\n", r.ID, r.Level, r.Seed, r.Level)
	fmt.Printf("Read its traces in the explorer: http://%s/#/search/round\n", ln.Addr())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}, nil
}

// askOffline asks the round's levels on out, reading the answers from in.
func askOffline(in *bufio.Reader, out io.Writer, r *train.Offline, traces string) (train.Reply, error) {
	var a train.Reply
	menu := func(title string, list []string) {
		fmt.Fprintln(out, "\n"+title)
		for i, c := range list {
			fmt.Fprintf(out, "  %d) %s\n", i+1, c)
		}
	}
	fmt.Fprintf(out, "The same traces as OTLP JSON: %s\n", traces)
	var err error
	for _, l := range r.Levels() {
		switch l {
		case train.LevelDetect:
			menu("Which pathology do the traces show?", r.Choices.Pathology)
			a.Pathology, err = ask(in, out, "pathology> ")
		case train.LevelLocalize:
			menu("In which service?", r.Choices.Service)
			if a.Service, err = ask(in, out, "service> "); err != nil {
				break
			}
			if len(r.Choices.Operation) <= 30 {
				menu("Which operation?", r.Choices.Operation)
			} else {
				fmt.Fprintln(out, "\nWhich operation? (as the explorer names it)")
			}
			if a.Operation, err = ask(in, out, "operation> "); err != nil {
				break
			}
			var spans string
			spans, err = ask(in, out, "span ids that show it (optional, separated by spaces)> ")
			a.Spans = strings.Fields(spans)
		case train.LevelExplain:
			menu("What makes it slow?", r.Choices.Mechanism)
			a.Mechanism, err = ask(in, out, "mechanism> ")
		case train.LevelFix:
			menu("Which setting of the service removes it?", r.Choices.Fix)
			a.Fix, err = ask(in, out, "fix> ")
		}
		if err != nil {
			return a, err
		}
	}
	return a, nil
}

// ask prompts and reads one line; an empty line is an empty answer.
func ask(in *bufio.Reader, out io.Writer, prompt string) (string, error) {
	fmt.Fprint(out, prompt)
	line, err := in.ReadString('\n')
	if err != nil && !(errors.Is(err, io.EOF) && line != "") {
		return "", errors.New("train: no answer on standard input")
	}
	return strings.TrimSpace(line), nil
}

func printGrade(w io.Writer, g train.Marks, p train.Played, key AnswerKey) {
	fmt.Fprintf(w, "\nScore %.0f%% (random guessing %.0f%%, tracelab analyze %.0f%% on this round)\n", 100*g.Score, 100*p.Random, 100*p.Analyzer)
	for _, l := range g.Levels {
		fmt.Fprintf(w, "  %d %-9s %4.0f%%  %s\n", l.Level, l.Name, 100*l.Score, l.Why)
	}
	fmt.Fprintf(w, "The round was the recording %s (%s)", key.Case, key.Stack)
	if key.Scenario != "" {
		fmt.Fprintf(w, ": scenario %s, variant %s; its guide is scenarios/%s/README.md", key.Scenario, key.Variant, key.Scenario)
	}
	fmt.Fprintln(w, ".")
	if len(key.Services) > 0 {
		fmt.Fprintf(w, "Its services were renamed: %v\n", key.Services)
	}
}

// printReference prints random guessing's expected score and the
// analyzer's on every round of the set, per pathology.
func printReference(set *train.Set, level int) int {
	var rounds []train.Played
	for _, c := range set.Cases {
		r, err := set.Round(c, rand.New(rand.NewSource(1)), 1, level)
		if err != nil {
			return fail(exitUsage, "%v", err)
		}
		a, err := r.AnalyzerReply()
		if err != nil {
			return fail(exitRuntime, "%v", err)
		}
		g := r.Score(a)
		rounds = append(rounds, train.Played{Case: c.Name, Pathology: c.Pathology, Marks: g, Random: r.Random(), Analyzer: g.Score})
	}
	fmt.Printf("Every round of the set at level %d; \"detected\" and \"score\" are the analyzer's:\n", level)
	train.Summarize(rounds).Print(os.Stdout)
	return exitOK
}
