package cli

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"tracelab/pkg/lab"
	"tracelab/pkg/load"
	"tracelab/pkg/loadbench"
)

func init() {
	registerInternal("bench-load", "benchmark the load engine: its CPU per request and late sends at antpath's and kafka-batching's rates", runBenchLoad)
}

func runBenchLoad(args []string) int {
	fs := flag.NewFlagSet("bench-load", flag.ContinueOnError)
	runs := fs.Int("runs", 3, "runs per case")
	stub := fs.Bool("stub", false, "serve as the stub (internal: the benchmark starts it in a process of its own)")
	if code, ok := parseFlags(fs, args, 0, "usage: tracelab bench-load [--runs N]", os.Stdout); !ok {
		return code
	}
	if *runs < 1 {
		return fail(exitUsage, "bench-load: --runs must be 1 or more, got %d", *runs)
	}
	if *stub {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fail(exitRuntime, "bench-load: %v", err)
		}
		fmt.Println(l.Addr())
		return fail(exitRuntime, "bench-load: %v", loadbench.Serve(l))
	}
	root, err := lab.Find()
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	// The stub runs in a process of its own, so that this one's CPU is the
	// engine's alone.
	self, _ := os.Executable()
	cmd := exec.Command(self, "bench-load", "--stub")
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return fail(exitRuntime, "bench-load: starting the stub: %v", err)
	}
	defer cmd.Process.Kill()
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return fail(exitRuntime, "bench-load: the stub did not say where it listens: %v", err)
	}
	target := "http://" + strings.TrimSpace(addr)
	ctx, stop := interruptible()
	defer stop()

	type row struct {
		Case        string            `json:"case"`
		Params      map[string]string `json:"params"`
		Why         string            `json:"why"`
		Runs        int               `json:"runs"`
		Requests    int               `json:"requests_per_run"`
		CPUPerReqUs loadbench.Spread  `json:"cpu_us_per_request"`
		LateSends   loadbench.Spread  `json:"late_sends"`
		MaxRSSMiB   float64           `json:"max_rss_mib"`
	}
	var rows []row
	measured := map[string][]loadbench.Measurement{}
	// Alternate the cases, so that a busy spell of the machine falls on both.
	for i := range *runs {
		for _, c := range loadbench.Cases {
			progress("bench-load: %s, run %d of %d (%s for %s)", c.Name, i+1, *runs, c.Params["RATE"]+"/s", c.Params["DURATION"])
			m, err := loadbench.Measure(ctx, root, c, target)
			if err != nil {
				return fail(exitRuntime, "bench-load: %v", err)
			}
			measured[c.Name] = append(measured[c.Name], m)
		}
	}
	fmt.Printf("\nload engine against a stub that answers at once (%d runs per case; min / median / max)\n", *runs)
	fmt.Printf("  %-16s %10s %26s %28s\n", "case", "requests", "engine CPU µs per request", fmt.Sprintf("sends > %g ms late", load.LateSendMs))
	for _, c := range loadbench.Cases {
		ms := measured[c.Name]
		var cpu, late []float64
		r := row{Case: c.Name, Params: c.Params, Why: c.Why, Runs: len(ms), Requests: ms[0].Requests}
		for _, m := range ms {
			cpu = append(cpu, m.CPUPerReqUs)
			late = append(late, m.LateSends)
			r.MaxRSSMiB = max(r.MaxRSSMiB, m.MaxRSSMiB)
		}
		r.CPUPerReqUs, r.LateSends = loadbench.SpreadOf(cpu), loadbench.SpreadOf(late)
		rows = append(rows, r)
		fmt.Printf("  %-16s %10d %10.0f / %4.0f / %4.0f %12.2f%% / %.2f%% / %.2f%%\n", c.Name, r.Requests, r.CPUPerReqUs.Min, r.CPUPerReqUs.Median, r.CPUPerReqUs.Max,
			100*r.LateSends.Min, 100*r.LateSends.Median, 100*r.LateSends.Max)
	}
	fmt.Printf("  peak resident memory of the engine's process: %.0f MiB\n", rows[len(rows)-1].MaxRSSMiB)
	dir := filepath.Join(root, ".state", "results")
	os.MkdirAll(dir, 0o755)
	data, _ := json.MarshalIndent(rows, "", "  ")
	path := filepath.Join(dir, "bench-load.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fail(exitRuntime, "bench-load: %v", err)
	}
	fmt.Printf("result: %s\n", path)
	return exitOK
}
