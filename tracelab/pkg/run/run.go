// Package run runs a scenario on a runtime: for each variant it applies the
// settings, drives the load (pkg/load), collects the run's traces from Jaeger
// and the client metrics from Prometheus, and analyzes them; then it has
// the run judged and writes result.json and report.html.
package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"tracelab/pkg/analyze"
	"tracelab/pkg/bootstrap"
	"tracelab/pkg/compare"
	"tracelab/pkg/detect"
	"tracelab/pkg/jaeger"
	"tracelab/pkg/judge"
	"tracelab/pkg/lab"
	"tracelab/pkg/load"
	"tracelab/pkg/otlp"
	"tracelab/pkg/report"
	"tracelab/pkg/result"
	"tracelab/pkg/runtime"
	"tracelab/pkg/scenario"
	"tracelab/pkg/source"
	"tracelab/pkg/trace"
)

// Options select what a run does.
type Options struct {
	Profile  scenario.NamedProfile // resolved by the caller (Scenario.ProfileNamed)
	Variants []string              // in run order
	Record   bool                  // write the measured numbers into baseline.json
}

// Runner runs a scenario's variants on a runtime, one after another.
type Runner struct {
	Lab     *lab.Checkout // the results go under its state folder
	Runtime runtime.Runtime
	// Load runs the load: in this process, or in the cluster on kind and EKS.
	Load     load.Driver
	Progress func(format string, a ...any)
	// parse reads Jaeger's answer; nil is otlp.Parse. A test counts its calls.
	parse func(io.Reader) ([]*trace.Trace, error)
}

