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
	"tracelab/pkg/load"
	"tracelab/pkg/result"
	"tracelab/pkg/runtime"
	"tracelab/pkg/scenario"
)

// capacity probes each of c.Variants flat out: brings it up, warms it up,
// waits for its JIT to settle (c.Settle), and runs the
// closed-model probe, c.Env's VUS sending requests back to back for
// DURATION, while its CPU is sampled; the load engine's answer times give
// the served rate's sub-windows.
//
// The variant that runs first is probed last, so it runs on the JVM its
// probe warmed, with no restart in between: a JVM just restarted and
// warmed by the warm-up alone still compiles while it is measured (the
// antpath baseline then lost its dispatch-overhead finding in a CI run).
func (r *Runner) capacity(ctx context.Context, s *scenario.Scenario, profile scenario.NamedProfile, c *scenario.Capacity, firstRun, dir string) ([]result.Capacity, error) {
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

func (r *Runner) probe(ctx context.Context, s *scenario.Scenario, profile scenario.NamedProfile, c *scenario.Capacity, variant, dir string) (*result.Capacity, error) {
	tag := "capacity " + variant
	settings := s.SettingsFor(profile.Name, variant)
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
func (r *Runner) flatOut(ctx context.Context, s *scenario.Scenario, profile scenario.NamedProfile, c *scenario.Capacity, variant, dir string, settings scenario.Settings) (*result.Capacity, error) {
	tag := "capacity " + variant
	base, err := r.target(s.Entrypoint.Service)
	if err != nil {
		return nil, err
	}
	loadLog := filepath.Join(dir, "capacity-"+variant+"-load.log")
	if _, err := r.warmUp(ctx, s, profile.Profile, s.LoadEnvFor(profile.Name, variant), tag, base, loadLog); err != nil {
		return nil, err
	}
	env := map[string]string{}
	for k, v := range s.LoadEnvFor(profile.Name, variant) {
		if k != "RATE" {
			env[k] = v
		}
	}
	maps.Copy(env, c.Env)
	entry := s.Entrypoint.Service
	settled, err := r.settle(ctx, s, c.SettleFor(), env, tag, base, loadLog)
	if err != nil {
		return nil, err
	}
	r.Progress("[%s] flat out: %s virtual users for %s", tag, env["VUS"], env["DURATION"])
	jit, jitOK := r.jitSeconds(ctx, entry)
	stopCPU := r.sampleCPU(ctx, s.Services, settings[entry])
	from := time.Now()
	run, err := r.Load.Run(ctx, s.Load.Def, load.Options{Target: base, Params: env, Progress: r.progressFor(tag), LogFile: loadLog})
	window := time.Since(from).Seconds()
	samples := stopCPU()
	if err != nil {
		return nil, err
	}
	sum := &run.Summary
	if sum.Failed > 0 || sum.ThroughputRPS <= 0 {
		return nil, fmt.Errorf("the probe served %.1f req/s with %.0f%% failed (first: %s)", sum.ThroughputRPS, 100*sum.Failed, firstError(run.Records))
	}
	p := &result.Capacity{Variant: variant, Requests: sum.Requests, ThroughputRPS: sum.ThroughputRPS, MeanMs: sum.MeanMs,
		SettleS: math.Round(settled.Seconds()), Metrics: map[string]float64{"capacity_rps": sum.ThroughputRPS}, Samples: map[string]bootstrap.Sample{}}
	if now, ok := r.jitSeconds(ctx, entry); ok && jitOK {
		cores := round3((now - jit) / window)
		p.JITCores = &cores
	}
	cpu := cpuUse(samples, answeredAt(run), entry)
	p.CPU = cpu.use
	if len(cpu.served) > 0 {
		p.Samples["capacity_rps"] = cpu.served
	}
	if r.loadRunsHere(entry) {
		p.GeneratorCores = cpu.self
	}
	if u, ok := cpu.use[entry]; ok {
		p.Bound = probeBound(u, r.Runtime.CPUs(ctx, entry, settings[entry]), sum.MeanMs, p.JITCores)
		p.Metrics["capacity_cpu_ms_per_request"] = u.MsPerRequest
		p.Metrics["capacity_cpu_cores"] = u.Cores
		p.Samples["capacity_cpu_ms_per_request"] = cpu.perRequest
	}
	r.Progress("[%s] %.0f req/s flat out, mean %.1f ms, %s", tag, sum.ThroughputRPS, sum.MeanMs, describeCPU(cpu.use[entry], entry, p.Bound, p.GeneratorCores))
	if p.JITCores != nil {
		r.Progress("[%s] %s's JIT compiler used %.0f%% of a CPU while it measured, judged as a neighbour's", tag, entry, 100**p.JITCores)
	}
	return p, nil
}

// settleStep is how long each step of settle runs, and jitQuiet the JIT
// compiler's share of a CPU below which a step counts as quiet. In the
// antpath gateway's probes (scenarios/antpath/README.md, "The JIT"), the
// compiler took 17% to 35% of the CPU for 50 to 70 s of flat-out load
// after the warm-up, then 0% to 3%.
const (
	settleStep = 5 * time.Second
	jitQuiet   = 0.05
)

// probeBound is bound for a capacity probe, with the JIT compiler's CPU
// while it measured (jitCores, nil where it cannot be read) counted as a
// neighbour's: its threads run in the service's process but do none of the
// requests' work. A compiler that filled the CPU with the service leaves it
// contended (whether the warm service would fill it cannot be told), and
// one that did not leaves it off-CPU, as interpreted code only costs more.
// In a cold CI run chatty-db's POST, a service waiting on its database,
// read 0.83 of its one CPU, 0.39 of it the compiler's, and counted as
// on-CPU (issue 34); the probes now also wait for the compiler (settle),
// whose few per cent after that stay out of the service's share too.
func probeBound(u result.CPUUse, cpus, meanMs float64, jitCores *float64) string {
	if jitCores != nil && *jitCores > 0 && u.Cores > 0 {
		jit := min(*jitCores, u.Cores)
		u.MsPerRequest *= (u.Cores - jit) / u.Cores
		u.Cores -= jit
		u.OthersCores += jit
	}
	return bound(u, cpus, meanMs)
}

// settle runs the probe's load flat out, a step at a time, until the
// entrypoint's JIT compiler used less than jitQuiet of a CPU over a step,
// or until upTo has passed, and says how long it ran. A runtime that
// cannot see the compiler's threads is not waited for; the probe's
// progress says so.
func (r *Runner) settle(ctx context.Context, s *scenario.Scenario, upTo time.Duration, env map[string]string, tag, base, loadLog string) (time.Duration, error) {
	if upTo == 0 {
		return 0, nil
	}
	entry := s.Entrypoint.Service
	prev, ok := r.jitSeconds(ctx, entry)
	if !ok {
		r.Progress("[%s] cannot see %s's JIT compiler here: probing without waiting for it", tag, entry)
		return 0, nil
	}
	step := maps.Clone(env)
	step["DURATION"] = settleStep.String()
	var took time.Duration
	for {
		run, err := r.Load.Run(ctx, s.Load.Def, load.Options{Target: base, Params: step, LogFile: loadLog})
		if err != nil {
			return 0, err
		}
		if run.Summary.Failed > 0 {
			return 0, fmt.Errorf("%.0f%% of the requests failed while waiting for the JIT (first: %s)", 100*run.Summary.Failed, firstError(run.Records))
		}
		now, ok := r.jitSeconds(ctx, entry)
		if !ok {
			return 0, fmt.Errorf("%s's JIT compiler could no longer be read", entry)
		}
		ran := time.Duration(run.Summary.DurationS * float64(time.Second))
		took += ran
		share := (now - prev) / max(run.Summary.DurationS, 1e-3)
		switch {
		case share < jitQuiet:
			r.Progress("[%s] the JIT has settled after %s flat out (its compiler: %.0f%% of a CPU over the last %s)", tag, took.Round(time.Second), 100*share, ran.Round(time.Second))
			return took, nil
		case took >= upTo:
			r.Progress("[%s] the JIT still compiles after %s flat out (%.0f%% of a CPU): probing anyway", tag, took.Round(time.Second), 100*share)
			return took, nil
		}
		r.Progress("[%s] waiting for the JIT: its compiler used %.0f%% of a CPU over the last %s (%s so far, %.0f req/s)", tag, 100*share, ran.Round(time.Second), took.Round(time.Second), run.Summary.ThroughputRPS)
		prev = now
	}
}

// jitSeconds is the JIT compiler's CPU time of a service, where the
// runtime can read it.
func (r *Runner) jitSeconds(ctx context.Context, service string) (float64, bool) {
	if j, ok := r.Runtime.(runtime.JITCounter); ok {
		return j.JITSeconds(ctx, service)
	}
	return 0, false
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
