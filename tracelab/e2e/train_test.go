//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"tracelab/pkg/scenario"
	"tracelab/pkg/train"
)

// trainRun runs `tracelab train --live ARGS` with the given answers on
// stdin: the round on a run of the stack (offline rounds are the default).
func trainRun(t *testing.T, answers string, args ...string) run {
	t.Helper()
	return tracelabWithInput(t, answers, nil, append([]string{"train", "--live"}, args...)...)
}

// TestTrainGradesRightAndWrong plays one full round with scripted answers:
// the seed is chosen so that the round is nplus1's baseline (the cheapest
// run with a pathology); the right diagnosis is graded right, and the same
// round, graded again with a wrong one, is graded wrong. One smoke run.
func TestTrainGradesRightAndWrong(t *testing.T) {
	var all []*scenario.Scenario
	co := checkout(t)
	for _, n := range scenario.List(co) {
		s, err := scenario.Load(co, n)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, s)
	}
	cands := train.Candidates(all)
	want := train.Candidate{Scenario: "nplus1", Variant: "baseline"}
	seed := int64(1)
	for ; train.Pick(cands, seed) != want; seed++ {
	}

	r := trainRun(t, "n-plus-one\ncatalog\n", "--seed", strconv.FormatInt(seed, 10))
	t.Log(r.stdout)
	if r.code != 0 || !strings.Contains(r.stdout, "RIGHT: it was n-plus-one in catalog") {
		t.Fatalf("right answer: exit %d, stderr %s", r.code, r.stderr)
	}
	before, _, _ := strings.Cut(r.stdout, "Which pathology")
	for _, leak := range []string{"nplus1", "baseline", "n-plus-one"} {
		if strings.Contains(before, leak) {
			t.Errorf("the round says %q before the trainee answers", leak)
		}
	}
	if strings.Contains(r.stderr, "nplus1") || strings.Contains(r.stderr, "baseline") {
		t.Error("the progress lines name the scenario or the variant")
	}
	var roundFile, blind string
	for _, line := range strings.Split(r.stdout, "\n") {
		if p, ok := strings.CutPrefix(line, "round: "); ok {
			roundFile = p
		}
		if _, p, ok := strings.Cut(line, "(it does not say what it found): "); ok {
			blind = p
		}
	}
	html, err := os.ReadFile(blind)
	if err != nil {
		t.Fatalf("training report: %v", err)
	}
	for _, leak := range []string{"nplus1", "n-plus-one", "wf-row finding", `id="verdict"`} {
		if bytes.Contains(html, []byte(leak)) {
			t.Errorf("the training report shows %q", leak)
		}
	}
	if !bytes.Contains(html, []byte(`class="crit"`)) {
		t.Error("the training report has no waterfall")
	}

	w := trainRun(t, "chatty-db\norders\n", "--grade", roundFile)
	t.Log(w.stdout)
	if w.code != 1 || !strings.Contains(w.stdout, "WRONG: you said chatty-db; it was n-plus-one in catalog") {
		t.Fatalf("wrong answer: exit %d, %s %s", w.code, w.stdout, w.stderr)
	}
	w = trainRun(t, "n+1\npricing\n", "--grade", roundFile)
	if w.code != 1 || !strings.Contains(w.stdout, "wrong place") {
		t.Fatalf("right pathology in the wrong service: exit %d, %s", w.code, w.stdout)
	}
	var saved map[string]any
	data, _ := os.ReadFile(roundFile)
	if json.Unmarshal(data, &saved) != nil || saved["correct"] != true {
		t.Errorf("round.json: %s", data)
	}
	assertNothingLeft(t)
}
