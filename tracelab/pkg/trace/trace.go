package trace

import (
	"cmp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Trace is the spans sharing one trace id, linked into a tree.
//
// Real traces are rarely perfect: a span's parent may have been dropped by
// sampling, lost in transit or belong to a service that is not instrumented.
// Such orphans become additional roots, and Root is the earliest-starting
// root, which is what a user means by "the request".
type Trace struct {
	ID    string
	Spans []*Span // sorted by start time, then span id
	Root  *Span
	// Broken counts what New found wrong with the spans it was given.
	Broken Broken

	parent []*Span // by Span.idx; nil for roots
	// The children of the span at idx are kids[kidsAt[idx]:][:kidsLen[idx]],
	// sorted like Spans: one array for the whole trace instead of a slice
	// per parent.
	kids    []*Span
	kidsAt  []int32
	kidsLen []int32
	roots   []*Span

	cpOnce sync.Once
	cp     CriticalPath
	opOnce sync.Once
	ops    []string // Operation of each span, by Span.idx

	callsOnce sync.Once
	types     []uint8 // Classify as an index into callTypes, by Span.idx
	own       []bool  // OwnCall, by Span.idx
	under     []int32 // CallsUnder, by Span.idx

	memoMu sync.Mutex
	memo   map[any]*memoEntry
}

type memoEntry struct {
	once sync.Once
	v    any
}

// Memo returns compute's result for key, computed once per trace and then
// kept with it: several detectors read the same per-trace structure (the
// repeated units under each parent), and recomputing it for each of them
// cost more than all their other work. key must be comparable; use an
// unexported type of the calling package so packages never collide. The
// result is shared between callers and goroutines: treat it as read-only.
// Safe for concurrent use.
func (t *Trace) Memo(key any, compute func() any) any {
	t.memoMu.Lock()
	e := t.memo[key]
	if e == nil {
		if t.memo == nil {
			t.memo = make(map[any]*memoEntry)
		}
		e = &memoEntry{}
		t.memo[key] = e
	}
	t.memoMu.Unlock()
	e.once.Do(func() { e.v = compute() })
	return e.v
}

// ForgetMemos drops what Memo kept, once every reader of the trace's
// shared structures is done with it, so that analysing trace after trace
// holds them for one trace at a time instead of for the whole input.
func (t *Trace) ForgetMemos() {
	t.memoMu.Lock()
	t.memo = nil
	t.memoMu.Unlock()
}

// Group splits spans by trace id and builds one Trace per id. A span that
// appears twice (same trace and span id, e.g. from overlapping query
// results) is kept once. Traces are ordered by root start time, then id, so
// the output does not depend on the input order.
func Group(spans []*Span) []*Trace {
	byTrace := make(map[string][]*Span)
	var order []string
	for _, s := range spans {
		l, ok := byTrace[s.TraceID]
		if !ok {
			order = append(order, s.TraceID)
		}
		byTrace[s.TraceID] = append(l, s)
	}
	traces := make([]*Trace, 0, len(order))
	for _, id := range order {
		traces = append(traces, New(id, byTrace[id]))
	}
	sort.Slice(traces, func(i, j int) bool { return Before(traces[i], traces[j]) })
	return traces
}

// Before is Group's order: by root start time, then id.
func Before(a, b *Trace) bool {
	if a.Root.Start != b.Root.Start {
		return a.Root.Start < b.Root.Start
	}
	return a.ID < b.ID
}

// New builds the tree of one trace. spans must share the trace id id and
// must not be empty; duplicates (same span id) are dropped.
func New(id string, spans []*Span) *Trace {
	t := &Trace{ID: id}
	if !isID(id, 32) {
		t.Broken[BadTraceID]++
	}
	// The id index is needed only to link the tree; the trace does not keep
	// it (Span looks ids up by scanning).
	byID := make(map[string]*Span, len(spans))
	t.Spans = make([]*Span, 0, len(spans))
	for _, s := range spans {
		if prev, dup := byID[s.SpanID]; dup {
			if !sameSpan(prev, s) {
				t.Broken[DuplicateSpanID]++
			}
			continue
		}
		byID[s.SpanID] = s
		t.Spans = append(t.Spans, s)
		t.Broken.countSpan(s)
	}
	slices.SortFunc(t.Spans, spanCompare)
	for i, s := range t.Spans {
		s.idx = int32(i)
	}
	t.link(byID)
	return t
}

// spanCompare orders spans by start, then end, then id: a total order, so
// every derived list is deterministic.
func spanCompare(a, b *Span) int {
	if c := cmp.Compare(a.Start, b.Start); c != 0 {
		return c
	}
	if c := cmp.Compare(a.End, b.End); c != 0 {
		return c
	}
	return strings.Compare(a.SpanID, b.SpanID)
}

// link resolves parents, children and roots. Spans whose parent is missing
// (or is the span itself) become roots. Parent links that form a cycle,
// which only broken producers emit, are cut so that every span is reachable
// from a root and tree walks always terminate.
func (t *Trace) link(byID map[string]*Span) {
	n := len(t.Spans)
	t.parent = make([]*Span, n)
	t.kidsAt = make([]int32, n)
	t.kidsLen = make([]int32, n)
	for i, s := range t.Spans {
		p := byID[s.ParentID]
		if p == s {
			t.Broken[SelfParent]++
		} else if p != nil {
			t.parent[i] = p
			t.kidsLen[p.idx]++
		}
	}
	var at int32
	for i, k := range t.kidsLen {
		t.kidsAt[i] = at
		at += k
		t.kidsLen[i] = 0
	}
	// Children are filled in Spans order, so they come out sorted.
	t.kids = make([]*Span, at)
	for i, s := range t.Spans {
		if p := t.parent[i]; p != nil {
			t.kids[t.kidsAt[p.idx]+t.kidsLen[p.idx]] = s
			t.kidsLen[p.idx]++
		}
	}
	reached := make([]bool, n)
	var stack []*Span
	walk := func(r *Span) {
		reached[r.idx] = true
		stack = append(stack[:0], r)
		for len(stack) > 0 {
			s := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, c := range t.Children(s) {
				if !reached[c.idx] {
					reached[c.idx] = true
					stack = append(stack, c)
				}
			}
		}
	}
	for i, s := range t.Spans {
		if t.parent[i] == nil {
			t.roots = append(t.roots, s)
			walk(s)
		}
	}
	// Whatever is still unreached sits on a parent cycle: make the earliest
	// such span a root and repeat.
	for i, s := range t.Spans {
		if reached[i] {
			continue
		}
		t.Broken[ParentCycle]++
		p := t.parent[i]
		t.parent[i] = nil
		kids := t.Children(p)
		j := slices.Index(kids, s)
		copy(kids[j:], kids[j+1:])
		t.kidsLen[p.idx]--
		t.roots = append(t.roots, s)
		walk(s)
	}
	slices.SortFunc(t.roots, spanCompare)
	if len(t.roots) > 0 {
		t.Root = t.roots[0]
	}
}

// Span returns the span with the given id, or nil. It scans the spans:
// keeping an index for the few callers that ask cost memory per span.
func (t *Trace) Span(id string) *Span {
	for _, s := range t.Spans {
		if s.SpanID == id {
			return s
		}
	}
	return nil
}

// Parent returns the parent of s within this trace, or nil for a root.
func (t *Trace) Parent(s *Span) *Span { return t.parent[s.idx] }

// Children returns the direct children of s, sorted by start time. The
// slice is shared: do not modify it.
func (t *Trace) Children(s *Span) []*Span {
	at := t.kidsAt[s.idx]
	return t.kids[at : at+t.kidsLen[s.idx] : at+t.kidsLen[s.idx]]
}

// Roots returns the root span and every orphan, earliest first.
func (t *Trace) Roots() []*Span { return t.roots }

// Duration is the duration of the root span: the request as its caller
// experienced it.
func (t *Trace) Duration() int64 {
	if t.Root == nil {
		return 0
	}
	return t.Root.Duration()
}

// Contains reports whether s belongs to this trace.
func (t *Trace) Contains(s *Span) bool {
	return s != nil && int(s.idx) < len(t.Spans) && t.Spans[s.idx] == s
}

// Operation returns Operation(s), computed once per span of the trace on
// first use and then cached: detectors and reports ask for the same
// fingerprints many times. Safe for concurrent use.
func (t *Trace) Operation(s *Span) string {
	t.opOnce.Do(func() {
		t.ops = make([]string, len(t.Spans))
		seen := make(map[string]string) // share one string among identical calls
		for i, x := range t.Spans {
			op := Operation(x)
			if v, ok := seen[op]; ok {
				op = v
			} else {
				seen[op] = op
			}
			t.ops[i] = op
		}
	})
	return t.ops[s.idx]
}

// Fingerprint is Fingerprint(s) using the trace's cached operations.
func (t *Trace) Fingerprint(s *Span) string {
	if s.Service == "" {
		return t.Operation(s)
	}
	return s.Service + " " + t.Operation(s)
}
