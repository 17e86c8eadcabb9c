// Package train runs trace-reading training rounds: it picks a scenario and
// a variant at random, and grades a trainee's reading of its traces against
// what the scenario is known to contain.
package train

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"

	"tracelab/pkg/scenario"
)

// None is the answer for a run without a pathology (a fixed variant).
const None = "none"

// Candidate is one scenario variant a round can pick.
type Candidate struct {
	Scenario string `json:"scenario"`
	Variant  string `json:"variant"`
}

// Truth is what a round's run contains, by construction of its scenario:
// the detector id of the pathology (or None) and the service it is in.
type Truth struct {
	Pathology string `json:"pathology"`
	Service   string `json:"service,omitempty"`
}

// Answer is what the trainee said.
type Answer struct {
	Pathology string `json:"pathology"`
	Service   string `json:"service,omitempty"`
}

// Candidates lists every scenario's baseline and fixed variants, in a
// stable order so that a seed always picks the same round.
func Candidates(scenarios []*scenario.Scenario) []Candidate {
	sort.Slice(scenarios, func(i, j int) bool { return scenarios[i].Name < scenarios[j].Name })
	var out []Candidate
	for _, s := range scenarios {
		for _, v := range []string{"baseline", "fixed"} {
			if _, ok := s.Variants[v]; ok {
				out = append(out, Candidate{s.Name, v})
			}
		}
	}
	return out
}

// Pick chooses a candidate from the seed.
func Pick(cands []Candidate, seed int64) Candidate {
	return cands[rand.New(rand.NewSource(seed)).Intn(len(cands))]
}

// TruthOf reads the truth from the scenario's expectations: the first
// finding the variant must show, or None when it must show none.
func TruthOf(s *scenario.Scenario, variant string) Truth {
	if e, ok := s.Expectations.Variants[variant]; ok && len(e.Present) > 0 {
		return Truth{Pathology: e.Present[0].Detector, Service: e.Present[0].Service}
	}
	return Truth{Pathology: None}
}

// Pathologies are the answers a trainee can give, in menu order.
var Pathologies = []string{"n-plus-one", "chatty-db", "event-loop-blocking", "kafka-producer-contention", "dispatch-overhead", None}

// aliases are the other names people use for each pathology.
var aliases = map[string]string{
	"n+1": "n-plus-one", "nplus1": "n-plus-one", "nplusone": "n-plus-one", "n plus one": "n-plus-one",
	"chatty": "chatty-db", "chatty db": "chatty-db", "chattydb": "chatty-db",
	"eventloop": "event-loop-blocking", "event-loop": "event-loop-blocking", "event loop": "event-loop-blocking",
	"blocking": "event-loop-blocking", "blocked event loop": "event-loop-blocking",
	"kafka": "kafka-producer-contention", "kafka-batching": "kafka-producer-contention", "producer contention": "kafka-producer-contention",
	"antpath": "dispatch-overhead", "dispatch": "dispatch-overhead", "path matching": "dispatch-overhead",
	"no": None, "nothing": None, "healthy": None, "fine": None, "no pathology": None,
}

// NormalizePathology maps an answer (a detector id, a menu number, a
// scenario name or a common alias) to a detector id or None; "" if it is
// none of them.
func NormalizePathology(a string) string {
	a = strings.ToLower(strings.TrimSpace(a))
	for i, p := range Pathologies {
		if a == p || a == fmt.Sprint(i+1) {
			return p
		}
	}
	return aliases[a]
}

// Grade tells whether the answer is right and says why.
func Grade(t Truth, a Answer) (bool, string) {
	got := NormalizePathology(a.Pathology)
	if got == "" {
		return false, fmt.Sprintf("%q is not a pathology the lab knows (%s)", a.Pathology, strings.Join(Pathologies, ", "))
	}
	if got != t.Pathology {
		if t.Pathology == None {
			return false, fmt.Sprintf("you said %s, but this run had no pathology: it was a fixed variant", got)
		}
		return false, fmt.Sprintf("you said %s; it was %s in %s", got, t.Pathology, t.Service)
	}
	if t.Pathology == None {
		return true, "this run had no pathology (a fixed variant)"
	}
	if !strings.EqualFold(strings.TrimSpace(a.Service), t.Service) {
		return false, fmt.Sprintf("right pathology (%s), wrong place: it was in %s, you said %q", got, t.Service, a.Service)
	}
	return true, fmt.Sprintf("it was %s in %s", t.Pathology, t.Service)
}
