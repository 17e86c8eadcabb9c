package trace

import (
	"cmp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Section is a stretch of one span's own time that lies on the critical
// path: during [Start, End) the request was waiting on this span and on
// none of its children.
type Section struct {
	Span   *Span  `json:"-"`
	SpanID string `json:"span_id"`
	Start  int64  `json:"start"`
	End    int64  `json:"end"`
}

// Duration is End-Start in nanoseconds.
func (s Section) Duration() int64 { return s.End - s.Start }

// CriticalPath is a list of sections in chronological order. The sections
// are disjoint and together cover the root span from start to end, so their
// durations add up to the trace duration.
type CriticalPath []Section

// CriticalPath returns the critical path from the trace's Root, computed on
// first use and then cached. Orphan roots are not connected to Root and so
// are never on its path.
func (t *Trace) CriticalPath() CriticalPath {
	t.cpOnce.Do(func() { t.cp = ComputeCriticalPath(t) })
	return t.cp
}

// ComputeCriticalPath computes the critical path the way the Jaeger UI does,
// so the lab's numbers match what a user sees in Jaeger (jaeger-ui,
// packages/jaeger-ui/src/components/TracePage/CriticalPath/index.ts with
// utils/sanitizeOverFlowingChildren.ts, utils/findLastFinishingChildSpan.ts
// and utils/filterBlockingSpans.ts):
//
//  1. Sanitize, top-down: a child that sticks out of its parent is trimmed
//     to the parent's (already trimmed) bounds; a child entirely outside its
//     parent is dropped together with its subtree. A CONSUMER under a
//     PRODUCER does not block its parent and is dropped too.
//  2. Walk: start at the root. Take the last-finishing child (LFC); the
//     parent's time from the LFC's end up to the current point is on the
//     path. Descend into the LFC. When a span has no (further) child that
//     finished before the current point, its time from its start up to the
//     current point is on the path, and the walk returns to its parent with
//     the child's start as the new current point ("returning child start
//     time"), looking for a child that finished before it.
//
// jaeger-ui recurses; this walks iteratively and finds each LFC by binary
// search over children sorted by end time, so a parent with thousands of
// sequential children costs O(k log k) instead of O(k²). Ties on end time
// go to the earlier-starting child, as jaeger-ui's scan in start order does.
// Jaeger pushes sections from the end backwards; they are returned here in
// chronological order.
//
// One deliberate difference: when walking back, a child that ended exactly
// when the returning child started is taken as its predecessor. jaeger-ui
// requires "strictly before", which for back-to-back calls (common with
// microsecond timestamps) skips every other call of a loop and credits its
// time to the parent; for an N+1 that would halve the loop's share.
func ComputeCriticalPath(t *Trace) CriticalPath {
	root := t.Root
	if root == nil {
		return nil
	}
	n := len(t.Spans)
	w := pathWorkPool.Get().(*pathWork)
	defer w.put()
	start := grow(w.start, n)
	end := grow(w.end, n)
	kids := grow(w.kids, n) // surviving children, by end asc then start desc
	pos := grow(w.pos, n)   // a child's index in its parent's kids
	// Every span is queued at most once and is at most one parent's kid, so
	// one n-sized buffer holds the queue and another every kids list, each
	// a window of it: no per-span slice growth.
	queue := append(grow(w.queue, n)[:0], root)
	kidBuf := grow(w.kidBuf, n)[:0]
	defer func() { w.start, w.end, w.kids, w.pos, w.queue, w.kidBuf = start, end, kids, pos, queue, kidBuf }()

	start[root.idx], end[root.idx] = root.Start, max(root.End, root.Start)
	for head := 0; head < len(queue); head++ {
		p := queue[head]
		ps, pe := start[p.idx], end[p.idx]
		first := len(kidBuf)
		for _, c := range t.Children(p) {
			if p.Kind == KindProducer && c.Kind == KindConsumer {
				continue // asynchronous hand-off: never blocks the producer
			}
			cs, ce := c.Start, max(c.End, c.Start)
			if cs >= ps {
				if cs >= pe {
					continue // starts after the parent ended
				}
				ce = min(ce, pe)
			} else {
				if ce <= ps {
					continue // ended before the parent started
				}
				cs, ce = ps, min(ce, pe)
			}
			start[c.idx], end[c.idx] = cs, ce
			kidBuf = append(kidBuf, c)
			queue = append(queue, c)
		}
		ks := kidBuf[first:len(kidBuf):len(kidBuf)]
		kids[p.idx] = ks
		slices.SortFunc(ks, func(a, b *Span) int {
			if c := cmp.Compare(end[a.idx], end[b.idx]); c != 0 {
				return c
			}
			if c := cmp.Compare(start[b.idx], start[a.idx]); c != 0 {
				return c
			}
			return strings.Compare(b.SpanID, a.SpanID)
		})
		for i, c := range ks {
			pos[c.idx] = int32(i)
		}
	}

	// The walk runs twice, first to count the sections and then to fill a
	// path of exactly that size from the end: the path is kept with the
	// trace, and growing it by appending allocated about twice its size.
	walk := func(add func(s *Span, from, to int64)) {
		// limit is the current point: everything after it is already
		// explained. from is the child the walk just returned from (nil
		// on first entry into cur); only children sorted before it can
		// come next, which also guarantees the walk ends.
		cur, limit, from := root, end[root.idx], (*Span)(nil)
		for {
			ks := kids[cur.idx]
			hi := len(ks)
			if from != nil {
				hi = int(pos[from.idx])
			}
			i := sort.Search(hi, func(i int) bool { return end[ks[i].idx] > limit }) - 1
			if i >= 0 {
				lfc := ks[i]
				if end[lfc.idx] != limit {
					add(cur, end[lfc.idx], limit)
				}
				cur, limit, from = lfc, end[lfc.idx], nil
				continue
			}
			if start[cur.idx] != limit {
				add(cur, start[cur.idx], limit)
			}
			if cur == root {
				break
			}
			cur, limit, from = t.parent[cur.idx], start[cur.idx], cur
		}
	}
	sections := 0
	walk(func(*Span, int64, int64) { sections++ })
	if sections == 0 {
		return nil
	}
	path := make(CriticalPath, sections)
	walk(func(s *Span, from, to int64) {
		sections--
		path[sections] = Section{Span: s, SpanID: s.SpanID, Start: from, End: to}
	})
	return path
}

// pathWork is ComputeCriticalPath's working memory, kept between traces:
// made afresh for each trace, it was a twentieth of the bytes the analysis
// of a million spans allocated.
type pathWork struct {
	start, end []int64
	kids       [][]*Span
	pos        []int32
	queue      []*Span
	kidBuf     []*Span
}

var pathWorkPool = sync.Pool{New: func() any { return new(pathWork) }}

// put drops the spans it points to and returns it to the pool.
func (w *pathWork) put() {
	clear(w.kids)
	clear(w.queue[:cap(w.queue)])
	clear(w.kidBuf[:cap(w.kidBuf)])
	pathWorkPool.Put(w)
}

// grow returns s with length n, its first n elements zero.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// Total is the summed duration of all sections.
func (cp CriticalPath) Total() int64 {
	var total int64
	for _, s := range cp {
		total += s.Duration()
	}
	return total
}

// CriticalTimeUnder is the critical-path time spent in tops or anywhere
// below them: for a client span, the call itself plus the server work it
// waited for. A span listed twice, or nested under another listed span, is
// counted once.
func (t *Trace) CriticalTimeUnder(tops []*Span) int64 {
	const unknown, in, out = 0, 1, 2
	mark := make([]uint8, len(t.Spans))
	for _, s := range tops {
		if t.Contains(s) {
			mark[s.idx] = in
		}
	}
	var stack []*Span
	var total int64
	for _, sec := range t.CriticalPath() {
		s := sec.Span
		stack = stack[:0]
		for s != nil && mark[s.idx] == unknown {
			stack = append(stack, s)
			s = t.parent[s.idx]
		}
		verdict := uint8(out)
		if s != nil {
			verdict = mark[s.idx]
		}
		for _, v := range stack {
			mark[v.idx] = verdict
		}
		if verdict == in {
			total += sec.Duration()
		}
	}
	return total
}
