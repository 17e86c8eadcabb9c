package train

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"tracelab/corpus"
	"tracelab/pkg/detect"
	"tracelab/pkg/trace"
)

// The levels of an offline round, each graded on its own. A round at
// level N asks levels 1 to N that apply to it: a clean round (answer
// "none") has nothing to localize, explain or fix, and only the lab's own
// scenario rounds have a fixed variant whose setting removes it.
const (
	LevelDetect   = 1 // which pathology (a detector id), or none
	LevelLocalize = 2 // which service and operation (and, optionally, spans)
	LevelExplain  = 3 // the mechanism, from Mechanisms
	LevelFix      = 4 // the setting of the scenario's fixed variant that removes it
)

// LevelNames are the levels' names in JSON, by level.
var LevelNames = map[int]string{LevelDetect: "detect", LevelLocalize: "localize", LevelExplain: "explain", LevelFix: "fix"}

// Mechanisms are the explain level's choices: what makes each pathology
// slow, in words that do not name a detector.
var Mechanisms = []string{
	"calls made one after another, one per item",
	"the same call repeated with the same values",
	"many small database round trips in sequence",
	"a blocked event-loop thread",
	"too small a producer batch",
	"path matching on the CPU",
}

// mechanismsOf are the mechanisms that explain each detector's pathology.
// n-plus-one-or-redundant is the detector for repeats whose values the
// spans do not show: either of the two mechanisms explains it. Detectors
// that share a mechanism are related: naming the other gets half the
// detect level.
var mechanismsOf = map[string][]int{
	"n-plus-one":                {0},
	"redundant-call":            {1},
	"n-plus-one-or-redundant":   {0, 1},
	"chatty-db":                 {2},
	"event-loop-blocking":       {3},
	"kafka-producer-contention": {4},
	"dispatch-overhead":         {5},
}

// Detectors is the detect level's choice list: every detector id, then None.
func Detectors() []string {
	var ids []string
	for _, d := range detect.All() {
		ids = append(ids, d.ID())
	}
	return append(ids, None)
}

// related says whether two detectors share a mechanism.
func related(a, b string) bool {
	for _, m := range mechanismsOf[a] {
		if slices.Contains(mechanismsOf[b], m) {
			return true
		}
	}
	return false
}

// Reply is an answer to an offline round. Choices may be given by their
// text or by their number in the round's list (1 first).
type Reply struct {
	Pathology string   `json:"pathology"`
	Service   string   `json:"service,omitempty"`
	Operation string   `json:"operation,omitempty"`
	Spans     []string `json:"spans,omitempty"` // span ids that show it
	Mechanism string   `json:"mechanism,omitempty"`
	Fix       string   `json:"fix,omitempty"`
}

// LevelGrade is one level's score, 0 to 1, and why.
type LevelGrade struct {
	Level int     `json:"level"`
	Name  string  `json:"name"`
	Score float64 `json:"score"`
	Why   string  `json:"why"`
}

// Marks is a graded reply: each level asked, and their mean.
type Marks struct {
	Levels []LevelGrade `json:"levels"`
	Score  float64      `json:"score"`
}

// Perfect says whether every level asked got full marks.
func (g Marks) Perfect() bool { return g.Score == 1 }

// choice resolves an answer given as a number into the list's text.
func choice(list []string, a string) string {
	a = strings.TrimSpace(a)
	if n, err := strconv.Atoi(a); err == nil && n >= 1 && n <= len(list) {
		return list[n-1]
	}
	return a
}

// Levels are the levels the round asks, in order.
func (r *Offline) Levels() []int {
	var out []int
	for l := LevelDetect; l <= r.Level; l++ {
		if l == LevelDetect || r.Case.Pathology != None && (l != LevelFix || len(r.Case.Fix) > 0) {
			out = append(out, l)
		}
	}
	return out
}

// labels are the case's labels as the round shows them (masked). A
// label's operation that no span's operation matches is dropped: it is
// not a span a reader can point at (dispatch-overhead's "dispatch" is the
// time before the handler), so the service alone localizes it.
func (r *Offline) labels() []corpus.Label {
	out := make([]corpus.Label, len(r.Case.Labels))
	for i, l := range r.Case.Labels {
		l.Service, l.Operation = r.Mask.Service(l.Service), r.Mask.Name(l.Operation)
		if !slices.ContainsFunc(r.ops, func(op string) bool { return opMatches(l, op) }) {
			l.Operation = ""
		}
		out[i] = l
	}
	return out
}

// Where is the labelled service and operation, as the round names them
// (the first label's, where a case labels several places).
func (r *Offline) Where() (service, operation string) {
	if ls := r.labels(); len(ls) > 0 {
		return ls[0].Service, ls[0].Operation
	}
	return "", ""
}

// opMatches says whether an operation names a label's: the label's
// operation, normalized as the corpus compares them, is part of it.
func opMatches(l corpus.Label, op string) bool {
	return strings.Contains(corpus.NormalizeOperation(op), corpus.NormalizeOperation(l.Operation))
}

