package explorer

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"tracelab/pkg/analyze"
	"tracelab/pkg/detect"
	"tracelab/pkg/result"
	"tracelab/pkg/source"
	"tracelab/pkg/trace"
)

// liveRun is the id of the pseudo-run whose traces are Jaeger's, fetched
// when asked for, one variant per service.
const liveRun = "live"

// runStore reads runs from their folders and keeps the last few whose
// traces were opened, parsed, so a learner moving between traces of one
// run waits for its files once.
type runStore struct {
	dir, jaegerURL string

	mu        sync.Mutex
	summaries map[string]cachedSummary // by run id
	loaded    []*loadedRun             // most recently used first

	// round is the blind explorer's one run; nil otherwise.
	round *loadedRun

	liveMu    sync.Mutex
	liveCache map[string]liveEntry // by service and lookback
}

type cachedSummary struct {
	mod time.Time
	sum RunSummary
}

// keepRuns is how many runs keep their parsed traces: a full run's are
// hundreds of megabytes in memory.
const keepRuns = 2

func newRunStore(dir, jaegerURL string) *runStore {
	return &runStore{dir: dir, jaegerURL: jaegerURL, summaries: map[string]cachedSummary{}}
}

// newRoundStore holds a training round's traces as the one run RoundRun
// with the one variant RoundRun, and no findings.
func newRoundStore(r *Round) *runStore {
	v := &loadedVariant{name: RoundRun, traces: r.Traces, byID: map[string]*trace.Trace{}, client: map[string]result.Request{}, blind: true}
	for _, t := range r.Traces {
		v.byID[t.ID] = t
	}
	return &runStore{round: &loadedRun{id: RoundRun, variants: []*loadedVariant{v}}}
}

// RunSummary is a run as the runs page lists it.
type RunSummary struct {
	ID        string           `json:"id"`
	Scenario  string           `json:"scenario"`
	Profile   string           `json:"profile"`
	Runtime   string           `json:"runtime"`
	StartedAt time.Time        `json:"started_at"`
	Verdict   string           `json:"verdict"`
	Variants  []VariantSummary `json:"variants"`
	Checks    []result.Check   `json:"checks"`
	Error     string           `json:"error,omitempty"` // why the run cannot be opened
}

type VariantSummary struct {
	Name     string             `json:"name"`
	Requests int                `json:"requests"`
	P50Ms    float64            `json:"p50_ms"`
	P95Ms    float64            `json:"p95_ms"`
	Bound    string             `json:"bound,omitempty"`
	Findings []detect.Finding   `json:"findings"`
	Metrics  map[string]float64 `json:"metrics,omitempty"`
	Traces   bool               `json:"traces"` // its traces file is there
	// WindowEnd is when its load ended: a dashboard's range ends there.
	WindowEnd time.Time `json:"window_end"`
}

// list returns every run in the folder, the newest first. A run whose
// result.json cannot be read is listed with its error.
func (rs *runStore) list() []RunSummary {
	entries, _ := os.ReadDir(rs.dir)
	var out []RunSummary
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sum, ok := rs.summary(e.Name())
		if ok {
			out = append(out, sum)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].StartedAt.After(out[j].StartedAt) })
	return out
}

// summary reads one run's result.json, or its cached summary while the
// file is unchanged; ok is false for a folder that is not a run.
func (rs *runStore) summary(id string) (RunSummary, bool) {
	path := filepath.Join(rs.dir, id, "result.json")
	st, err := os.Stat(path)
	if err != nil {
		return RunSummary{}, false
	}
	rs.mu.Lock()
	c, hit := rs.summaries[id]
	rs.mu.Unlock()
	if hit && c.mod.Equal(st.ModTime()) {
		return c.sum, true
	}
	res, err := result.Read(path)
	sum := RunSummary{ID: id}
	if err != nil {
		sum.Error = err.Error()
		sum.StartedAt = st.ModTime()
	} else {
		sum = summarize(id, res)
	}
	rs.mu.Lock()
	rs.summaries[id] = cachedSummary{st.ModTime(), sum}
	rs.mu.Unlock()
	return sum, true
}

func summarize(id string, res *result.Result) RunSummary {
	sum := RunSummary{ID: id, Scenario: res.Scenario, Profile: res.Profile, Runtime: res.Runtime,
		StartedAt: res.StartedAt, Verdict: res.Verdict}
	for _, v := range res.Variants {
		_, err := os.Stat(tracesFile(res, v))
		sum.Variants = append(sum.Variants, VariantSummary{
			Name: v.Variant, Requests: v.Load.Requests, P50Ms: v.Load.P50Ms, P95Ms: v.Load.P95Ms,
			Bound: v.Bound, Findings: v.Analysis.Findings, Metrics: v.Metrics, Traces: err == nil, WindowEnd: v.Window.End,
		})
	}
	sum.Checks = res.Checks
	return sum
}