// Run executes every selected variant and judges the expectations. An
// error means the run could not be completed; a failed expectation is a
// Result with Verdict "fail".
func (r *Runner) Run(ctx context.Context, s *scenario.Scenario, opt Options) (*result.Result, error) {
	for _, v := range opt.Variants {
		if _, ok := s.Variants[v]; !ok {
			return nil, fmt.Errorf("scenario %s has no variant %q; variants: %s", s.Name, v, strings.Join(s.VariantNames(), ", "))
		}
	}
	res := &result.Result{Scenario: s.Name, Profile: opt.Profile.Name, Runtime: r.Runtime.Name(), StartedAt: time.Now().UTC(), Entrypoint: s.Entrypoint.Service}
	dir := filepath.Join(r.Lab.State, "results", s.Name+"-"+res.StartedAt.Format("20060102T150405Z"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var calibrated map[string]string
	if c := opt.Profile.Capacity; c != nil {
		var first string
		if len(opt.Variants) > 0 {
			first = opt.Variants[0]
		}
		probes, err := r.capacity(ctx, s, opt.Profile, c, first, dir)
		if err != nil {
			return nil, err
		}
		res.Capacity = probes
		if cal := rateFrom(c, probes); cal != nil {
			res.Calibrated = cal
			r.Progress("[capacity] every variant gets RATE=%d (%.2f x what %s serves flat out)", cal.Rate, cal.RateFactor, cal.Variant)
			calibrated = map[string]string{"RATE": strconv.Itoa(cal.Rate)}
		}
	}
	for _, v := range opt.Variants {
		vr, err := r.runVariant(ctx, s, opt.Profile, v, dir, calibrated)
		if err != nil {
			return nil, fmt.Errorf("variant %s: %w", v, err)
		}
		for _, p := range res.Capacity {
			if p.Variant == v {
				maps.Copy(vr.Metrics, p.Metrics)
				maps.Copy(vr.Samples, p.Samples)
			}
		}
		res.Variants = append(res.Variants, *vr)
	}

	base, err := scenario.LoadBaseline(s.Dir)
	if err != nil {
		return nil, err
	}
	res.Compared = judge.CompareFixes(s, res.Variants)
	res.Checks = judge.Judge(s.JudgedOn(r.Runtime.Name(), opt.Profile.Name), opt.Profile.Name, res.Variants, res.Compared, base)
	res.Verdict = judge.Verdict(res.Checks)
	if opt.Record {
		base.Record(opt.Profile.Name, res)
		if err := base.Save(s.Dir); err != nil {
			return nil, err
		}
	}
	res.ResultFile = filepath.Join(dir, "result.json")
	data, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(res.ResultFile, data, 0o644); err != nil {
		return nil, err
	}
	res.ReportFile = filepath.Join(dir, "report.html")
	if err := report.WriteFile(res.ReportFile, res, report.Options{}); err != nil {
		return nil, fmt.Errorf("writing the HTML report: %w", err)
	}
	return res, nil
}

// runVariant measures one variant; calibrated overrides the load parameters
// of the profile and the variant (the calibrated RATE).
func (r *Runner) runVariant(ctx context.Context, s *scenario.Scenario, profile scenario.NamedProfile, variant, dir string, calibrated map[string]string) (*result.VariantResult, error) {
	vr := &result.VariantResult{Variant: variant, Settings: s.SettingsFor(profile.Name, variant)}
	r.Progress("[%s] bringing up %v with the %s settings", variant, s.Services, variant)
	if err := r.Runtime.Up(ctx, s.Services, vr.Settings, variant); err != nil {
		return nil, err
	}
	err := r.whileStackRuns(ctx, func(ctx context.Context) error {
		return r.measure(ctx, s, profile, variant, dir, calibrated, vr)
	})
	if err != nil {
		return nil, err
	}
	return vr, nil
}

// measure drives one variant's load on the stack Up left running, then
// collects and analyzes what it produced into vr.
func (r *Runner) measure(ctx context.Context, s *scenario.Scenario, profile scenario.NamedProfile, variant, dir string, calibrated map[string]string, vr *result.VariantResult) error {
	p := profile.Profile
	base, err := r.target(s.Entrypoint.Service)
	if err != nil {
		return err
	}
	jc := jaeger.New(r.Runtime.JaegerURL())
	if err := jc.Ping(ctx); err != nil {
		return err
	}
	loadEnv := s.LoadEnvFor(profile.Name, variant)
	params := maps.Clone(loadEnv)
	maps.Copy(params, calibrated)
	var delivered int64
	if d := s.Expectations.Delivery; d != nil {
		if delivered, err = r.storedCount(ctx, d); err != nil {
			return err
		}
	}
	// Where a load run elsewhere (the cluster's Job) leaves its output.
	loadLog := filepath.Join(dir, variant+"-load.log")
	warm, err := r.warmUp(ctx, s, p, loadEnv, variant, base, loadLog)
	if err != nil {
		return err
	}
	if warm != nil && s.Expectations.Delivery != nil {
		vr.Delivery = &result.DeliveryCount{Sent: int64(warm.Requests), Accepted: int64(math.Round(float64(warm.Requests) * (1 - warm.Failed)))}
	}

	r.Progress("[%s] sending the load of %s (%s profile)", variant, s.Load.Definition, profile.Name)
	stopCPU := r.sampleCPU(ctx, s.Services, vr.Settings[s.Entrypoint.Service])
	vr.Window.Start = time.Now()
	lr, err := r.Load.Run(ctx, s.Load.Def, load.Options{Target: base, Params: params, Progress: r.progressFor(variant), LogFile: loadLog})
	vr.Window.End = time.Now()
	cpuSamples := stopCPU()
	if err != nil {
		return err
	}
	sum := &lr.Summary
	vr.Load = *sum
	r.Progress("[%s] %s: %d requests, p50 %s, p95 %s, %.1f%% failed", variant, lr.Model, sum.Requests, analyze.FormatMs(sum.P50Ms), analyze.FormatMs(sum.P95Ms), 100*sum.Failed)

	r.Progress("[%s] waiting for the run's traces in Jaeger", variant)
	if err := r.Runtime.Reconnect(ctx); err != nil {
		return err
	}
	want := answered(lr.Records)
	traces, err := r.collectTraces(ctx, r.runTraces(s.Entrypoint, vr.Window.Start, vr.Window.End, want), s.Entrypoint, want)
	if err != nil {
		return err
	}
	// Detection, the judge, the report and the training page take these
	// traces in memory; the file, OTLP JSON, is for `tracelab analyze
	// --file` and for reading the run back.
	vr.Traces = traces
	vr.TracesFile = filepath.Join(dir, variant+"-traces.json")
	f, err := os.Create(vr.TracesFile)
	if err != nil {
		return err
	}
	err = otlp.Write(f, traces)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	detectors := detect.All()
	if vr.ClientMetrics, err = r.clientMetrics(ctx, detectors, vr.Window.Start, vr.Window.End); err != nil {
		return err
	}
	vr.Analysis = analyze.Analyze(traces, detect.WithMetrics(detectors, vr.ClientMetrics))
	vr.Durations = compare.Durations(traces)
	vr.Requests = join(lr.Records, traces)
	vr.Metrics = metricsOf(sum, vr.Analysis)
	vr.Samples = samplesOf(traces)
	joined, samples := joinedMetrics(vr.Requests)
	maps.Copy(vr.Metrics, joined)
	maps.Copy(vr.Samples, samples)
	cpu := cpuUse(cpuSamples, answeredAt(lr), s.Entrypoint.Service)
	vr.CPU = cpu.use
	if r.loadRunsHere(s.Entrypoint.Service) {
		vr.GeneratorCores = cpu.self
	}
	if u, ok := cpu.use[s.Entrypoint.Service]; ok {
		vr.Bound = bound(u, r.Runtime.CPUs(ctx, s.Entrypoint.Service, vr.Settings[s.Entrypoint.Service]), sum.MeanMs)
		vr.Metrics["cpu_ms_per_request"] = u.MsPerRequest
		vr.Metrics["cpu_cores"] = u.Cores
		vr.Samples["cpu_ms_per_request"] = cpu.perRequest
	}
	// A closed model's served rate is what the variant achieved, and its
	// sub-windows vary with it. An open model's is the offered schedule
	// (seeded, the same every run) as far as the variant kept up: resampling
	// its sub-windows measures the schedule's bursts, not the variant, so
	// its throughput ratio is judged without an interval (failures count in
	// error_rate).
	if _, open := params["RATE"]; !open && len(cpu.served) > 0 {
		vr.Samples["throughput_rps"] = cpu.served
	}
	r.Progress("[%s] %s", variant, describeCPU(cpu.use[s.Entrypoint.Service], s.Entrypoint.Service, vr.Bound, vr.GeneratorCores))
	// The entrypoint's batching, when it exports producer client metrics:
	// the mechanism a Kafka fix changes, for ratios and the report.
	for name, from := range map[string]string{"records_per_request": "records_per_request_avg", "batch_size_bytes": "batch_size_avg_bytes"} {
		if x, ok := vr.ClientMetrics[s.Entrypoint.Service][from]; ok {
			vr.Metrics[name] = x
		}
	}
	if d := s.Expectations.Delivery; d != nil {
		if vr.Delivery == nil {
			vr.Delivery = &result.DeliveryCount{}
		}
		vr.Delivery.Sent += int64(sum.Requests)
		vr.Delivery.Accepted += int64(math.Round(float64(sum.Requests) * (1 - sum.Failed)))
		r.Progress("[%s] counting what %s stored (%d accepted)", variant, d.Service, vr.Delivery.Accepted)
		if err := r.waitDelivered(ctx, d, delivered, vr.Delivery); err != nil {
			return err
		}
		vr.Metrics["events_accepted"] = float64(vr.Delivery.Accepted)
		vr.Metrics["events_stored"] = float64(vr.Delivery.Stored)
	}
	return nil
}

// stackPoll is how often a run asks the runtime whether every process of
// the stack still runs: a process-compose or kubectl call, light beside
// the load.
const stackPoll = 2 * time.Second

// whileStackRuns runs f while watching the stack: when one of its processes
// stops, f's context is cancelled and the error is the runtime's
// *runtime.ExitError naming it, whatever step f was in (a dead PostgreSQL
// would otherwise surface as failed requests in a load result).
func (r *Runner) whileStackRuns(ctx context.Context, f func(context.Context) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		tick := time.NewTicker(stackPoll)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if err := r.Runtime.Exited(ctx); err != nil {
					cancel(err)
					return
				}
			}
		}
	}()
	err := f(ctx)
	if err != nil && ctx.Err() == nil {
		// A request failed at once when the process behind it died, maybe
		// before the runtime's next look: give it a moment to report that.
	look:
		for i := 0; i < 3; i++ {
			if exited := r.Runtime.Exited(ctx); exited != nil {
				cancel(exited)
				break
			}
			select {
			case <-ctx.Done():
				break look
			case <-time.After(time.Second):
			}
		}
	}
	cancel(nil)
	<-watching
	var exited *runtime.ExitError
	if errors.As(context.Cause(ctx), &exited) {
		return exited
	}
	return err
}

