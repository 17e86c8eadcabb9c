package train

import (
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"tracelab/pkg/detect"
)

// roundOf prepares the named case's round at a level.
func roundOf(t *testing.T, set *Set, name string, level int) *Offline {
	t.Helper()
	for _, c := range set.Cases {
		if c.Name == name {
			r, err := set.Round(c, rand.New(rand.NewSource(3)), 3, level)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
	}
	t.Fatalf("no case %s in the set", name)
	return nil
}

// Rounds played at every level with right, half-right and wrong answers
// get the partial credit each level gives, and the levels a round does
// not have are not asked.
func TestLevelsGradeWithPartialCredit(t *testing.T) {
	set := loadSet(t)
	n1 := roundOf(t, set, "lab-nplus1-baseline", LevelFix)
	svc, _ := n1.Where()
	op := "GET /prices/{id}" // the label's operation, /prices/{id}, is part of it
	right := Reply{Pathology: "n-plus-one", Service: svc, Operation: op, Mechanism: Mechanisms[0], Fix: "CATALOG_FETCH_MODE=batch"}
	cases := []struct {
		name   string
		r      *Offline
		a      Reply
		levels []float64
	}{
		{"all right", n1, right, []float64{1, 1, 1, 1}},
		{"by numbers", n1, Reply{Pathology: strconv.Itoa(1 + index(n1.Choices.Pathology, "n-plus-one")), Service: strconv.Itoa(1 + index(n1.Choices.Service, svc)),
			Operation: op, Mechanism: "1", Fix: strconv.Itoa(1 + index(n1.Choices.Fix, "CATALOG_FETCH_MODE=batch"))}, []float64{1, 1, 1, 1}},
		// n-plus-one-or-redundant is the same repeat with its values unseen:
		// half the detect level. redundant-call is a different pathology,
		// with a different fix (cache, not batch): nothing.
		{"related detector, wrong service", n1, Reply{Pathology: "n-plus-one-or-redundant", Service: "pricing", Operation: op, Mechanism: Mechanisms[1], Fix: "CATALOG_FETCH_MODE=sequential"},
			[]float64{0.5, 0.5, 0, 0}},
		{"unrelated detector", n1, Reply{Pathology: "redundant-call", Service: svc, Operation: op}, []float64{0, 1, 0, 0}},
		{"the recorded service name is not the round's", n1, Reply{Pathology: "n-plus-one", Service: "catalog", Operation: "GET /items"}, []float64{1, 0, 0, 0}},
		{"none", n1, Reply{Pathology: None}, []float64{0, 0, 0, 0}},
		{"span ids: one of two right", n1, Reply{Pathology: "n-plus-one", Service: svc, Operation: op,
			Spans: []string{spanOf(t, n1, svc, "/prices/"), spanOf(t, n1, svc, "/items")}}, []float64{1, 2.5 / 3, 0, 0}},
		{"level 1 asks only detect", roundOf(t, set, "lab-nplus1-baseline", LevelDetect), Reply{Pathology: "n-plus-one", Service: "wrong"}, []float64{1}},
		{"a clean round asks only detect", roundOf(t, set, "lab-nplus1-fixed", LevelFix), Reply{Pathology: "none"}, []float64{1}},
		{"a clean round, a pathology named", roundOf(t, set, "lab-nplus1-fixed", LevelFix), Reply{Pathology: "n-plus-one", Service: svc}, []float64{0}},
		// Another application's round has no fix level: it has no scenario.
		{"another application's round", roundOf(t, set, "go-grpc-nplus1", LevelFix), Reply{Pathology: "n-plus-one", Service: "frontend", Operation: "inventory.Inventory/GetItem",
			Mechanism: Mechanisms[0], Fix: "CATALOG_FETCH_MODE=batch"}, []float64{1, 1, 1}},
		{"unrecorded values: either mechanism explains it", roundOf(t, set, "python-django-nplus1", LevelExplain), Reply{Pathology: "n-plus-one", Service: "django-books",
			Operation: "SELECT books_author", Mechanism: Mechanisms[1]}, []float64{0.5, 1, 1}},
	}
	for _, c := range cases {
		g := c.r.Score(c.a)
		if len(g.Levels) != len(c.levels) {
			t.Errorf("%s: levels %+v, want %d", c.name, g.Levels, len(c.levels))
			continue
		}
		sum := 0.0
		for i, want := range c.levels {
			sum += want
			if math.Abs(g.Levels[i].Score-want) > 1e-9 {
				t.Errorf("%s: %s scored %v (%s), want %v", c.name, g.Levels[i].Name, g.Levels[i].Score, g.Levels[i].Why, want)
			}
		}
		if math.Abs(g.Score-sum/float64(len(c.levels))) > 1e-9 {
			t.Errorf("%s: total %v, want the mean %v", c.name, g.Score, sum/float64(len(c.levels)))
		}
	}
}

// Random guessing's expectation, computed from the lists, is what
// guessing scores on average: checked against the exact sum for detect,
// and against a simulation for a round with every level.
func TestRandomIsTheExpectedScoreOfGuessing(t *testing.T) {
	set := loadSet(t)
	clean := roundOf(t, set, "lab-nplus1-fixed", LevelFix)
	if got, want := clean.Random(), 1/float64(len(clean.Choices.Pathology)); math.Abs(got-want) > 1e-12 {
		t.Errorf("clean round: random %v, want 1/%d", got, len(clean.Choices.Pathology))
	}
	r := roundOf(t, set, "lab-nplus1-baseline", LevelFix)
	rng := rand.New(rand.NewSource(9))
	pick := func(l []string) string { return l[rng.Intn(len(l))] }
	const n = 20000
	sum := 0.0
	for range n {
		sum += r.Score(Reply{Pathology: pick(r.Choices.Pathology), Service: pick(r.Choices.Service), Operation: pick(r.Choices.Operation),
			Mechanism: pick(r.Choices.Mechanism), Fix: pick(r.Choices.Fix)}).Score
	}
	// The score is in [0,1], so its standard deviation is at most 0.5 and
	// the mean of n is within 4 standard errors (2/sqrt(n) = 0.014) but
	// for 1 time in 15,000.
	if got := r.Random(); math.Abs(sum/n-got) > 2/math.Sqrt(n) {
		t.Errorf("computed %v, simulated %v", got, sum/n)
	}
}

// Every detector has a mechanism: a new detector fails here until the
// explain level can be answered for it.
func TestEveryDetectorHasAMechanism(t *testing.T) {
	for _, d := range detect.All() {
		if len(mechanismsOf[d.ID()]) == 0 {
			t.Errorf("detector %s has no mechanism in mechanismsOf", d.ID())
		}
	}
}

func index(l []string, s string) int {
	for i, x := range l {
		if x == s {
			return i
		}
	}
	return -100
}

// spanOf is the id of a span of the service whose operation has op in it.
func spanOf(t *testing.T, r *Offline, service, op string) string {
	t.Helper()
	for _, tr := range r.Traces() {
		for _, sp := range tr.Spans {
			if sp.Service == service && strings.Contains(tr.Operation(sp), op) {
				return sp.SpanID
			}
		}
	}
	t.Fatalf("no span of %s", op)
	return ""
}
