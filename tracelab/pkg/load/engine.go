package load

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"text/template"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Options are a run's target and parameters.
type Options struct {
	// Target is the base URL the definition's paths are relative to.
	Target string
	// Params override the definition's parameters and shape the model.
	Params map[string]string
	// Progress gets a line every ProgressEvery (default 10 s).
	Progress      func(format string, a ...any)
	ProgressEvery time.Duration
	// LogFile is where a driver that runs the load elsewhere (a Job in the
	// cluster) appends that run's output, so a failure can be read after
	// the Job is gone; "" keeps none. The in-process engine has no output
	// of its own beyond Progress.
	LogFile string
}

// Run is what one run of a load measured.
type Run struct {
	Start   time.Time `json:"start"`
	Model   string    `json:"model"`
	Summary Summary   `json:"summary"`
	Records []Record  `json:"records"`
}

// Record is one request. Times are milliseconds from the run's start.
type Record struct {
	Name    string `json:"name"`
	TraceID string `json:"trace_id"`
	// ScheduledMs is when the open model meant it to leave (a closed
	// model's request is due when it leaves).
	ScheduledMs float64 `json:"scheduled_ms"`
	SentMs      float64 `json:"sent_ms"`
	// LatencyMs runs from the scheduled instant to the answer's last byte.
	LatencyMs float64 `json:"latency_ms"`
	Status    int     `json:"status"`
	BytesIn   uint64  `json:"bytes_in"`
	BytesOut  uint64  `json:"bytes_out"`
	// Error is empty when the answer had the expected status.
	Error string `json:"error,omitempty"`
}

// Failed tells whether the request failed.
func (r Record) Failed() bool { return r.Error != "" }

// WaitMs is how long the request waited on the sender: from its
// scheduled instant until it left.
func (r Record) WaitMs() float64 { return r.SentMs - r.ScheduledMs }

// Headers the targeter hands to the transport, which removes them: they
// say which request of the mix this is and what it expects.
const (
	headerRequest = "X-Tracelab-Request"
	headerExpect  = "X-Tracelab-Expect"
	headerSeq     = "X-Vegeta-Seq" // set by Vegeta's attacker on every request
)

// Run sends the load and returns a record per request.
func (d *Definition) Run(ctx context.Context, opt Options) (*Run, error) {
	params, err := d.params(opt.Params)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", d.file, err)
	}
	model, err := ModelOf(params)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", d.file, err)
	}
	weights := make([]float64, len(d.requests))
	for i, r := range d.requests {
		if weights[i], err = d.weight(r.Weight, params); err != nil {
			return nil, fmt.Errorf("%s: %v", d.file, err)
		}
	}
	target := strings.TrimSuffix(opt.Target, "/")
	conns := &http.Transport{MaxIdleConnsPerHost: 10000, DisableCompression: true}
	defer conns.CloseIdleConnections()
	tr := &transport{next: conns}
	// A redirect would be a second request under the first one's record.
	client := &http.Client{Transport: tr, Timeout: d.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	lists, err := d.setup(ctx, client, target)
	if err != nil {
		return nil, err
	}
	data := make(map[string]any, len(params))
	for k, v := range params {
		data[k] = v
	}
	m := &mix{def: d, target: target, weights: weights, lists: lists, data: data}

	progress := opt.Progress
	if progress == nil {
		progress = func(string, ...any) {}
	}
	every := opt.ProgressEvery
	if every <= 0 {
		every = 10 * time.Second
	}
	tick := time.NewTicker(every)
	defer tick.Stop()

	atk := vegeta.NewAttacker(vegeta.Client(client), vegeta.Workers(uint64(model.Users)), vegeta.MaxWorkers(uint64(model.MaxUsers)))
	pacer, du := model.pacer()
	run := &Run{Model: model.String(), Start: time.Now()}
	results := atk.Attack(m.next, pacer, du, "")
	failed := 0
	for {
		select {
		case <-ctx.Done():
			atk.Stop()
			for range results {
			}
			return nil, ctx.Err()
		case <-tick.C:
			progress("load: %d%s requests answered in %s, %d failed", len(run.Records), model.of(), time.Since(run.Start).Round(time.Second), failed)
		case res, ok := <-results:
			if !ok {
				if m.err != nil {
					return nil, m.err
				}
				run.Summary = Summarize(run.Records, model)
				return run, nil
			}
			rec := m.record(res, tr.take(res.Seq), model, run.Start)
			if rec.Failed() {
				failed++
			}
			run.Records = append(run.Records, rec)
		}
	}
}

