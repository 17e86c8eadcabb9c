package explorer

import (
	"cmp"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"tracelab/pkg/trace"
	"tracelab/pkg/traceql"
)

// TraceSummary is one trace as the search lists it and plots it.
type TraceSummary struct {
	ID         string   `json:"id"`
	Variant    string   `json:"variant"`
	StartMs    float64  `json:"start_ms"` // Unix milliseconds
	DurationMs float64  `json:"duration_ms"`
	Spans      int      `json:"spans"`
	Root       string   `json:"root"` // "service operation"
	Error      bool     `json:"error"`
	Findings   []string `json:"findings"`
	// ClientMs is what the load engine waited for the request, OutsideMs
	// the part of it outside the root span; absent where no request of
	// the load is joined to the trace.
	ClientMs  *float64 `json:"client_ms,omitempty"`
	OutsideMs *float64 `json:"outside_ms,omitempty"`
}

// SearchResult is a page of the search and what its filters can choose.
type SearchResult struct {
	Total      int            `json:"total"` // traces that match, before Limit
	Traces     []TraceSummary `json:"traces"`
	Services   []string       `json:"services"`
	Operations []string       `json:"operations"`
	Findings   []string       `json:"findings"`
	Variants   []string       `json:"variants"`
}

// searchLimit is the most traces one search lists; the scatter shows them
// all up to this many, which is more than a smoke run has.
const searchLimit = 20000

// variants are the run's variants a request asks for: the one named by
// its variant parameter, or all of them.
func (s *Server) variants(r *http.Request) ([]*loadedVariant, error) {
	return s.variantsOf(r, r.URL.Query().Get("variant"))
}

func (s *Server) variantsOf(r *http.Request, want string) ([]*loadedVariant, error) {
	run := r.PathValue("run")
	if run == liveRun && s.runs.round == nil {
		if want == "" {
			return nil, badRequest("live traces need a service: variant=<service>")
		}
		lv, err := s.runs.liveVariant(r, want)
		if err != nil {
			return nil, err
		}
		return []*loadedVariant{lv}, nil
	}
	lr, err := s.runs.load(r.Context(), run)
	if err != nil {
		return nil, err
	}
	if want == "" {
		return lr.variants, nil
	}
	if v := lr.variant(want); v != nil {
		return []*loadedVariant{v}, nil
	}
	return nil, notFound("run %s has no variant %q", run, want)
}

// searchTraces filters a run's traces: variant, service (any span of it),
// operation (any span's), min_ms and max_ms (the trace's duration), error
// (a span with status ERROR), finding (a detector whose finding's spans
// the trace holds: detect.Finding.SpansIn).
func (s *Server) searchTraces(r *http.Request) (any, error) {
	vs, err := s.variants(r)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	service, operation, finding := q.Get("service"), q.Get("operation"), q.Get("finding")
	minMs, maxMs := number(q.Get("min_ms"), 0), number(q.Get("max_ms"), math.Inf(1))
	wantError := q.Get("error") == "1" || q.Get("error") == "true"
	out := SearchResult{Traces: []TraceSummary{}}
	services, operations, findings := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, v := range vs {
		out.Variants = append(out.Variants, v.name)
		for _, f := range v.findings {
			findings[f.Detector] = true
		}
		for _, t := range v.traces {
			hasService, hasOp, hasError := service == "", operation == "", false
			for _, sp := range t.Spans {
				services[sp.Service] = true
				op := t.Operation(sp)
				operations[op] = true
				hasService = hasService || sp.Service == service
				hasOp = hasOp || op == operation
				hasError = hasError || sp.Status == trace.StatusError
			}
			d := float64(t.Duration()) / 1e6
			if !hasService || !hasOp || (wantError && !hasError) || d < minMs || d > maxMs {
				continue
			}
			ids := v.findingsIn(t)
			if finding != "" && !slices.Contains(ids, finding) {
				continue
			}
			out.Total++
			if len(out.Traces) < searchLimit {
				out.Traces = append(out.Traces, v.summarize(t, ids, hasError))
			}
		}
	}
	out.Services, out.Operations, out.Findings = sortedKeys(services), sortedKeys(operations), sortedKeys(findings)
	return out, nil
}

