// Package k6 runs a k6 script and reads the summary it writes.
package k6

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"
)

// Summary is what the lab reads of k6's end-of-test summary.
type Summary struct {
	Requests      int     `json:"requests"`
	Failed        float64 `json:"error_rate"` // share of failed requests, 0..1
	ThroughputRPS float64 `json:"throughput_rps"`
	P50Ms         float64 `json:"p50_ms"`
	P95Ms         float64 `json:"p95_ms"`
	MeanMs        float64 `json:"mean_ms"`
	MaxMs         float64 `json:"max_ms"`
	DurationS     float64 `json:"duration_s"`
}

// Run runs script with env and writes k6's output to log; progress gets a
// line every 15 s so long runs show they are alive.
func Run(ctx context.Context, bin, script string, env map[string]string, summaryFile string, log *os.File, progress func(string, ...any)) (*Summary, error) {
	cmd := exec.CommandContext(ctx, bin, "run", "--quiet", "--no-color", script)
	cmd.Env = append(os.Environ(), "SUMMARY_FILE="+summaryFile, "K6_NO_USAGE_REPORT=true")
	for _, k := range slices.Sorted(maps.Keys(env)) {
		cmd.Env = append(cmd.Env, k+"="+env[k])
	}
	cmd.Dir = filepath.Dir(script)
	cmd.Stdout, cmd.Stderr = log, log
	os.Remove(summaryFile)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start k6: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	start := time.Now()
	tick := time.NewTicker(15 * time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			// k6 exits 99 when a threshold fails; the lab judges results
			// itself, so only a missing summary is an error.
			s, rerr := ReadSummary(summaryFile)
			if rerr != nil {
				return nil, fmt.Errorf("k6 failed (%v); see %s", err, log.Name())
			}
			return s, nil
		case <-tick.C:
			progress("k6 running for %s", time.Since(start).Round(time.Second))
		}
	}
}

// ReadSummary parses the JSON written by loadtests/lib/lab.js.
func ReadSummary(path string) (*Summary, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw struct {
		Metrics map[string]struct {
			Values map[string]float64 `json:"values"`
		} `json:"metrics"`
		State struct {
			TestRunDurationMs float64 `json:"testRunDurationMs"`
		} `json:"state"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	d := raw.Metrics["http_req_duration"].Values
	r := raw.Metrics["http_reqs"].Values
	return &Summary{
		Requests:      int(r["count"]),
		Failed:        raw.Metrics["http_req_failed"].Values["rate"],
		ThroughputRPS: r["rate"],
		P50Ms:         d["p(50)"],
		P95Ms:         d["p(95)"],
		MeanMs:        d["avg"],
		MaxMs:         d["max"],
		DurationS:     raw.State.TestRunDurationMs / 1000,
	}, nil
}
