package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

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