// findingsIn names the detectors whose findings t shows.
func (v *loadedVariant) findingsIn(t *trace.Trace) []string {
	ids := []string{}
	for i := range v.findings {
		f := &v.findings[i]
		if !slices.Contains(ids, f.Detector) && len(f.SpansIn(t)) > 0 {
			ids = append(ids, f.Detector)
		}
	}
	return ids
}

func (v *loadedVariant) summarize(t *trace.Trace, findings []string, hasError bool) TraceSummary {
	ts := TraceSummary{ID: t.ID, Variant: v.name, StartMs: float64(t.Root.Start) / 1e6,
		DurationMs: float64(t.Duration()) / 1e6, Spans: len(t.Spans),
		Root: t.Root.Service + " " + t.Operation(t.Root), Error: hasError, Findings: findings}
	if rq, ok := v.client[t.ID]; ok && rq.OutsideMs != nil {
		latency := rq.LatencyMs
		ts.ClientMs, ts.OutsideMs = &latency, rq.OutsideMs
	}
	return ts
}

// TraceView is one trace for the waterfall: its spans in depth-first
// order (children by start), each with its subtree's size, so the page
// collapses a subtree by skipping rows.
type TraceView struct {
	ID         string        `json:"id"`
	Variant    string        `json:"variant"`
	StartMs    float64       `json:"start_ms"` // Unix milliseconds of the earliest span
	DurationMs float64       `json:"duration_ms"`
	Services   []string      `json:"services"`
	Spans      []SpanRow     `json:"spans"`
	Folds      []Fold        `json:"folds"`
	Findings   []FindingView `json:"findings"`
	// Critical is the critical path: [row, start ms, duration ms] sections.
	Critical [][3]float64 `json:"critical"`
	Client   *ClientView  `json:"client,omitempty"`
}

// SpanRow is one span, with short keys: a 50,000-span trace is 50,000 rows.
type SpanRow struct {
	ID      string  `json:"id"`
	Parent  int     `json:"p"` // row of the parent, -1 for a root
	Depth   int     `json:"d"`
	Size    int     `json:"z"` // rows in its subtree, itself included
	Service int     `json:"s"` // index into Services
	Op      string  `json:"o"` // what it does (trace.Operation)
	Kind    string  `json:"k"`
	Start   float64 `json:"t"` // ms after the trace's start
	Dur     float64 `json:"u"` // ms
	Error   bool    `json:"e,omitempty"`
	Thread  string  `json:"h,omitempty"`
}

// Fold is a run of more than foldAbove sibling calls of one operation,
// shown folded at first: rows From to To (inclusive, subtrees included)
// stand for Count calls between the first and last foldKeep, as the
// report shows an N+1 staircase.
type Fold struct {
	From  int    `json:"from"`
	To    int    `json:"to"`
	Count int    `json:"count"`
	Op    string `json:"op"`
}

const (
	foldAbove = 8
	foldKeep  = 3
)

// FindingView is a finding of the trace's variant drawn on the spans of
// this trace it is about.
type FindingView struct {
	Detector string `json:"detector"`
	Summary  string `json:"summary"`
	Rows     []int  `json:"rows"`
}

// ClientView is the load engine's side of the request the trace answered.
type ClientView struct {
	LatencyMs float64  `json:"latency_ms"`
	ServerMs  *float64 `json:"server_ms,omitempty"`
	OutsideMs *float64 `json:"outside_ms,omitempty"`
	Status    int      `json:"status"`
}

func (s *Server) findTrace(r *http.Request) (*loadedVariant, *trace.Trace, error) {
	vs, err := s.variantsOf(r, r.PathValue("variant"))
	if err != nil {
		return nil, nil, err
	}
	id := strings.ToLower(r.PathValue("trace"))
	if t := vs[0].byID[id]; t != nil {
		return vs[0], t, nil
	}
	return nil, nil, notFound("variant %s has no trace %s", vs[0].name, id)
}

