package analyze

import (
	"encoding/json"
	"runtime"
	"slices"
	"testing"
	"weak"

	"tracelab/internal/tracegen"
	"tracelab/pkg/detect"
	"tracelab/pkg/trace"
)

// choosy is a Selective detector that needs every third trace and records
// what it was given.
type choosy struct{ got *[]string }

func (choosy) ID() string { return "choosy" }

func (c choosy) Needs(t *trace.Trace) bool { return t.Root.Start/50_000_000%3 == 0 }

func (c choosy) Detect(traces []*trace.Trace) []detect.Finding {
	for _, t := range traces {
		*c.got = append(*c.got, t.ID)
	}
	return nil
}

// Fed batch by batch in any order, an Analyzer reports what Analyze
// reports, keeps only the traces a Selective detector needs, and gives
// them to it in Group's order.
func TestAnalyzerKeepsOnlyWhatItNeeds(t *testing.T) {
	input := func() []*trace.Trace { return trace.Group(tracegen.Generate(20_000, 1)) }
	var got, want []string
	detectors := append(detect.All(), choosy{&got})
	whole, _ := json.Marshal(Analyze(input(), append(detect.All(), choosy{&want})))

	an := NewAnalyzer(detectors)
	traces := input()
	slices.Reverse(traces)
	var refs []weak.Pointer[trace.Trace]
	var needed []bool
	for len(traces) > 0 {
		n := min(7, len(traces))
		for _, tr := range traces[:n] {
			refs = append(refs, weak.Make(tr))
			needed = append(needed, choosy{}.Needs(tr))
		}
		an.Add(traces[:n])
		clear(traces[:n])
		traces = traces[n:]
	}
	runtime.GC()
	runtime.GC()
	for i, r := range refs {
		if kept := r.Value() != nil; kept != needed[i] {
			t.Errorf("trace %d of %d: kept %v, needed %v", i, len(refs), kept, needed[i])
			break
		}
	}
	streamed, _ := json.Marshal(an.Report())
	if string(streamed) != string(whole) {
		t.Errorf("batch by batch:\n%s\nwhole:\n%s", streamed, whole)
	}
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("the Selective detector got %d traces, want the %d it needs in Group's order", len(got), len(want))
	}
}
