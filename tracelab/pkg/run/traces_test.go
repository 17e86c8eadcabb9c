package run

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tracelab/internal/labtest"
	"tracelab/internal/tracegen"
	"tracelab/pkg/lab"
	"tracelab/pkg/load"
	"tracelab/pkg/otlp"
	"tracelab/pkg/runtime"
	"tracelab/pkg/scenario"
	"tracelab/pkg/trace"
)

// fakeStack is a runtime whose services answer at once; its Jaeger and
// Prometheus are the test's.
type fakeStack struct {
	runtime.Runtime // the methods a run does not call
	jaeger, prom    string
}

func (*fakeStack) Name() string                                                 { return "local" }
func (*fakeStack) Up(context.Context, []string, runtime.Settings, string) error { return nil }
func (*fakeStack) Endpoint(string) (string, error)                              { return "http://127.0.0.1:9", nil }
func (f *fakeStack) JaegerURL() string                                          { return f.jaeger }
func (f *fakeStack) PrometheusURL() string                                      { return f.prom }
func (*fakeStack) Reconnect(context.Context) error                              { return nil }
func (*fakeStack) Exited(context.Context) error                                 { return nil }
func (*fakeStack) CPUs(context.Context, string, map[string]string) float64      { return 1 }
func (*fakeStack) CPUSeconds(context.Context, []string) (map[string]float64, error) {
	return nil, nil
}

// answeredLoad is a load whose every request is answered; its targets are
// elsewhere, so the run reads no CPU of this process.
type answeredLoad struct{ ids []string }

func (answeredLoad) Target(string) (string, error) { return "http://catalog.test", nil }

func (l answeredLoad) Run(context.Context, *load.Definition, load.Options) (*load.Run, error) {
	r := &load.Run{Model: "closed", Summary: load.Summary{Requests: len(l.ids), ThroughputRPS: 1, P50Ms: 500, P95Ms: 600, MeanMs: 500}}
	for _, id := range l.ids {
		r.Records = append(r.Records, load.Record{Name: "summary", TraceID: id, Status: 200, LatencyMs: 500})
	}
	return r, nil
}

// growingJaeger answers a trace search with the first trace only, then
// with all: the other services' spans arrive later.
type growingJaeger struct {
	mu       sync.Mutex
	few, all []byte
	searches int
}

func (j *growingJaeger) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	j.mu.Lock()
	defer j.mu.Unlock()
	switch r.URL.Path {
	case "/api/v3/services":
		io.WriteString(w, `{"services":["catalog","pricing"]}`)
	case "/api/v3/traces":
		j.searches++
		if j.searches == 1 {
			w.Write(j.few)
		} else {
			w.Write(j.all)
		}
	default:
		http.NotFound(w, r)
	}
}

// silentPrometheus has scraped past any window, and no service exports the
// client metrics detectors read: they judge on traces alone.
func silentPrometheus(w http.ResponseWriter, r *http.Request) {
	result := "[]"
	if r.FormValue("query") == "max(timestamp(up))" {
		result = fmt.Sprintf(`[{"metric":{},"value":[%d,"%d"]}]`, time.Now().Unix(), time.Now().Add(time.Hour).Unix())
	}
	fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":%s}}`, result)
}