// warmUp runs the same script as the measurement, with the same non-shape
// parameters (loadEnv), so a POST gets its body and a JIT compiler its hot
// paths; its requests are not measured. It returns nil when the profile has
// no warm-up.
func (r *Runner) warmUp(ctx context.Context, s *scenario.Scenario, p scenario.Profile, loadEnv map[string]string, variant, base, loadLog string) (*load.Summary, error) {
	if p.Warmup == 0 {
		return nil, nil
	}
	r.Progress("[%s] warming up: %d request(s)", variant, p.Warmup)
	warm := map[string]string{"VUS": "1", "ITERATIONS": strconv.Itoa(p.Warmup)}
	for k, v := range loadEnv {
		if _, shape := warm[k]; !shape && k != "RATE" && k != "DURATION" {
			warm[k] = v
		}
	}
	run, err := r.Load.Run(ctx, s.Load.Def, load.Options{Target: base, Params: warm, Progress: r.progressFor(variant), LogFile: loadLog})
	if err != nil {
		return nil, err
	}
	sum := &run.Summary
	// A variant that must fail requests (a short timeout) may fail a cold
	// one too: the first request pays for the client's connection and the
	// JIT compiler. Any other variant's warm-up must succeed throughout.
	if sum.Failed > 0 && s.Expectations.Variants[variant].MinErrorRate == 0 {
		return nil, fmt.Errorf("%.0f%% of the warm-up requests failed (first: %s); see .state/logs/%s.log", 100*sum.Failed, firstError(run.Records), s.Entrypoint.Service)
	}
	return sum, nil
}

