package train

import (
	"math/rand"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tracelab/internal/labtest"
	"tracelab/pkg/scenario"
)

// loadSet reads the checkout's round set.
func loadSet(t *testing.T) *Set {
	t.Helper()
	root, _ := filepath.Abs("../../..")
	co := labtest.Open(t, root)
	var ss []*scenario.Scenario
	for _, n := range scenario.List(co) {
		s, err := scenario.Load(co, n)
		if err != nil {
			t.Fatal(err)
		}
		ss = append(ss, s)
	}
	set, err := LoadSet(root, ss)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// The make-up of the set: at least 30 rounds, every one of the
// five pathologies, 6 clean rounds and 8 recorded from applications the
// lab did not write. Each lab round knows its scenario, and each of its
// rounds with a pathology has a fix among the fix level's choices.
func TestTheSetCoversThePathologies(t *testing.T) {
	set := loadSet(t)
	per, notLab := set.Counts()
	t.Logf("%d rounds: %v; %d from other applications; skipped %v", len(set.Cases), per, notLab, set.Skipped)
	if len(set.Cases) < 30 || per[None] < 6 || notLab < 8 {
		t.Errorf("%d rounds, %d clean, %d from other applications; want at least 30, 6, 8", len(set.Cases), per[None], notLab)
	}
	for _, p := range []string{"n-plus-one", "event-loop-blocking", "chatty-db", "kafka-producer-contention", "dispatch-overhead"} {
		if per[p] == 0 {
			t.Errorf("no round of %s", p)
		}
	}
	for _, c := range set.Cases {
		if !c.Lab() {
			continue
		}
		if c.Scenario == "" || c.Variant == "" {
			t.Errorf("%s: scenario %q variant %q", c.Name, c.Scenario, c.Variant)
		}
		if (c.Pathology != None) != (len(c.Fix) > 0) {
			t.Errorf("%s (%s): fix %v", c.Name, c.Pathology, c.Fix)
		}
		for _, f := range c.Fix {
			if !slices.Contains(set.Fixes, f) {
				t.Errorf("%s: fix %s is not among the choices", c.Name, f)
			}
		}
	}
}

// Every round can be answered right from what it shows: the labelled
// service is among the service choices and some operation choice matches
// the label (the grader compares the same masked names), and full marks
// need no more than the choice lists.
func TestEveryRoundIsAnswerable(t *testing.T) {
	skipUnderRace(t)
	set := loadSet(t)
	for _, c := range set.Cases {
		r, err := set.Round(c, rand.New(rand.NewSource(1)), 1, LevelFix)
		if err != nil {
			t.Fatal(err)
		}
		if c.Pathology == None {
			continue
		}
		l := r.labels()[0]
		a := Reply{Pathology: c.Pathology, Service: l.Service, Mechanism: Mechanisms[mechanismsOf[c.Pathology][0]]}
		for _, op := range r.Choices.Operation {
			if opMatches(l, op) {
				a.Operation = op
				break
			}
		}
		if len(c.Fix) > 0 {
			a.Fix = c.Fix[0]
		}
		if g := r.Score(a); !g.Perfect() {
			t.Errorf("%s: the best reply from the choices %+v scores %+v", c.Name, a, g)
		}
		if c.Lab() {
			for orig := range r.Mask.Services {
				if slices.Contains(r.Choices.Service, orig) {
					t.Errorf("%s: service %s is not renamed", c.Name, orig)
				}
			}
		}
	}
}

// A seed replays its round, masking included; different seeds reach
// every case.
func TestDrawIsDeterministic(t *testing.T) {
	set := loadSet(t)
	seen := map[string]bool{}
	for seed := int64(0); seed < 400; seed++ {
		c, _ := set.Pick(seed)
		seen[c.Name] = true
	}
	for seed := int64(0); seed < 400; seed += 40 {
		a, err := set.Draw(seed, LevelDetect)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := set.Draw(seed, LevelDetect)
		if a.Case != b.Case || !strings.EqualFold(strings.Join(a.Choices.Pathology, ","), strings.Join(b.Choices.Pathology, ",")) ||
			len(a.Mask.Services) != len(b.Mask.Services) {
			t.Fatalf("seed %d drew %s and %s", seed, a.Case.Name, b.Case.Name)
		}
		for k, v := range a.Mask.Services {
			if b.Mask.Services[k] != v {
				t.Fatalf("seed %d renamed %s to %s and %s", seed, k, v, b.Mask.Services[k])
			}
		}
	}
	if len(seen) != len(set.Cases) {
		t.Errorf("400 seeds drew %d of %d cases", len(seen), len(set.Cases))
	}
}

// skipUnderRace skips a test that reads every recording of the set: under
// the race detector it costs minutes, and it exercises no concurrency (make
// test-go runs it without the detector; raceDetector says why).
func skipUnderRace(t *testing.T) {
	t.Helper()
	if raceDetector {
		t.Skip("reads every recording: make test-go runs it without -race")
	}
}
