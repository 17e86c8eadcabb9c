package train

import (
	"fmt"
	"math/rand"
	"slices"
	"sort"

	"tracelab/pkg/analyze"
	"tracelab/pkg/detect"
	"tracelab/pkg/trace"
)

// Offline is a round drawn from the labelled recordings: no stack, the
// traces of one case, masked (Mask), and questions up to Level.
type Offline struct {
	ID      string  `json:"round"`
	Seed    int64   `json:"seed"`
	Level   int     `json:"level"`
	Case    *Case   `json:"-"`
	Mask    Mask    `json:"-"`
	Choices Choices `json:"choices"`

	traces   []*trace.Trace // masked
	services []string       // every service and operation in them
	ops      []string
}

// Choices are the lists a round's answers are picked from.
type Choices struct {
	Pathology []string `json:"pathology"`
	Service   []string `json:"service,omitempty"`
	Operation []string `json:"operation,omitempty"`
	Mechanism []string `json:"mechanism,omitempty"`
	Fix       []string `json:"fix,omitempty"`
}

// RoundID names a round by what draws it, and nothing of its answer.
func RoundID(seed int64, level int) string { return fmt.Sprintf("%d-L%d", seed, level) }

// Draw picks the round of a seed: the case, and the renaming of a lab
// case's services. The same seed and level always give the same round.
func (s *Set) Draw(seed int64, level int) (*Offline, error) {
	c, rng := s.Pick(seed)
	return s.Round(c, rng, seed, level)
}

// Pick is the case a seed draws, and the random source that goes on to
// draw the round's renaming.
func (s *Set) Pick(seed int64) (*Case, *rand.Rand) {
	rng := rand.New(rand.NewSource(seed))
	return s.Cases[rng.Intn(len(s.Cases))], rng
}

// Round prepares the round of one case: reads its traces, masks them and
// lists the choices.
func (s *Set) Round(c *Case, rng *rand.Rand, seed int64, level int) (*Offline, error) {
	if level < LevelDetect || level > LevelFix {
		return nil, fmt.Errorf("level %d: the levels are %d (detect) to %d (fix)", level, LevelDetect, LevelFix)
	}
	traces, err := readTraces(c.Traces)
	if err != nil {
		return nil, fmt.Errorf("case %s: %w", c.Name, err)
	}
	r := &Offline{ID: RoundID(seed, level), Seed: seed, Level: level, Case: c}
	if c.Lab() {
		r.Mask = newMask(rng, labServices(traces))
	}
	r.traces = r.Mask.Apply(traces)
	r.Choices.Pathology = Detectors()
	levels := r.Levels()
	services, ops := map[string]bool{}, map[string]bool{}
	for _, t := range r.traces {
		for _, sp := range t.Spans {
			services[sp.Service], ops[t.Operation(sp)] = true, true
		}
	}
	r.services, r.ops = sortedSet(services), sortedSet(ops)
	if level >= LevelLocalize {
		r.Choices.Service, r.Choices.Operation = r.services, r.ops
	}
	if level >= LevelExplain {
		r.Choices.Mechanism = Mechanisms
	}
	if slices.Contains(levels, LevelFix) {
		r.Choices.Fix = s.Fixes
	}
	return r, nil
}

// Traces are the round's masked traces.
func (r *Offline) Traces() []*trace.Trace { return r.traces }

// WriteTraces writes the round's masked traces as plain OTLP JSON.
func (r *Offline) WriteTraces(path string) error { return writeTraces(path, r.traces) }

// AnalyzerReply is what `tracelab analyze` answers on the round: its top
// finding (they are ranked by share of the critical path), or none. It
// names the first mechanism of the detector, and no fix: a finding does
// not say which setting removes it. The traces are read again, since the
// analyzer may drop per-trace data as it goes.
func (r *Offline) AnalyzerReply() (Reply, error) {
	traces, err := readTraces(r.Case.Traces)
	if err != nil {
		return Reply{}, err
	}
	rep := analyze.Analyze(r.Mask.Apply(traces), detect.All())
	if len(rep.Findings) == 0 {
		return Reply{Pathology: None}, nil
	}
	f := rep.Findings[0]
	a := Reply{Pathology: f.Detector, Service: f.Service, Operation: f.Operation}
	if m := mechanismsOf[f.Detector]; len(m) > 0 {
		a.Mechanism = Mechanisms[m[0]]
	}
	return a, nil
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