// tracesFile is where a variant's traces are: beside its result.json, so
// a results folder copied or moved elsewhere still opens.
func tracesFile(res *result.Result, v result.VariantResult) string {
	name := v.Variant + "-traces.json"
	if v.TracesFile != "" {
		name = filepath.Base(v.TracesFile)
	}
	return filepath.Join(filepath.Dir(res.ResultFile), name)
}

// loadedRun is a run with its traces parsed and indexed.
type loadedRun struct {
	id       string
	summary  RunSummary
	variants []*loadedVariant
}

type loadedVariant struct {
	name     string
	traces   []*trace.Trace
	byID     map[string]*trace.Trace
	findings []detect.Finding
	// client is each request the load engine sent, by its trace id.
	client map[string]result.Request
	// blind: a training round's, drawn without folded repeats.
	blind bool
}

func (lr *loadedRun) variant(name string) *loadedVariant {
	for _, v := range lr.variants {
		if v.name == name {
			return v
		}
	}
	return nil
}

// load returns a run with its traces, reading them if they are not among
// the last runs opened.
func (rs *runStore) load(ctx context.Context, id string) (*loadedRun, error) {
	if rs.round != nil {
		if id != rs.round.id {
			return nil, notFound("a training round's explorer has only the run %q", rs.round.id)
		}
		return rs.round, nil
	}
	if id == liveRun {
		return nil, badRequest("the live traces are searched by service: /api/runs/live/traces?variant=<service>")
	}
	rs.mu.Lock()
	for i, lr := range rs.loaded {
		if lr.id == id {
			rs.loaded = slices.Insert(slices.Delete(rs.loaded, i, i+1), 0, lr)
			rs.mu.Unlock()
			return lr, nil
		}
	}
	rs.mu.Unlock()
	if filepath.Base(id) != id || id == "." || id == ".." {
		return nil, badRequest("%q is not a run id", id)
	}
	res, err := result.Read(filepath.Join(rs.dir, id, "result.json"))
	if err != nil {
		return nil, notFound("no run %q in %s", id, rs.dir)
	}
	lr := &loadedRun{id: id, summary: summarize(id, res)}
	for _, v := range res.Variants {
		src := &source.Source{Kind: source.File, Path: tracesFile(res, v)}
		traces, err := src.Fetch(ctx)
		var none *source.NoTracesError
		if err != nil && !errors.As(err, &none) {
			return nil, err
		}
		lv := &loadedVariant{name: v.Variant, traces: traces, findings: v.Analysis.Findings,
			byID: map[string]*trace.Trace{}, client: map[string]result.Request{}}
		for _, t := range traces {
			lv.byID[t.ID] = t
		}
		for _, rq := range v.Requests {
			if rq.TraceID != "" {
				lv.client[rq.TraceID] = rq
			}
		}
		lr.variants = append(lr.variants, lv)
	}
	rs.mu.Lock()
	rs.loaded = append([]*loadedRun{lr}, rs.loaded...)
	if len(rs.loaded) > keepRuns {
		rs.loaded = rs.loaded[:keepRuns]
	}
	rs.mu.Unlock()
	return lr, nil
}

// live fetches the traces of one service from Jaeger over the last
// lookback, analyzed as a variant of their own.
func (rs *runStore) live(ctx context.Context, service string, lookback time.Duration, limit int) (*loadedVariant, error) {
	if rs.jaegerURL == "" {
		return nil, notFound("no Jaeger is configured: start the stack (make up) for live traces")
	}
	now := time.Now()
	src := &source.Source{Kind: source.Jaeger, URL: rs.jaegerURL, Service: service, From: now.Add(-lookback), To: now,
		Limit: limit, Timeout: source.DefaultTimeout, MaxResponseBytes: source.DefaultMaxResponseBytes}
	traces, err := src.Fetch(ctx)
	var none *source.NoTracesError
	if err != nil && !errors.As(err, &none) {
		return nil, err
	}
	lv := &loadedVariant{name: service, traces: traces, byID: map[string]*trace.Trace{}, client: map[string]result.Request{}}
	for _, t := range traces {
		lv.byID[t.ID] = t
	}
	lv.findings = analyze.Analyze(traces, detect.All()).Findings
	return lv, nil
}

func (s *Server) listRuns(*http.Request) (any, error) {
	runs := s.runs.list()
	if runs == nil {
		runs = []RunSummary{}
	}
	return runs, nil
}

func (s *Server) getRun(r *http.Request) (any, error) {
	sum, ok := s.runs.summary(r.PathValue("run"))
	if !ok || filepath.Base(r.PathValue("run")) != r.PathValue("run") {
		return nil, notFound("no run %q in %s", r.PathValue("run"), s.cfg.Results)
	}
	return sum, nil
}
