// Package stackbench measures the local stack as a user meets it: how long
// `up` takes from nothing and with everything running, how long a variant
// switch takes, and the peak resident memory of all its processes while a
// scenario's smoke load runs.
package stackbench

import (
	"context"
	"time"

	"tracelab/pkg/load"
	"tracelab/pkg/runtime"
	"tracelab/pkg/scenario"
)

// Result is one run's figures; its JSON is .state/results/bench-stack.json.
type Result struct {
	UpColdS        float64 `json:"up_cold_s"`
	UpWarmS        float64 `json:"up_warm_s"`
	VariantSwitchS float64 `json:"variant_switch_s"`
	PeakRSSMiB     float64 `json:"peak_rss_mib"`
}

// Run takes the stack down, then times up (cold), up again (warm), a
// switch to the fixed variant and back, and samples memory every half
// second while the baseline's smoke load runs. It leaves the stack up.
func Run(ctx context.Context, rt *runtime.Local, s *scenario.Scenario, progress func(string, ...any)) (Result, error) {
	var r Result
	if err := rt.Down(ctx); err != nil {
		return r, err
	}
	timed := func(variant string, into *float64) error {
		t0 := time.Now()
		err := rt.Up(ctx, s.Services, s.SettingsFor("smoke", variant), variant)
		if into != nil {
			*into = time.Since(t0).Seconds()
		}
		return err
	}
	for _, step := range []struct {
		variant string
		into    *float64
	}{{"baseline", &r.UpColdS}, {"baseline", &r.UpWarmS}, {"fixed", &r.VariantSwitchS}, {"baseline", nil}} {
		if err := timed(step.variant, step.into); err != nil {
			return r, err
		}
	}

	stop := samplePeak(ctx, 500*time.Millisecond, rt.MemoryBytes)
	base, err := rt.Endpoint(s.Entrypoint.Service)
	if err != nil {
		stop()
		return r, err
	}
	progress("running the %s smoke load (baseline) while sampling memory", s.Name)
	_, err = load.Local{}.Run(ctx, s.Load.Def, load.Options{Target: base, Params: s.LoadEnvFor("smoke", "baseline"), Progress: progress})
	r.PeakRSSMiB = float64(stop()) / (1 << 20)
	return r, err
}

// samplePeak calls read now and then every interval, in its own goroutine,
// until the returned stop is called; stop returns the largest value read.
// stop waits for the sampler to end before it reads the peak: the peak is
// the sampler's to write until then, and reading it earlier is a data race.
func samplePeak(ctx context.Context, every time.Duration, read func(context.Context) (int64, error)) (stop func() int64) {
	var peak int64
	done, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if m, err := read(ctx); err == nil && m > peak {
				peak = m
			}
			select {
			case <-done:
				return
			case <-time.After(every):
			}
		}
	}()
	return func() int64 {
		close(done)
		<-sampled
		return peak
	}
}
