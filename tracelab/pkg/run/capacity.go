package run

import (
	"context"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"time"

	"tracelab/pkg/bootstrap"
	"tracelab/pkg/jaeger"
	"tracelab/pkg/load"
	"tracelab/pkg/result"
	"tracelab/pkg/scenario"
)

// capacity probes each of c.Variants flat out: brings it up, warms it up,
// and runs the closed-model probe, c.Env's VUS sending requests back to
// back for DURATION, while its CPU is sampled and its traces kept for the
// served rate's sub-windows.
//
// The variant that runs first is probed last, so it runs on the JVM its
// probe warmed, with no restart in between: a JVM just restarted and
// warmed by the warm-up alone still compiles while it is measured (the
// antpath baseline then lost its dispatch-overhead finding in a CI run).
func (r *Runner) capacity(ctx context.Context, s *scenario.Scenario, profile string, c *scenario.Capacity, firstRun, dir string) ([]result.Capacity, error) {
	order := slices.Clone(c.Variants)
	if i := slices.Index(order, firstRun); i >= 0 {
		order = append(slices.Delete(order, i, i+1), firstRun)
	}
	var out []result.Capacity
	for _, variant := range order {
		probe, err := r.probe(ctx, s, profile, c, variant, dir)
		if err != nil {
			return nil, fmt.Errorf("measuring the capacity of %s: %w", variant, err)
		}
		out = append(out, *probe)
	}
	return out, nil
}

func (r *Runner) probe(ctx context.Context, s *scenario.Scenario, profile string, c *scenario.Capacity, variant, dir string) (*result.Capacity, error) {
	tag := "capacity " + variant
	settings := s.SettingsFor(profile, variant)
	r.Progress("[%s] bringing up %v with the %s settings", tag, s.Services, variant)
	if err := r.Runtime.Up(ctx, s.Services, settings, variant); err != nil {
		return nil, err
	}
	var p *result.Capacity
	err := r.whileStackRuns(ctx, func(ctx context.Context) (err error) {
		p, err = r.flatOut(ctx, s, profile, c, variant, dir, settings)
		return err
	})
	return p, err
}

// flatOut warms the variant up and runs the closed-model probe on the stack
// Up left running.
func (r *Runner) flatOut(ctx context.Context, s *scenario.Scenario, profile string, c *scenario.Capacity, variant, dir string, settings scenario.Settings) (*result.Capacity, error) {
	tag := "capacity " + variant
	base, err := r.target(s.Entrypoint.Service)
	if err != nil {
		return nil, err
	}
	loadEnv := s.LoadEnvFor(profile, variant)
	loadLog := filepath.Join(dir, "capacity-"+variant+"-load.log")
	if _, err := r.warmUp(ctx, s, s.Load.Profiles[profile], loadEnv, tag, base, loadLog); err != nil {
		return nil, err
	}
	env := map[string]string{}
	for k, v := range loadEnv {
		if k != "RATE" {
			env[k] = v
		}
	}
	maps.Copy(env, c.Env)
	r.Progress("[%s] flat out: %s virtual users for %s", tag, env["VUS"], env["DURATION"])
	stopCPU := r.sampleCPU(ctx, s.Services, settings[s.Entrypoint.Service])
	from := time.Now()
	run, err := r.Load.Run(ctx, s.Load.Def, load.Options{Target: base, Params: env, Progress: r.progressFor(tag), LogFile: loadLog})
	to := time.Now()
	samples := stopCPU()
	if err != nil {
		return nil, err
	}
	sum := &run.Summary
	if sum.Failed > 0 || sum.ThroughputRPS <= 0 {
		return nil, fmt.Errorf("the probe served %.1f req/s with %.0f%% failed (first: %s)", sum.ThroughputRPS, 100*sum.Failed, firstError(run.Records))
	}
	if err := r.Runtime.Reconnect(ctx); err != nil {
		return nil, err
	}
	traces, err := r.collectTraces(ctx, jaeger.New(r.Runtime.JaegerURL()), s.Entrypoint, from, to, answered(run.Records))
	if err != nil {
		return nil, err
	}
	cpu := cpuUse(samples, traces, s.Entrypoint.Service)
	p := &result.Capacity{Variant: variant, Requests: sum.Requests, ThroughputRPS: sum.ThroughputRPS, MeanMs: sum.MeanMs, CPU: cpu.use,
		Metrics: map[string]float64{"capacity_rps": sum.ThroughputRPS}, Samples: map[string]bootstrap.Sample{}}
	if len(cpu.served) > 0 {
		p.Samples["capacity_rps"] = cpu.served
	}
	if r.loadRunsHere(s.Entrypoint.Service) {
		p.GeneratorCores = cpu.self
	}
	if u, ok := cpu.use[s.Entrypoint.Service]; ok {
		p.Bound = bound(u, r.Runtime.CPUs(ctx, s.Entrypoint.Service, settings[s.Entrypoint.Service]), sum.MeanMs)
		p.Metrics["capacity_cpu_ms_per_request"] = u.MsPerRequest
		p.Metrics["capacity_cpu_cores"] = u.Cores
		p.Samples["capacity_cpu_ms_per_request"] = cpu.perRequest
	}
	r.Progress("[%s] %.0f req/s flat out, mean %.1f ms, %s", tag, sum.ThroughputRPS, sum.MeanMs, describeCPU(cpu.use[s.Entrypoint.Service], s.Entrypoint.Service, p.Bound, p.GeneratorCores))
	return p, nil
}

// rateFrom sizes the open-model load from the capacity of c.RateFrom.
func rateFrom(c *scenario.Capacity, probes []result.Capacity) *result.Calibrated {
	for _, p := range probes {
		if p.Variant == c.RateFrom {
			return &result.Calibrated{Variant: p.Variant, ThroughputRPS: p.ThroughputRPS, RateFactor: c.RateFactor,
				Rate: max(1, int(math.Round(c.RateFactor*p.ThroughputRPS)))}
		}
	}
	return nil
}

func describeCPU(u result.CPUUse, service, bound string, generator float64) string {
	if bound == "" {
		return "CPU not read"
	}
	d := fmt.Sprintf("%s %.2f cores", service, u.Cores)
	if u.OthersCores > 0 || u.RestBusy > 0 {
		d += fmt.Sprintf(" (other programs %.2f on its CPUs; the other CPUs %.0f%% busy)", u.OthersCores, 100*u.RestBusy)
	}
	d += fmt.Sprintf(", %.2f CPU ms/request", u.MsPerRequest)
	if generator > 0 {
		d += fmt.Sprintf(", load generator %.2f cores", generator)
	}
	return d + ": " + bound
}