func (s *Server) getTrace(r *http.Request) (any, error) {
	v, t, err := s.findTrace(r)
	if err != nil {
		return nil, err
	}
	return view(v, t), nil
}

func view(v *loadedVariant, t *trace.Trace) *TraceView {
	start := t.Spans[0].Start
	for _, sp := range t.Spans {
		start = min(start, sp.Start)
	}
	tv := &TraceView{ID: t.ID, Variant: v.name, StartMs: float64(start) / 1e6, DurationMs: float64(t.Duration()) / 1e6,
		Spans: make([]SpanRow, 0, len(t.Spans)), Folds: []Fold{}, Findings: []FindingView{}, Critical: [][3]float64{}}
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	services := map[string]int{}
	row := map[*trace.Span]int{}
	// Depth first without recursion: a trace may be thousands deep.
	type frame struct {
		span   *trace.Span
		parent int
		depth  int
	}
	var stack []frame
	roots := t.Roots()
	for i := len(roots) - 1; i >= 0; i-- {
		stack = append(stack, frame{roots[i], -1, 0})
	}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		sp := f.span
		si, ok := services[sp.Service]
		if !ok {
			si = len(tv.Services)
			services[sp.Service] = si
			tv.Services = append(tv.Services, sp.Service)
		}
		row[sp] = len(tv.Spans)
		tv.Spans = append(tv.Spans, SpanRow{ID: sp.SpanID, Parent: f.parent, Depth: f.depth, Size: 1, Service: si,
			Op: t.Operation(sp), Kind: sp.Kind.String(), Start: ms(sp.Start - start), Dur: ms(sp.Duration()),
			Error: sp.Status == trace.StatusError, Thread: sp.Attr("thread.name")})
		children := t.Children(sp)
		for i := len(children) - 1; i >= 0; i-- {
			stack = append(stack, frame{children[i], row[sp], f.depth + 1})
		}
	}
	// Subtree sizes, children before parents (rows are in depth-first order).
	for i := len(tv.Spans) - 1; i >= 0; i-- {
		if p := tv.Spans[i].Parent; p >= 0 {
			tv.Spans[p].Size += tv.Spans[i].Size
		}
	}
	for _, sp := range t.Spans {
		if v.blind {
			break // folding repeats would point at them
		}
		children := t.Children(sp)
		for i := 0; i < len(children); {
			j := i + 1
			for j < len(children) && t.Operation(children[j]) == t.Operation(children[i]) {
				j++
			}
			if j-i > foldAbove {
				first, last := row[children[i+foldKeep]], row[children[j-foldKeep-1]]
				tv.Folds = append(tv.Folds, Fold{From: first, To: last + tv.Spans[last].Size - 1, Count: j - i - 2*foldKeep, Op: t.Operation(children[i])})
			}
			i = j
		}
	}
	sort.Slice(tv.Folds, func(i, j int) bool { return tv.Folds[i].From < tv.Folds[j].From })
	for i := range v.findings {
		f := &v.findings[i]
		if spans := f.SpansIn(t); len(spans) > 0 {
			fv := FindingView{Detector: f.Detector, Summary: f.Summary}
			for _, sp := range spans {
				fv.Rows = append(fv.Rows, row[sp])
			}
			tv.Findings = append(tv.Findings, fv)
		}
	}
	// By id through the rows: t.Span scans, and a path has a section per call.
	rowOf := make(map[string]int, len(tv.Spans))
	for i, sr := range tv.Spans {
		rowOf[sr.ID] = i
	}
	for _, sec := range t.CriticalPath() {
		if i, ok := rowOf[sec.SpanID]; ok {
			tv.Critical = append(tv.Critical, [3]float64{float64(i), ms(sec.Start - start), ms(sec.Duration())})
		}
	}
	if rq, ok := v.client[t.ID]; ok {
		tv.Client = &ClientView{LatencyMs: rq.LatencyMs, ServerMs: rq.ServerMs, OutsideMs: rq.OutsideMs, Status: rq.Status}
	}
	return tv
}

