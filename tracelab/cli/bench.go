package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"tracelab/pkg/runtime"
	"tracelab/pkg/scenario"
	"tracelab/pkg/stackbench"
)

func init() {
	registerInternal("bench-stack", "benchmark the local stack: cold and warm 'up', variant switch, peak memory under load", runBenchStack)
}

// runBenchStack prints and saves what stackbench.Run measures.
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
	r, err := stackbench.Run(ctx, rt, s, progress)
	if err != nil {
		return fail(exitRuntime, "%v", err)
	}

	fmt.Printf("\nlocal stack (%s services + collector, Jaeger, Prometheus)\n", s.Name)
	fmt.Printf("  make up, cold (stack down)      %6.1f s\n", r.UpColdS)
	fmt.Printf("  make up, warm (stack up)        %6.1f s\n", r.UpWarmS)
	fmt.Printf("  variant switch (one restart)    %6.1f s\n", r.VariantSwitchS)
	fmt.Printf("  peak resident memory under load %6.0f MiB\n", r.PeakRSSMiB)
	data, _ := json.MarshalIndent(r, "", "  ")
	dir := filepath.Join(co.State, "results")
	path := filepath.Join(dir, "bench-stack.json")
	if err := os.MkdirAll(dir, 0o755); err == nil {
		err = os.WriteFile(path, data, 0o644)
	}
	if err != nil {
		return fail(exitRuntime, "writing %s: %v", path, err)
	}
	fmt.Printf("result: %s\n", path)
	return exitOK
}
