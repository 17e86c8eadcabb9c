package train

import (
	"bufio"
	"path/filepath"
	"strings"
	"testing"

	"tracelab/pkg/scenario"
)

// A round asks for the service only when the answer names a pathology,
// grades the answers, and reads back as it was saved (train --grade).
func TestARoundAsksGradesAndReadsBack(t *testing.T) {
	nplus1 := &scenario.Scenario{Name: "nplus1", Variants: map[string]scenario.Variant{"baseline": {}}}
	nplus1.Expectations.Variants = map[string]scenario.VariantExpectation{
		"baseline": {Present: []scenario.FindingExpectation{{Detector: "n-plus-one", Service: "catalog"}}},
	}
	r, s, err := NewRound([]*scenario.Scenario{nplus1}, 7)
	if err != nil || s != nplus1 || r.Truth != (Truth{"n-plus-one", "catalog"}) {
		t.Fatalf("NewRound: %+v, %v, %v", r, s, err)
	}
	var out strings.Builder
	if err := r.Ask(bufio.NewReader(strings.NewReader("1\npricing\n")), &out); err != nil {
		t.Fatal(err)
	}
	if r.Correct || r.Answer != (Answer{"1", "pricing"}) || !strings.Contains(out.String(), "in which service?") {
		t.Errorf("answer %+v graded %v (%s); questions:\n%s", r.Answer, r.Correct, r.Feedback, out.String())
	}
	path := filepath.Join(t.TempDir(), "round.json")
	if err := r.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := ReadRound(path)
	if err != nil || *back != *r {
		t.Fatalf("read back %+v, %v; want %+v", back, err, r)
	}

	out.Reset()
	if err := back.Ask(bufio.NewReader(strings.NewReader("none\n")), &out); err != nil {
		t.Fatal(err)
	}
	if back.Correct || back.Answer.Service != "" || strings.Contains(out.String(), "in which service?") {
		t.Errorf("none: answer %+v graded %v; questions:\n%s", back.Answer, back.Correct, out.String())
	}
	if err := back.Ask(bufio.NewReader(strings.NewReader("")), &out); err == nil {
		t.Error("no answer on stdin was taken for one")
	}
	if _, _, err := NewRound(nil, 1); err == nil {
		t.Error("a round was picked from no scenarios")
	}
}
