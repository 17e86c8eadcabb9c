package trace

import (
	"fmt"
	"testing"
)

// New counts each kind of broken span where it meets it; a trace of
// well-formed spans counts nothing, and the same span seen twice is not a
// duplicate id.
func TestNewCountsBrokenSpans(t *testing.T) {
	const tid = "5b8efff798038103d269b633813fc60c"
	id := func(n int) string { return fmt.Sprintf("%016x", n) }
	for _, tc := range []struct {
		name    string
		traceID string
		spans   []*Span
		kind    int
		want    int32
	}{
		{"a cycle", tid, []*Span{sp(tid, id(1), "", 0, 10), sp(tid, id(2), id(3), 1, 2), sp(tid, id(3), id(2), 2, 3)}, ParentCycle, 1},
		{"two cycles", tid, []*Span{sp(tid, id(2), id(3), 1, 2), sp(tid, id(3), id(2), 2, 3), sp(tid, id(4), id(5), 1, 2), sp(tid, id(5), id(4), 2, 3)}, ParentCycle, 2},
		{"self-parented", tid, []*Span{sp(tid, id(1), id(1), 0, 10), sp(tid, id(2), id(2), 0, 10)}, SelfParent, 2},
		{"1,000 spans of one id", tid, func() []*Span {
			var l []*Span
			for i := range 1000 {
				l = append(l, sp(tid, id(7), "", int64(i), int64(i+1)))
			}
			return l
		}(), DuplicateSpanID, 999},
		{"a trace id in no hex", "not-a-trace-id", []*Span{sp("not-a-trace-id", id(1), "", 0, 10)}, BadTraceID, 1},
		{"a short trace id", "abc", []*Span{sp("abc", id(1), "", 0, 10)}, BadTraceID, 1},
		{"bad span and parent ids", tid, []*Span{sp(tid, "x1", "", 0, 10), sp(tid, id(2), "zz", 0, 10), sp(tid, "0102", "", 0, 1)}, BadSpanID, 3},
		{"reversed", tid, []*Span{sp(tid, id(1), "", 10, 5), sp(tid, id(2), id(1), 7, 6), sp(tid, id(3), id(1), 6, 7)}, EndBeforeStart, 2},
		{"negative", tid, []*Span{sp(tid, id(1), "", -10, 5), sp(tid, id(2), id(1), 1, -1)}, NegativeTime, 2},
	} {
		tr := New(tc.traceID, tc.spans)
		var want Broken
		want[tc.kind] = tc.want
		if tc.kind == NegativeTime { // 1 to -1 also ends before it starts
			want[EndBeforeStart] = 1
		}
		if tr.Broken != want {
			t.Errorf("%s: %v, want %v", tc.name, tr.Broken, want)
		}
	}
	ok := New(tid, []*Span{sp(tid, id(1), "", 0, 10), sp(tid, id(2), id(1), 1, 2), sp(tid, id(2), id(1), 1, 2), sp(tid, id(3), id(9), 2, 3)})
	if ok.Broken.Total() != 0 {
		t.Errorf("well-formed spans, a repeat and an orphan: %v, want nothing", ok.Broken)
	}
}
