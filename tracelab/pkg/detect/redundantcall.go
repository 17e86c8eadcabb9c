package detect

import (
	"fmt"
	"hash/maphash"
	"math"
	"strings"
	"sync"

	"tracelab/pkg/trace"
)

func init() { Register(RedundantCall{}) }

// RedundantMinCalls is how many times one request must make the same read
// with the same values to be reported. perf-sentinel reports the second
// (redundant_sql and redundant_http, at 2 identical calls in a trace:
// perf-sentinel-core src/detect/redundant.rs). Two can be on purpose: a
// read that guards a write and is checked again inside the transaction, or
// the same owner loaded by two Spring MVC handlers of one request
// (PetClinic's @ModelAttribute and showOwner). A third is no longer a
// check: it is a loop or a formatter asking again, which keeping the first
// answer removes whole.
const RedundantMinCalls = 3

// RedundantCall finds a request that makes the same read again with the
// same values: the same SELECT with the same parameters, or a GET of the
// same URL. Every repeat after the first fetches nothing new, so the fix is
// to keep the first answer for the request (a cache, a request-scoped
// memo, or passing the result down), not to batch; that is what tells it
// from n-plus-one, where each repetition asks for something else, and from
// chatty-db, where the statements differ.
//
// It needs to know the values: parameter values recorded on the span, a
// statement that takes none, or a full URL. Statements with placeholders
// and no recorded values are left to n-plus-one, whose finding says the
// values were not recorded.
type RedundantCall struct{}

// ID implements Detector.
func (RedundantCall) ID() string { return "redundant-call" }

type redundantKey struct {
	service string
	request string // requestOf the trace
	call    string // callLabel of the repeated read
}

type redundantAgg struct {
	traces         int
	calls          int
	callTime       int64
	shareCP        float64
	exampleID      string // the example trace's id
	exampleRequest string // and the fingerprint of its root
	exampleUnits   []*trace.Span
	exampleShare   float64
	callType       trace.CallType
}

// Detect implements Detector.
func (d RedundantCall) Detect(traces []*trace.Trace) []Finding { return detectEach(d, traces) }

// Aggregator implements PerTrace.
func (d RedundantCall) Aggregator() Aggregator {
	return &redundantAggregator{id: d.ID(), aggs: map[redundantKey]*redundantAgg{}}
}

type redundantAggregator struct {
	id   string
	aggs map[redundantKey]*redundantAgg
}

// Add implements Aggregator.
func (g *redundantAggregator) Add(t *trace.Trace) {
	for k, units := range redundantReads(t) {
		a := g.aggs[k]
		if a == nil {
			a = &redundantAgg{}
			g.aggs[k] = a
		}
		share := 0.0
		if dur := t.Duration(); dur > 0 {
			share = float64(t.CriticalTimeUnder(units)) / float64(dur)
		}
		a.traces++
		a.calls += len(units)
		for _, u := range units {
			a.callTime += u.Duration()
		}
		a.shareCP += share
		if a.exampleUnits == nil || share > a.exampleShare || share == a.exampleShare && t.ID < a.exampleID {
			a.exampleID, a.exampleRequest, a.exampleUnits, a.exampleShare = t.ID, t.Fingerprint(t.Root), units, share
		}
	}
}

// Findings implements Aggregator.
func (g *redundantAggregator) Findings() []Finding {
	findings := make([]Finding, 0, len(g.aggs))
	for k, a := range g.aggs {
		n := float64(a.traces)
		ids := make([]string, len(a.exampleUnits))
		for i, u := range a.exampleUnits {
			ids[i] = u.SpanID
		}
		f := Finding{
			Detector:            g.id,
			Service:             k.service,
			Request:             k.request,
			Operation:           k.call,
			CallsPerTrace:       round(float64(a.calls)/n, 2),
			ShareOfCriticalPath: round(a.shareCP/n, 4),
			TracesAffected:      a.traces,
			Evidence: map[string]any{
				"example_trace_id":   a.exampleID,
				"request":            a.exampleRequest,
				"mean_call_ms":       meanMs(a.callTime, a.calls),
				"highlight_span_ids": ids,
			},
		}
		in := ""
		if k.request != "" {
			in = " per " + k.request
		}
		f.Summary = fmt.Sprintf("%s reads %s %s times%s with the same values (%.1f ms each on average, with the spans around it); every repeat after the first fetches nothing new, and together they are %.0f%% of the request's critical path. Keep the first answer for the request (cache or deduplicate) instead of asking again.",
			k.service, k.call, count(f.CallsPerTrace), in, f.Evidence["mean_call_ms"], 100*math.Min(1, f.ShareOfCriticalPath))
		findings = append(findings, f)
	}
	Sort(findings)
	return findings
}

