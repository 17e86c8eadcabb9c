package realspans

import (
	"bytes"
	"testing"

	"tracelab/pkg/otlp"
)

// Write repeats the recorded cases whole, with ids fresh to each
// repetition: the parser reads exactly the spans and traces it says, every
// trace as whole as in its recording (the same spans, linked as before),
// and no trace id twice.
func TestWriteRepeatsWholeTracesWithFreshIDs(t *testing.T) {
	cases, err := Load("../../testdata/corpus")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if c.Name == "few-calls" || len(c.Name) > 6 && c.Name[:6] == "shape-" {
			t.Errorf("%s is generated, not recorded, and was loaded", c.Name)
		}
	}
	recorded := 0
	for _, c := range cases {
		recorded += c.Spans
	}
	var buf bytes.Buffer
	w, err := Write(&buf, cases, recorded+1, 1) // two repetitions, the second cut after its first case
	if err != nil {
		t.Fatal(err)
	}
	if w.Repetitions != 2 || w.Spans != recorded+cases[0].Spans || w.Bytes != int64(buf.Len()) {
		t.Fatalf("wrote %+v for %d recorded spans (first case %d)", w, recorded, cases[0].Spans)
	}
	traces, err := otlp.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	spans, roots := 0, 0
	for _, tr := range traces {
		spans += len(tr.Spans)
		for _, s := range tr.Spans {
			if tr.Parent(s) == nil {
				roots++
			}
		}
	}
	if len(traces) != w.Traces || spans != w.Spans {
		t.Errorf("read %d traces and %d spans, Write says %d and %d", len(traces), spans, w.Traces, w.Spans)
	}
	// Ids remapped alike within a repetition keep every parent link: the
	// spans without a parent are those of the recordings, no more.
	want := cases[0].Roots
	for _, c := range cases {
		want += c.Roots
	}
	if roots != want {
		t.Errorf("%d spans without a parent, the recordings have %d: links lost", roots, want)
	}
}