// loadRunsHere tells whether the load runs in this process, so that the
// process's own CPU is the generator's.
func (r *Runner) loadRunsHere(service string) bool {
	t, err := r.Load.Target(service)
	return t == "" && err == nil
}

// target is the entrypoint's base URL as the load reaches it: the
// runtime's endpoint, unless the load runs elsewhere (in the cluster).
func (r *Runner) target(service string) (string, error) {
	if t, err := r.Load.Target(service); t != "" || err != nil {
		return t, err
	}
	return r.Runtime.Endpoint(service)
}

func (r *Runner) progressFor(variant string) func(string, ...any) {
	return func(format string, a ...any) { r.Progress("["+variant+"] "+format, a...) }
}

// tracesEvery is how often collectTraces asks Jaeger for the run's traces;
// a variable so that a test's run waits milliseconds.
var tracesEvery = time.Second

// runTraces is where a run's traces are: the entrypoint's service in
// Jaeger over the run's window, fetched as analyze --jaeger fetches
// (pkg/source), with room for every request of the run.
func (r *Runner) runTraces(ep scenario.Entrypoint, from, to time.Time, want int) *source.Source {
	return &source.Source{Kind: source.Jaeger, URL: r.Runtime.JaegerURL(), Service: ep.Service,
		From: from, To: to.Add(time.Second), Limit: want + 100,
		Timeout: time.Minute, MaxResponseBytes: source.DefaultMaxResponseBytes}
}