// record is Vegeta's result as the lab keeps it. An open model's latency
// runs from the request's scheduled instant: the attacker's seq numbers
// follow the order requests left in, so the n-th to leave is due at the
// n-th instant of the schedule.
func (m *mix) record(res *vegeta.Result, meta meta, model Model, start time.Time) Record {
	ms := func(t time.Duration) float64 { return float64(t) / 1e6 }
	sent := res.Timestamp.Sub(start)
	scheduled := sent
	if model.Open && res.Seq < uint64(len(model.Schedule)) {
		scheduled = min(sent, model.Schedule[res.Seq])
	}
	rec := Record{TraceID: meta.traceID, ScheduledMs: ms(scheduled), SentMs: ms(sent),
		LatencyMs: ms(sent + res.Latency - scheduled), Status: int(res.Code), BytesIn: res.BytesIn, BytesOut: res.BytesOut}
	var r *request
	if meta.request >= 0 && meta.request < len(m.def.requests) {
		r = m.def.requests[meta.request]
		rec.Name = r.Name
	}
	switch {
	case res.Code == 0 || r == nil:
		rec.Error = or(res.Error, "no answer")
	case int(res.Code) != meta.expect:
		rec.Error = fmt.Sprintf("status %d, expected %d", res.Code, meta.expect)
	case r.Keep != nil:
		m.keep(r.Keep, res.Body)
	}
	return rec
}

// params are the definition's defaults overridden by given; a name that is
// neither a model parameter nor the definition's own is refused, so that a
// misspelt parameter cannot go unnoticed.
func (d *Definition) params(given map[string]string) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range d.Params {
		out[k] = v
	}
	for k, v := range given {
		if _, own := d.Params[k]; !own && !IsModelParam(k) {
			own := "none of its own"
			if len(d.Params) > 0 {
				own = "its own " + strings.Join(d.ParamNames(), ", ")
			}
			return nil, fmt.Errorf("unknown parameter %s; the load takes %s, and %s", k, strings.Join(modelParams, ", "), own)
		}
		out[k] = v
	}
	return out, nil
}

// CheckParams refuses names the definition does not take, and values the
// model cannot read.
func (d *Definition) CheckParams(given map[string]string) error {
	params, err := d.params(given)
	if err == nil {
		_, err = ModelOf(params)
	}
	if err != nil {
		return fmt.Errorf("%s: %v", d.file, err)
	}
	return nil
}

// setup makes the definition's setup calls and returns their lists.
func (d *Definition) setup(ctx context.Context, client *http.Client, target string) (map[string][]any, error) {
	lists := map[string][]any{}
	for _, s := range d.Setup {
		req, err := http.NewRequestWithContext(ctx, or(s.Method, "GET"), target+s.Path, nil)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, fmt.Errorf("setup %s %s: %v", req.Method, s.Path, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("setup %s %s: %v", req.Method, s.Path, err)
		}
		if want := orInt(s.Expect, 200); resp.StatusCode != want {
			return nil, fmt.Errorf("setup %s %s answered %d, expected %d", req.Method, s.Path, resp.StatusCode, want)
		}
		var answer map[string]any
		if err := json.Unmarshal(body, &answer); err != nil {
			return nil, fmt.Errorf("setup %s %s: the answer is not a JSON object: %v", req.Method, s.Path, err)
		}
		items, _ := answer[s.List].([]any)
		if len(items) == 0 {
			return nil, fmt.Errorf("setup %s %s: the answer has no list %q, or it is empty", req.Method, s.Path, s.List)
		}
		lists[s.Name] = items
	}
	return lists, nil
}

func orInt(x, def int) int {
	if x == 0 {
		return def
	}
	return x
}

// mix makes each request of the load: it picks one of the definition's
// requests by weight and fills in its templates. Vegeta's workers call
// next concurrently.
type mix struct {
	def     *Definition
	target  string
	weights []float64
	data    map[string]any // the parameters; read-only once the run starts

	mu    sync.Mutex
	lists map[string][]any // setup lists, and those the answers fill
	err   error
}

var bufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func (m *mix) next(t *vegeta.Target) error {
	i, item, err := m.pick()
	if err == nil {
		err = m.fill(t, i, item)
	}
	if err != nil {
		// Vegeta stops the attack when a targeter fails; the run reports why.
		m.mu.Lock()
		if m.err == nil {
			m.err = fmt.Errorf("%s: %v", m.def.file, err)
		}
		m.mu.Unlock()
	}
	return err
}

