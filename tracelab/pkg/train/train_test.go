package train

import (
	"path/filepath"
	"testing"

	"tracelab/internal/labtest"
	"tracelab/pkg/scenario"
)

func TestGrade(t *testing.T) {
	n1 := Truth{Pathology: "n-plus-one", Service: "catalog"}
	cases := []struct {
		truth Truth
		a     Answer
		ok    bool
	}{
		{n1, Answer{"n-plus-one", "catalog"}, true},
		{n1, Answer{"N+1", " Catalog "}, true},
		{n1, Answer{"1", "catalog"}, true},
		{n1, Answer{"n-plus-one", "pricing"}, false},
		{n1, Answer{"chatty-db", "catalog"}, false},
		{n1, Answer{"none", ""}, false},
		{n1, Answer{"slow", "catalog"}, false},
		{Truth{Pathology: None}, Answer{"healthy", ""}, true},
		{Truth{Pathology: None}, Answer{"dispatch-overhead", "gateway"}, false},
	}
	for _, c := range cases {
		if ok, why := Grade(c.truth, c.a); ok != c.ok {
			t.Errorf("%+v for %+v: %v (%s), want %v", c.a, c.truth, ok, why, c.ok)
		}
	}
}

func TestPickIsRandomButReplayable(t *testing.T) {
	root, _ := filepath.Abs("../../..")
	var ss []*scenario.Scenario
	co := labtest.Open(t, root)
	for _, n := range scenario.List(co) {
		s, err := scenario.Load(co, n)
		if err != nil {
			t.Fatal(err)
		}
		ss = append(ss, s)
	}
	cands := Candidates(ss)
	if len(cands) != 2*len(ss) {
		t.Fatalf("%d candidates for %d scenarios", len(cands), len(ss))
	}
	seen := map[Candidate]bool{}
	for seed := int64(0); seed < 200; seed++ {
		c := Pick(cands, seed)
		if c != Pick(cands, seed) {
			t.Fatal("the same seed picked two rounds")
		}
		seen[c] = true
	}
	if len(seen) != len(cands) {
		t.Errorf("200 seeds picked %d of %d candidates", len(seen), len(cands))
	}
	for _, s := range ss {
		if got := TruthOf(s, "baseline"); got.Pathology == None || got.Service == "" {
			t.Errorf("%s baseline: truth %+v", s.Name, got)
		}
		if got := TruthOf(s, "fixed"); got.Pathology != None {
			t.Errorf("%s fixed: truth %+v", s.Name, got)
		}
	}
}
