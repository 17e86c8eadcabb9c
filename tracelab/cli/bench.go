package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"tracelab/pkg/load"
	"tracelab/pkg/runtime"
	"tracelab/pkg/scenario"
)

func init() {
	register("bench-stack", "benchmark the local stack: cold and warm 'up', variant switch, peak memory under load", runBenchStack)
}

// runBenchStack measures, in one run: a cold start (stack down, every
// process starts), a warm start (stack up: only the readiness checks), a
// variant switch (one service restarts), and the peak resident memory of
// the whole stack while a scenario's smoke load runs.
func runBenchStack(args []string) int {
	fs := flag.NewFlagSet("bench-stack", flag.ContinueOnError)
	name := fs.String("scenario", "nplus1", "scenario whose services and smoke load are used")
	if code, ok := parseFlags(fs, args, 0, "usage: tracelab bench-stack [--scenario NAME]", os.Stdout); !ok {
		return code
	}
	co, code, err := openCheckout()
	if err != nil {
		return fail(code, "%v", err)
	}
	s, err := scenario.Load(co, *name)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	// The local runtime by name: memory is read from its processes.
	rt, err := runtime.NewLocal(co, progress)
	if err != nil {
		return fail(exitRuntime, "%v", err)
	}
	ctx, stop := interruptible()
	defer stop()
	defer rt.Down(context.Background())
	if err := rt.Down(ctx); err != nil {
		return fail(exitRuntime, "%v", err)
	}

	timed := func(variant string) (time.Duration, error) {
		t0 := time.Now()
		err := rt.Up(ctx, s.Services, s.SettingsFor("smoke", variant), variant)
		return time.Since(t0), err
	}
	out := map[string]float64{}
	cold, err := timed("baseline")
	if err != nil {
		return fail(exitRuntime, "%v", err)
	}
	warm, err := timed("baseline")
	if err != nil {
		return fail(exitRuntime, "%v", err)
	}
	switched, err := timed("fixed")
	if err != nil {
		return fail(exitRuntime, "%v", err)
	}
	if _, err := timed("baseline"); err != nil {
		return fail(exitRuntime, "%v", err)
	}
	out["up_cold_s"], out["up_warm_s"], out["variant_switch_s"] = cold.Seconds(), warm.Seconds(), switched.Seconds()

	// Peak memory: sample every process's resident set while the smoke load runs.
	stopSampling := samplePeak(ctx, 500*time.Millisecond, rt.MemoryBytes)
	base, _ := rt.Endpoint(s.Entrypoint.Service)
	dir := filepath.Join(co.State, "results")
	os.MkdirAll(dir, 0o755)
	progress("running the %s smoke load (baseline) while sampling memory", s.Name)
	_, err = load.Local{}.Run(ctx, s.Load.Def, load.Options{Target: base, Params: s.LoadEnvFor("smoke", "baseline"), Progress: progress})
	peak := stopSampling()
	if err != nil {
		return fail(exitRuntime, "%v", err)
	}
	out["peak_rss_mib"] = float64(peak) / (1 << 20)

	fmt.Printf("\nlocal stack (%s services + collector, Jaeger, Prometheus)\n", s.Name)
	fmt.Printf("  make up, cold (stack down)      %6.1f s\n", out["up_cold_s"])
	fmt.Printf("  make up, warm (stack up)        %6.1f s\n", out["up_warm_s"])
	fmt.Printf("  variant switch (one restart)    %6.1f s\n", out["variant_switch_s"])
	fmt.Printf("  peak resident memory under load %6.0f MiB\n", out["peak_rss_mib"])
	data, _ := json.MarshalIndent(out, "", "  ")
	path := filepath.Join(dir, "bench-stack.json")
	os.WriteFile(path, data, 0o644)
	fmt.Printf("result: %s\n", path)
	return exitOK
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