// pick draws a request among those that can run: one drawing from a list
// that is still empty (no order created yet) cannot. When those that can
// all weigh 0, the first of them runs.
func (m *mix) pick() (int, any, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	total, first := 0.0, -1
	for i, r := range m.def.requests {
		if r.From == "" || len(m.lists[r.From]) > 0 {
			total += m.weights[i]
			if first < 0 {
				first = i
			}
		}
	}
	if first < 0 {
		return 0, nil, fmt.Errorf("no request can run: each draws from a list no answer has filled")
	}
	chosen := first
	if total > 0 {
		x := rand.Float64() * total
		for i, r := range m.def.requests {
			if r.From != "" && len(m.lists[r.From]) == 0 || m.weights[i] == 0 {
				continue
			}
			chosen = i
			if x -= m.weights[i]; x < 0 {
				break
			}
		}
	}
	var item any
	if from := m.def.requests[chosen].From; from != "" {
		l := m.lists[from]
		item = l[rand.IntN(len(l))]
	}
	return chosen, item, nil
}

func (m *mix) fill(t *vegeta.Target, i int, item any) error {
	r := m.def.requests[i]
	data := m.data
	if item != nil {
		data = make(map[string]any, len(m.data)+1)
		for k, v := range m.data {
			data[k] = v
		}
		data["item"] = item
	}
	buf := bufs.Get().(*bytes.Buffer)
	defer bufs.Put(buf)
	var err error
	text := func(tm *template.Template) string {
		if err != nil {
			return ""
		}
		var s string
		s, err = render(tm, data, buf)
		return s
	}
	t.Method = text(r.method)
	t.URL = m.target + text(r.path)
	if body := text(r.body); body != "" {
		t.Body = []byte(body)
	}
	expect := text(r.expect)
	t.Header = http.Header{}
	for k, tm := range r.headers {
		t.Header.Set(k, text(tm))
	}
	if r.Body != "" && t.Header.Get("Content-Type") == "" {
		t.Header.Set("Content-Type", "application/json")
	}
	if err != nil {
		return fmt.Errorf("request %s: %v", r.Name, err)
	}
	if _, err := strconv.Atoi(strings.TrimSpace(expect)); err != nil {
		return fmt.Errorf("request %s: expect %q is not a status", r.Name, expect)
	}
	t.Header.Set(headerRequest, strconv.Itoa(i))
	t.Header.Set(headerExpect, strings.TrimSpace(expect))
	return nil
}

// keep adds an answer's field to its list.
func (m *mix) keep(k *Keep, body []byte) {
	var answer map[string]any
	if json.Unmarshal(body, &answer) != nil || answer[k.Field] == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if k.Max == 0 || len(m.lists[k.As]) < k.Max {
		m.lists[k.As] = append(m.lists[k.As], answer[k.Field])
	}
}

// transport gives every request a fresh, sampled W3C traceparent and
// remembers, by Vegeta's sequence number, the trace id and what the
// targeter said of the request, for the record.
type transport struct {
	next    http.RoundTripper
	pending sync.Map // uint64 -> meta
}

type meta struct {
	traceID string
	request int
	expect  int
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	traceID := fmt.Sprintf("%016x%016x", rand.Uint64(), rand.Uint64()|1)
	req = req.Clone(req.Context())
	req.Header.Set("traceparent", "00-"+traceID+fmt.Sprintf("-%016x-01", rand.Uint64()|1))
	if seq, err := strconv.ParseUint(req.Header.Get(headerSeq), 10, 64); err == nil {
		i, _ := strconv.Atoi(req.Header.Get(headerRequest))
		expect, _ := strconv.Atoi(req.Header.Get(headerExpect))
		t.pending.Store(seq, meta{traceID: traceID, request: i, expect: expect})
	}
	for _, h := range []string{headerSeq, headerRequest, headerExpect} {
		req.Header.Del(h)
	}
	return t.next.RoundTrip(req)
}

// take returns and forgets what the transport saw of request seq; a
// request that never reached it (its target could not be built) has none.
func (t *transport) take(seq uint64) meta {
	v, ok := t.pending.LoadAndDelete(seq)
	if !ok {
		return meta{request: -1}
	}
	return v.(meta)
}
