package train

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"tracelab/pkg/result"
	"tracelab/pkg/scenario"
)

// Round is what a training round records in its folder (round.json), and
// what `tracelab train --grade` reads back to grade new answers.
type Round struct {
	Seed     int64     `json:"seed"`
	Picked   Candidate `json:"picked"`
	Truth    Truth     `json:"truth"`
	Answer   Answer    `json:"answer"`
	Correct  bool      `json:"correct"`
	Feedback string    `json:"feedback"`
	Report   string    `json:"report"`
	Result   string    `json:"result"`
}

// NewRound picks, from the seed, a variant of one of the scenarios, and
// returns the round with that scenario.
func NewRound(scenarios []*scenario.Scenario, seed int64) (*Round, *scenario.Scenario, error) {
	cands := Candidates(scenarios)
	if len(cands) == 0 {
		return nil, nil, errors.New("no scenario has a baseline or a fixed variant")
	}
	r := &Round{Seed: seed, Picked: Pick(cands, seed)}
	for _, s := range scenarios {
		if s.Name == r.Picked.Scenario {
			r.Truth = TruthOf(s, r.Picked.Variant)
			return r, s, nil
		}
	}
	panic("train: Pick returned a scenario that is not among them")
}

// ReadRound reads a finished round's round.json.
func ReadRound(path string) (*Round, error) {
	var r Round
	data, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(data, &r)
	}
	if err != nil || r.Picked.Scenario == "" {
		return nil, fmt.Errorf("%s is not a training round.json", path)
	}
	return &r, nil
}

// Save writes the round as round.json.
func (r *Round) Save(path string) error {
	data, _ := json.MarshalIndent(r, "", "  ")
	return os.WriteFile(path, data, 0o644)
}

// Ask puts the round's questions on out and reads the answers from in (the
// pathology, then its service unless there is none), then grades them.
func (r *Round) Ask(in *bufio.Reader, out io.Writer) error {
	fmt.Fprintln(out, "\nWhich pathology does the trace show?")
	for i, p := range Pathologies {
		fmt.Fprintf(out, "  %d) %s\n", i+1, p)
	}
	var err error
	if r.Answer.Pathology, err = ask(in, out, "pathology> "); err != nil {
		return err
	}
	r.Answer.Service = ""
	if NormalizePathology(r.Answer.Pathology) != None {
		if r.Answer.Service, err = ask(in, out, "in which service? "); err != nil {
			return err
		}
	}
	r.Correct, r.Feedback = Grade(r.Truth, r.Answer)
	return nil
}

func ask(in *bufio.Reader, out io.Writer, prompt string) (string, error) {
	fmt.Fprint(out, prompt)
	line, err := in.ReadString('\n')
	if err != nil && (err != io.EOF || strings.TrimSpace(line) == "") {
		return "", errors.New("no answer on standard input")
	}
	fmt.Fprintln(out)
	return strings.TrimSpace(line), nil
}

// ExampleTrace is the trace of a finding's example, which the round's
// report shows in its waterfall, or else any trace of the run.
func ExampleTrace(v result.VariantResult) string {
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