// Score grades a reply, level by level.
func (r *Offline) Score(a Reply) Marks {
	var g Marks
	truth := r.Case.Pathology
	for _, l := range r.Levels() {
		lg := LevelGrade{Level: l, Name: LevelNames[l]}
		switch l {
		case LevelDetect:
			got := choice(r.Choices.Pathology, a.Pathology)
			if n := NormalizePathology(got); n != "" {
				got = n
			}
			switch {
			case got == truth:
				lg.Score, lg.Why = 1, "right: "+truth
			case got != None && truth != None && related(got, truth):
				lg.Score, lg.Why = 0.5, fmt.Sprintf("half: you said %s, it was %s (the same kind of repeat)", got, truth)
			default:
				lg.Why = fmt.Sprintf("you said %q, it was %s", got, truth)
			}
		case LevelLocalize:
			lg.Score, lg.Why = r.localize(a)
		case LevelExplain:
			got := choice(Mechanisms, a.Mechanism)
			var right []string
			for _, m := range mechanismsOf[truth] {
				right = append(right, Mechanisms[m])
			}
			if slices.Contains(right, got) {
				lg.Score, lg.Why = 1, "right: "+got
			} else {
				lg.Why = fmt.Sprintf("you said %q; it was %q", got, strings.Join(right, `" or "`))
			}
		case LevelFix:
			got := choice(r.Choices.Fix, a.Fix)
			if slices.Contains(r.Case.Fix, got) {
				lg.Score, lg.Why = 1, "right: "+got
			} else {
				lg.Why = fmt.Sprintf("you said %q; the fixed variant sets %s", got, strings.Join(r.Case.Fix, " "))
			}
		}
		g.Levels = append(g.Levels, lg)
		g.Score += lg.Score
	}
	g.Score /= float64(len(g.Levels))
	return g
}

// localize grades the service and the operation, half each; a label that
// names no operation is graded on the service alone. Span ids, if given,
// are a third part: the share of them that are calls of the labelled
// service and operation.
func (r *Offline) localize(a Reply) (float64, string) {
	labels := r.labels()
	svc := choice(r.Choices.Service, a.Service)
	op := choice(r.Choices.Operation, a.Operation)
	best, why := -1.0, ""
	for _, l := range labels {
		parts := []float64{0}
		notes := []string{"service " + l.Service}
		if strings.EqualFold(strings.TrimSpace(svc), l.Service) {
			parts[0] = 1
		}
		if l.Operation != "" {
			p := 0.0
			if strings.TrimSpace(op) != "" && opMatches(l, op) {
				p = 1
			}
			parts = append(parts, p)
			notes = append(notes, fmt.Sprintf("operation containing %q", l.Operation))
		}
		if len(a.Spans) > 0 {
			ok := 0
			for _, id := range a.Spans {
				if sp, t := r.span(id); sp != nil && sp.Service == l.Service && (l.Operation == "" || opMatches(l, t.Operation(sp))) {
					ok++
				}
			}
			parts = append(parts, float64(ok)/float64(len(a.Spans)))
			notes = append(notes, fmt.Sprintf("%d of %d spans right", ok, len(a.Spans)))
		}
		s := 0.0
		for _, p := range parts {
			s += p
		}
		if s /= float64(len(parts)); s > best {
			best, why = s, "it was "+strings.Join(notes, ", ")
		}
	}
	return best, why
}

// span finds a span of the round by id.
func (r *Offline) span(id string) (*trace.Span, *trace.Trace) {
	id = strings.ToLower(strings.TrimSpace(id))
	for _, t := range r.traces {
		for _, sp := range t.Spans {
			if sp.SpanID == id {
				return sp, t
			}
		}
	}
	return nil, nil
}

// Random is the expected grade of a reply that picks each answer
// uniformly from its choice list, computed from the lists (the levels are
// graded apart, so the expectation is the mean of each level's). Span ids
// are not guessed.
func (r *Offline) Random() float64 {
	truth, sum, levels := r.Case.Pathology, 0.0, r.Levels()
	for _, l := range levels {
		switch l {
		case LevelDetect:
			for _, p := range r.Choices.Pathology {
				switch {
				case p == truth:
					sum += 1 / float64(len(r.Choices.Pathology))
				case p != None && truth != None && related(p, truth):
					sum += 0.5 / float64(len(r.Choices.Pathology))
				}
			}
		case LevelLocalize:
			// Each label is a way to be right; the guess scores its best.
			// Over the pairs (service, operation) guessed, that is the
			// mean of the best label's parts.
			total := 0.0
			for _, svc := range r.Choices.Service {
				for _, op := range r.Choices.Operation {
					s, _ := r.localize(Reply{Service: svc, Operation: op})
					total += s
				}
			}
			sum += total / float64(len(r.Choices.Service)*len(r.Choices.Operation))
		case LevelExplain:
			sum += float64(len(mechanismsOf[truth])) / float64(len(Mechanisms))
		case LevelFix:
			sum += float64(len(r.Case.Fix)) / float64(len(r.Choices.Fix))
		}
	}
	return sum / float64(len(levels))
}