func otlpDoc(t *testing.T, traces []*trace.Trace) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := otlp.Write(&b, traces); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A run parses each variant's traces once: while waiting for them it
// compares Jaeger's answers without parsing them, and detection, the judge
// and the report take the parsed traces in memory.
func TestARunParsesEachVariantsTracesOnce(t *testing.T) {
	defer func(every time.Duration) { tracesEvery = every }(tracesEvery)
	tracesEvery = 10 * time.Millisecond

	var spans []*trace.Span
	for i := 0; i < 3; i++ {
		spans = append(spans, tracegen.LabTrace(tracegen.LabOptions{Items: 20, Start: time.Now().Add(time.Duration(i) * time.Second), Seed: int64(i)})...)
	}
	traces := trace.Group(spans)
	var ids []string
	for _, tr := range traces {
		ids = append(ids, tr.ID)
	}
	jg := &growingJaeger{few: otlpDoc(t, traces[:1]), all: otlpDoc(t, traces)}
	js := httptest.NewServer(jg)
	defer js.Close()
	ps := httptest.NewServer(http.HandlerFunc(silentPrometheus))
	defer ps.Close()

	own := labtest.Lab(t)
	s, err := scenario.Load(own, "nplus1")
	if err != nil {
		t.Fatal(err)
	}
	co := &lab.Checkout{Root: own.Root, State: t.TempDir()}
	var parses atomic.Int32
	r := &Runner{Lab: co, Runtime: &fakeStack{jaeger: js.URL, prom: ps.URL}, Load: answeredLoad{ids}, Progress: t.Logf,
		parse: func(in io.Reader) ([]*trace.Trace, error) {
			parses.Add(1)
			return otlp.Parse(in)
		}}
	smoke, err := s.ProfileNamed("smoke")
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(context.Background(), s, Options{Profile: smoke, Variants: []string{"baseline", "fixed"}})
	if err != nil {
		t.Fatal(err)
	}
	if n := parses.Load(); n != 2 {
		t.Errorf("2 variants' traces were parsed %d times; want once each", n)
	}
	jg.mu.Lock()
	if jg.searches < 2*3 {
		t.Errorf("Jaeger was asked %d times; want at least 3 per variant (a growing answer, then two alike)", jg.searches)
	}
	jg.mu.Unlock()
	page, err := os.ReadFile(res.ReportFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range res.Variants {
		if len(v.Traces) != len(traces) || v.Analysis.Traces != len(traces) {
			t.Errorf("%s: %d traces in memory, %d analyzed; want %d", v.Variant, len(v.Traces), v.Analysis.Traces, len(traces))
		}
		if _, err := os.Stat(v.TracesFile); err != nil {
			t.Errorf("%s: no traces file for users: %v", v.Variant, err)
		}
		if !strings.Contains(string(page), `id="variant-`+v.Variant+`"`) {
			t.Errorf("the report has no section for %s", v.Variant)
		}
	}
}

// An answer that stopped growing short of the run's traces is parsed, and
// parsed again only once it has changed and stopped growing again.
func TestAStableAnswerShortOfTracesIsReadAgainOnlyOnceItChanged(t *testing.T) {
	defer func(every time.Duration) { tracesEvery = every }(tracesEvery)
	tracesEvery = time.Millisecond
	traces := trace.Group(tracegen.LabTrace(tracegen.LabOptions{Items: 5, Start: time.Now(), Seed: 1}))
	traces = append(traces, trace.Group(tracegen.LabTrace(tracegen.LabOptions{Items: 5, Start: time.Now(), Seed: 2}))...)
	few, all := otlpDoc(t, traces[:1]), otlpDoc(t, traces)
	var searches atomic.Int32
	js := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if searches.Add(1) <= 6 { // the second trace's spans are late
			w.Write(few)
		} else {
			w.Write(all)
		}
	}))
	defer js.Close()
	var parses atomic.Int32
	r := &Runner{parse: func(in io.Reader) ([]*trace.Trace, error) {
		parses.Add(1)
		return otlp.Parse(in)
	}}
	ep := scenario.Entrypoint{Service: "catalog", Method: "GET", Path: "/catalog/summary"}
	r.Runtime = &fakeStack{jaeger: js.URL}
	got, err := r.collectTraces(context.Background(), r.runTraces(ep, time.Now(), time.Now(), 2), ep, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || parses.Load() != 2 {
		t.Errorf("%d traces after %d parses of %d answers; want 2 after 2 (the short answer once, the whole one once)", len(got), parses.Load(), searches.Load())
	}
}
