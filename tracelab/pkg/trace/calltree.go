package trace

// This file answers the questions every repetition detector asks about a
// trace's outgoing calls: which calls count on their own, which spans wrap
// exactly one of them, and what a subtree calls. ORMs and repositories wrap
// each statement in INTERNAL spans (the Java agent gives a Spring Data
// repository method and a Hibernate session operation a span each), so the
// unit that repeats is a subtree, not always a leaf.

// Request returns the span of the request the trace serves: the root when
// it is a SERVER or CONSUMER span, or, when the root is a traced caller (a
// CLIENT or PRODUCER span such as an instrumented test client), the first
// SERVER or CONSUMER span under it. Traces with neither, such as an
// application's start-up or a scheduled job, serve no request: nil.
func (t *Trace) Request() *Span {
	r := t.Root
	switch {
	case r == nil:
		return nil
	case r.Kind == KindServer || r.Kind == KindConsumer:
		return r
	case r.Kind == KindClient || r.Kind == KindProducer:
		for _, c := range t.Children(r) {
			if c.Kind == KindServer || c.Kind == KindConsumer {
				return c
			}
		}
	}
	return nil
}

// OwnCall reports whether s is an outgoing call (IsCall) that counts on its
// own: one not made inside another call of its service, as a JDBC
// statement inside an ORM span that already carries the database
// attributes is the same round trip seen lower down.
func (t *Trace) OwnCall(s *Span) bool {
	t.callsOnce.Do(t.countCalls)
	return t.own[s.idx]
}

// Classify is Classify(s), computed once per span of the trace: every
// repetition detector asks it of the same spans, and each answer costs
// several attribute look-ups.
func (t *Trace) Classify(s *Span) CallType {
	t.callsOnce.Do(t.countCalls)
	return callTypes[t.types[s.idx]]
}

// callTypes numbers the call types so that a trace keeps one byte per
// span for them rather than a string header.
var callTypes = [...]CallType{CallNone, CallHTTP, CallRPC, CallDB, CallCache, CallMessaging, CallOther}

func callTypeIndex(c CallType) uint8 {
	for i, x := range callTypes {
		if x == c {
			return uint8(i)
		}
	}
	panic("trace: unknown call type " + string(c))
}

// IsCall is IsCall(s), cached like Classify.
func (t *Trace) IsCall(s *Span) bool { return t.Classify(s) != CallNone }

// CallsUnder is the number of s's service's own calls in s's subtree, s
// included. It does not look past a call into the work the callee did, nor
// into other services.
func (t *Trace) CallsUnder(s *Span) int {
	t.callsOnce.Do(t.countCalls)
	return int(t.under[s.idx])
}

// OwnCallsUnder returns the own calls that CallsUnder counts, in start
// order. The slice may be shared with the trace: do not modify it.
func (t *Trace) OwnCallsUnder(s *Span) []*Span {
	if t.CallsUnder(s) == 0 {
		return nil
	}
	if t.own[s.idx] {
		// Most repeated units are the call itself: a window of Spans
		// saves allocating a slice of one per unit.
		return t.Spans[s.idx : s.idx+1 : s.idx+1]
	}
	var out []*Span
	var walk func(x *Span)
	walk = func(x *Span) {
		if t.own[x.idx] {
			out = append(out, x)
			return
		}
		for _, c := range t.Children(x) {
			if c.Service == s.Service && t.under[c.idx] > 0 {
				walk(c)
			}
		}
	}
	walk(s)
	return out
}

// Wrapper returns the outermost span of c's service that wraps the own
// call c and no other call, below the request's SERVER or CONSUMER span:
// the repository and ORM spans around a statement. Their time is the
// call's cost to the request. It returns c when nothing wraps it alone.
func (t *Trace) Wrapper(c *Span) *Span {
	w := c
	for p := t.Parent(w); p != nil && p.Service == c.Service && p.Kind != KindServer && p.Kind != KindConsumer && t.CallsUnder(p) == 1; p = t.Parent(p) {
		w = p
	}
	return w
}

// countCalls fills own and under with one pass over the trees.
func (t *Trace) countCalls() {
	n := len(t.Spans)
	t.types = make([]uint8, n)
	t.own = make([]bool, n)
	t.under = make([]int32, n)
	for i, s := range t.Spans {
		t.types[i] = callTypeIndex(Classify(s))
	}
	for i, s := range t.Spans {
		if t.types[i] == 0 {
			continue
		}
		t.own[i] = true
		for p := t.parent[i]; p != nil && p.Service == s.Service; p = t.parent[p.idx] {
			if t.types[p.idx] != 0 {
				t.own[i] = false
				break
			}
		}
	}
	// Post-order: a span's count is complete before its parent adds it.
	type frame struct {
		s    *Span
		next int
	}
	var stack []frame
	for _, r := range t.roots {
		stack = append(stack[:0], frame{s: r})
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			kids := t.Children(f.s)
			if f.next < len(kids) {
				c := kids[f.next]
				f.next++
				stack = append(stack, frame{s: c})
				continue
			}
			s := f.s
			stack = stack[:len(stack)-1]
			if t.own[s.idx] {
				t.under[s.idx]++
			}
			if p := t.parent[s.idx]; p != nil && p.Service == s.Service && !t.own[p.idx] {
				t.under[p.idx] += t.under[s.idx]
			}
		}
	}
}