// collectTraces waits until Jaeger's answer for the run has stopped
// growing, spans of one trace arriving from several services each with its
// own export delay, and holds a trace for every request of the run.
//
// Until the answer is stable it compares only its size in bytes: the same
// spans make the same number of bytes, while parsing builds every trace of
// a full profile's answer, every second. A stable answer is parsed once;
// it is parsed again only if it lacked traces and then changed, so a run
// whose traces all arrived parses them once.
func (r *Runner) collectTraces(ctx context.Context, src *source.Source, ep scenario.Entrypoint, want int) ([]*trace.Trace, error) {
	parse := r.parse
	if parse == nil {
		parse = otlp.Parse
	}
	const limit = 2 * time.Minute
	deadline := time.Now().Add(limit)
	lastSize, stable := -1, 0
	var traces []*trace.Trace
	parsedSize := -1 // the size of the answer traces were parsed from
	last := false    // the deadline passed: parse what there is
	fetch := *src
	// The source hands each answer here; it is parsed only when it is
	// stable and new, and otherwise yields no trace (NoTracesError).
	fetch.Parse = func(in io.Reader) ([]*trace.Trace, error) {
		raw, err := io.ReadAll(in)
		if err != nil {
			return nil, err
		}
		if len(raw) == lastSize {
			stable++
		} else {
			stable = 0
		}
		lastSize = len(raw)
		if (stable >= 2 || last) && len(raw) != parsedSize {
			all, err := parse(bytes.NewReader(raw))
			if err != nil {
				return nil, fmt.Errorf("Jaeger returned traces tracelab cannot read: %v", err)
			}
			traces, parsedSize = rootedAt(all, ep), len(raw)
			return traces, nil
		}
		return nil, nil
	}
	for {
		last = time.Now().After(deadline)
		if _, err := fetch.Fetch(ctx); err != nil && !errors.As(err, new(*source.NoTracesError)) {
			return nil, err
		}
		if len(traces) >= want && parsedSize == lastSize {
			return traces, nil
		}
		if last {
			spans := 0
			for _, t := range traces {
				spans += len(t.Spans)
			}
			return nil, fmt.Errorf("after %s Jaeger holds %d of the run's %d traces (%d spans in them); is the collector exporting? see .state/logs/otelcol.log", limit, len(traces), want, spans)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(tracesEvery):
		}
	}
}

// rootedAt keeps the traces whose root span is the entrypoint: those are
// the requests the load test sent, not probes or background work.
func rootedAt(traces []*trace.Trace, ep scenario.Entrypoint) []*trace.Trace {
	var out []*trace.Trace
	for _, t := range traces {
		r := t.Root
		if r == nil || r.Service != ep.Service {
			continue
		}
		if ep.Matches(r.Attr("http.route", "url.path", "http.target")) || r.Name == ep.Method+" "+ep.Path {
			out = append(out, t)
		}
	}
	return out
}

// answered counts the requests that got an answer: each has a trace to wait
// for, where one that never reached the service may have none.
func answered(records []load.Record) int {
	n := 0
	for _, rec := range records {
		if rec.Status != 0 {
			n++
		}
	}
	return n
}

// firstError is the first failed request's error, for a message.
func firstError(records []load.Record) string {
	for _, rec := range records {
		if rec.Failed() {
			return rec.Name + ": " + rec.Error
		}
	}
	return "none"
}

// samplesOf are the per-request calls behind the metrics whose ratios get
// intervals by resampling requests; latencies come from the load's records
// (joinedMetrics).
func samplesOf(traces []*trace.Trace) map[string]bootstrap.Sample {
	var calls, dbCalls []float64
	for _, t := range traces {
		c, db := analyze.Calls(t)
		calls = append(calls, float64(c))
		dbCalls = append(dbCalls, float64(db))
	}
	out := map[string]bootstrap.Sample{}
	if len(traces) == 0 {
		return out
	}
	out["calls_per_request"] = bootstrap.MeanOf(calls)
	out["db_calls_per_request"] = bootstrap.MeanOf(dbCalls)
	return out
}

// metricsOf names the numbers expectations and baselines refer to.
func metricsOf(s *load.Summary, rep analyze.Report) map[string]float64 {
	m := map[string]float64{
		"p50_ms":         s.P50Ms,
		"p95_ms":         s.P95Ms,
		"mean_ms":        s.MeanMs,
		"throughput_rps": s.ThroughputRPS,
		"error_rate":     s.Failed,
	}
	var traces int
	for _, rq := range rep.Requests {
		traces += rq.Traces
	}
	for _, rq := range rep.Requests {
		w := float64(rq.Traces) / float64(max(traces, 1))
		m["spans_per_request"] += w * rq.SpansPerTrace
		m["calls_per_request"] += w * rq.CallsPerTrace
		m["db_calls_per_request"] += w * rq.DBCallsPerTrace
	}
	return m
}