// SpanDetail is everything recorded of one span.
type SpanDetail struct {
	TraceID       string            `json:"trace_id"`
	SpanID        string            `json:"span_id"`
	ParentID      string            `json:"parent_id,omitempty"`
	Name          string            `json:"name"`
	Operation     string            `json:"operation"`
	Service       string            `json:"service"`
	Kind          string            `json:"kind"`
	Scope         string            `json:"scope,omitempty"`
	StartMs       float64           `json:"start_ms"` // Unix milliseconds
	DurationMs    float64           `json:"duration_ms"`
	Status        string            `json:"status"`
	StatusMessage string            `json:"status_message,omitempty"`
	Attributes    map[string]string `json:"attributes"`
	Resource      map[string]string `json:"resource"`
}

func (s *Server) getSpan(r *http.Request) (any, error) {
	_, t, err := s.findTrace(r)
	if err != nil {
		return nil, err
	}
	sp := t.Span(strings.ToLower(r.PathValue("span")))
	if sp == nil {
		return nil, notFound("trace %s has no span %s", t.ID, r.PathValue("span"))
	}
	return SpanDetail{TraceID: t.ID, SpanID: sp.SpanID, ParentID: sp.ParentID, Name: sp.Name, Operation: t.Operation(sp),
		Service: sp.Service, Kind: sp.Kind.String(), Scope: sp.Scope, StartMs: float64(sp.Start) / 1e6,
		DurationMs: float64(sp.Duration()) / 1e6, Status: sp.Status.String(), StatusMessage: sp.StatusMessage,
		Attributes: sp.Attrs.Map(), Resource: sp.ResourceAttrs}, nil
}

// traceQL lists a run's traces a TraceQL query selects, evaluated by the
// lab's own evaluator of the subset its dashboards use (internal/dashcheck).
func (s *Server) traceQL(r *http.Request) (any, error) {
	q, err := traceql.Parse(r.URL.Query().Get("q"))
	if err != nil {
		return nil, badRequest("%v", err)
	}
	vs, err := s.variants(r)
	if err != nil {
		return nil, err
	}
	out := SearchResult{Traces: []TraceSummary{}}
	for _, v := range vs {
		out.Variants = append(out.Variants, v.name)
		for _, t := range v.traces {
			if !q.Match(t) {
				continue
			}
			out.Total++
			if len(out.Traces) < searchLimit {
				hasError := slices.ContainsFunc(t.Spans, func(sp *trace.Span) bool { return sp.Status == trace.StatusError })
				out.Traces = append(out.Traces, v.summarize(t, v.findingsIn(t), hasError))
			}
		}
	}
	return out, nil
}

func (rs *runStore) liveVariant(r *http.Request, service string) (*loadedVariant, error) {
	lookback, err := time.ParseDuration(cmp.Or(r.URL.Query().Get("lookback"), "15m"))
	if err != nil || lookback <= 0 {
		return nil, badRequest("lookback %q is not a duration like 15m", r.URL.Query().Get("lookback"))
	}
	key := service + "/" + lookback.String()
	rs.liveMu.Lock()
	defer rs.liveMu.Unlock()
	if c, ok := rs.liveCache[key]; ok && time.Since(c.at) < liveFresh {
		return c.lv, nil
	}
	lv, err := rs.live(r.Context(), service, lookback, int(number(r.URL.Query().Get("limit"), 200)))
	if err != nil {
		return nil, err
	}
	if rs.liveCache == nil {
		rs.liveCache = map[string]liveEntry{}
	}
	rs.liveCache[key] = liveEntry{time.Now(), lv}
	return lv, nil
}

// liveFresh is how long a live search's traces are reused: opening a trace
// from the list must find the trace the list showed.
const liveFresh = time.Minute

type liveEntry struct {
	at time.Time
	lv *loadedVariant
}

func number(s string, def float64) float64 {
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) {
		return f
	}
	return def
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
