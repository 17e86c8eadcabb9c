package trace

// Broken counts, per kind, what is wrong with a trace's spans: what only a
// broken producer or a damaged file makes. New counts them as it builds
// the trace (it cuts cycles and drops duplicates anyway), so that a report
// can name them rather than analyze them silently.
type Broken [brokenKinds]int32

// The kinds of Broken.
const (
	ParentCycle     = iota // cycles of parent links, each cut at its earliest span
	SelfParent             // spans that name themselves as parent
	DuplicateSpanID        // spans dropped because another span of the trace, different from them, has their id
	BadTraceID             // traces whose id is not 32 hex digits
	BadSpanID              // spans whose id, or parent id, is not 16 hex digits
	EndBeforeStart         // spans that end before they start
	NegativeTime           // spans with a negative start or end time
	brokenKinds
)

// BrokenKinds describes each kind of Broken, by index: its name in reports
// and what it counts, for one and for many.
var BrokenKinds = [brokenKinds]struct{ Name, One, Many string }{
	ParentCycle:     {"parent-cycle", "cycle in parent links, cut at its earliest span", "cycles in parent links, each cut at its earliest span"},
	SelfParent:      {"self-parent", "span is its own parent", "spans are their own parent"},
	DuplicateSpanID: {"duplicate-span-id", "span shares its id with a different span of its trace and was dropped", "spans share their id with a different span of their trace and were dropped"},
	BadTraceID:      {"bad-trace-id", "trace has an id that is not 32 hex digits", "traces have an id that is not 32 hex digits"},
	BadSpanID:       {"bad-span-id", "span has a span or parent id that is not 16 hex digits", "spans have a span or parent id that is not 16 hex digits"},
	EndBeforeStart:  {"end-before-start", "span ends before it starts", "spans end before they start"},
	NegativeTime:    {"negative-time", "span has a negative start or end time", "spans have a negative start or end time"},
}

// Total is the count of every kind.
func (b *Broken) Total() int {
	n := 0
	for _, c := range b {
		n += int(c)
	}
	return n
}

// countSpan counts what is wrong with one span on its own.
func (b *Broken) countSpan(s *Span) {
	if !isID(s.SpanID, 16) || s.ParentID != "" && !isID(s.ParentID, 16) {
		b[BadSpanID]++
	}
	if s.End < s.Start {
		b[EndBeforeStart]++
	}
	if s.Start < 0 || s.End < 0 {
		b[NegativeTime]++
	}
}

// isID reports whether id is n lower-case hex digits, as the otlp parser
// leaves every well-formed id (it decodes base64 ids to hex).
func isID(id string, n int) bool {
	if len(id) != n {
		return false
	}
	for i := 0; i < n; i++ {
		if c := id[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// sameSpan reports whether two spans of one id are the same span seen
// twice (overlapping query results), not two spans sharing an id.
func sameSpan(a, b *Span) bool {
	return a.Start == b.Start && a.End == b.End && a.Name == b.Name && a.ParentID == b.ParentID
}
