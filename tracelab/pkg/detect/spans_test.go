package detect

import (
	"testing"

	"tracelab/internal/tracegen"
	"tracelab/pkg/trace"
)

// A finding can name its spans by id (chatty-db does: its round trips are
// different statements); the ids arrive as []string from a run in memory
// and as []any from a result.json read back.
func TestHighlightBySpanIDs(t *testing.T) {
	tr := trace.Group(tracegen.LabTrace(tracegen.LabOptions{Items: 3, Seed: 1}))[0]
	a, b := tr.Spans[1].SpanID, tr.Spans[2].SpanID
	for _, ids := range []any{[]string{a, b}, []any{a, b}} {
		f := &Finding{Operation: "not an operation", Evidence: map[string]any{"highlight_span_ids": ids}}
		if m := f.SpansIn(tr); len(m) != 2 || m[0].SpanID != a || m[1].SpanID != b {
			t.Errorf("%T: marked %v, want %s and %s", ids, m, a, b)
		}
	}
}

// Without span ids, a finding marks the calls of its operation made from
// its parent operation, in any trace: the explorer finds every trace that
// shows it, and a trace without those calls shows none.
func TestSpansInMatchesOperationUnderItsParent(t *testing.T) {
	traces := trace.Group(tracegen.LabTrace(tracegen.LabOptions{Items: 4, Seed: 2}))
	tr := traces[0]
	var call *trace.Span
	for _, s := range tr.Spans {
		if s.Kind == trace.KindClient {
			call = s
			break
		}
	}
	if call == nil {
		t.Fatal("the generated trace has no client span")
	}
	op, parent := tr.Operation(call), tr.Operation(tr.Parent(call))
	f := &Finding{Operation: op, ParentOperation: parent}
	got := f.SpansIn(tr)
	if len(got) == 0 {
		t.Fatalf("no span of %q under %q", op, parent)
	}
	for _, s := range got {
		if tr.Operation(s) != op {
			t.Errorf("marked %q", tr.Operation(s))
		}
	}
	if n := len((&Finding{Operation: op, ParentOperation: "not a parent"}).SpansIn(tr)); n != 0 {
		t.Errorf("%d spans marked under a parent operation the trace does not have", n)
	}
}