// redundantReads returns, per finding key, the units (trace.Wrapper) of the
// reads one trace repeated with identical values at least
// RedundantMinCalls times within one request.
//
// Like repeatedUnits it is computed once per trace (trace.Memo): chatty-db
// reads it too. The result is read-only.
func redundantReads(t *trace.Trace) map[redundantKey][]*trace.Span {
	return t.Memo(redundantReadsKey{}, func() any { return findRedundantReads(t) }).(map[redundantKey][]*trace.Span)
}

type redundantReadsKey struct{}

// readKey is what makes two reads the same read.
type readKey struct {
	request *trace.Span
	service string
	op      string
	values  string
}

type read struct {
	c *trace.Span
	k readKey
	h uint64
}

// readLists are findRedundantReads' working lists, kept between traces:
// made afresh for each trace, they were an eighth of the bytes the
// analysis of a million spans allocated.
type readLists struct {
	reads  []read
	counts map[uint64]int32
}

var readListsPool = sync.Pool{New: func() any { return &readLists{counts: map[uint64]int32{}} }}

func findRedundantReads(t *trace.Trace) map[redundantKey][]*trace.Span {
	// Most reads are made with values of their own (a loop over ids), so
	// grouping every read by its full key built a map entry per read. A
	// hash of the key counts them first; only reads whose hash comes up
	// RedundantMinCalls times are grouped by the full key (which settles
	// collisions).
	lists := readListsPool.Get().(*readLists)
	defer func() {
		clear(lists.reads) // drop the spans
		lists.reads = lists.reads[:0]
		clear(lists.counts)
		readListsPool.Put(lists)
	}()
	reads, counts := lists.reads, lists.counts
	seed := maphash.MakeSeed()
	for _, c := range t.Spans {
		if !t.OwnCall(c) || !isRead(t, c) {
			continue
		}
		v, ok := callValues(t, c)
		if !ok {
			continue
		}
		k := readKey{requestSpan(t, c), c.Service, t.Operation(c), v}
		var h maphash.Hash
		h.SetSeed(seed)
		if k.request != nil {
			h.WriteString(k.request.SpanID)
		}
		h.WriteByte(0)
		h.WriteString(k.service)
		h.WriteByte(0)
		h.WriteString(k.op)
		h.WriteByte(0)
		h.WriteString(k.values)
		r := read{c: c, k: k, h: h.Sum64()}
		counts[r.h]++
		reads = append(reads, r)
	}
	lists.reads = reads
	groups := map[readKey][]*trace.Span{}
	var order []readKey
	for _, r := range reads {
		if counts[r.h] < RedundantMinCalls {
			continue
		}
		if _, seen := groups[r.k]; !seen {
			order = append(order, r.k)
		}
		groups[r.k] = append(groups[r.k], r.c)
	}
	var out map[redundantKey][]*trace.Span
	for _, k := range order {
		calls := groups[k]
		if len(calls) < RedundantMinCalls {
			continue
		}
		if out == nil {
			out = map[redundantKey][]*trace.Span{}
		}
		rk := redundantKey{service: k.service, request: requestOf(t), call: callLabel(t, k.request, calls[0])}
		out[rk] = append(out[rk], wrappers(t, calls)...)
	}
	return out
}

// isRead reports whether a call only reads, so that asking again with the
// same values can only return what the first answer said: a SELECT, or an
// HTTP GET or HEAD.
func isRead(t *trace.Trace, c *trace.Span) bool {
	switch t.Classify(c) {
	case trace.CallDB:
		stmt := strings.TrimLeft(c.Attr("db.query.text", "db.statement"), " \t\r\n(")
		return len(stmt) >= 6 && strings.EqualFold(stmt[:6], "SELECT")
	case trace.CallHTTP:
		m := strings.ToUpper(c.Attr("http.request.method", "http.method"))
		return m == "GET" || m == "HEAD"
	}
	return false
}
