package run

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"tracelab/pkg/result"
	"tracelab/pkg/scenario"
)

// calibrate brings up c.Variant, warms it up, and runs the closed-model
// probe: c.Env's VUS send requests back to back for DURATION, so the
// throughput is what the variant serves at full load on this machine, now.
func (r *Runner) calibrate(ctx context.Context, s *scenario.Scenario, profile string, c *scenario.Calibration, dir string) (*result.Calibrated, error) {
	p := s.Load.Profiles[profile]
	r.Progress("[calibrate] bringing up %v with the %s settings", s.Services, c.Variant)
	if err := r.Runtime.Up(ctx, s.Services, s.SettingsFor(profile, c.Variant), c.Variant); err != nil {
		return nil, err
	}
	base, err := r.target(s.Entrypoint.Service)
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(dir, "calibrate-k6.log"))
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	loadEnv := s.LoadEnvFor(profile, c.Variant)
	if _, err := r.warmUp(ctx, s, p, loadEnv, "calibrate", base, dir, logFile); err != nil {
		return nil, err
	}
	env := map[string]string{"TARGET": base}
	for k, v := range loadEnv {
		if k != "RATE" {
			env[k] = v
		}
	}
	for k, v := range c.Env {
		env[k] = v
	}
	r.Progress("[calibrate] %s flat out: %s virtual users for %s", c.Variant, env["VUS"], env["DURATION"])
	sum, err := r.Load.Run(ctx, filepath.Join(r.Root, s.Load.Script), env, filepath.Join(dir, "calibrate-k6-summary.json"), logFile, r.progressFor("calibrate"))
	if err != nil {
		return nil, err
	}
	if sum.Failed > 0 || sum.ThroughputRPS <= 0 {
		return nil, fmt.Errorf("the probe served %.1f req/s with %.0f%% failed; see %s", sum.ThroughputRPS, 100*sum.Failed, logFile.Name())
	}
	cal := &result.Calibrated{Variant: c.Variant, ThroughputRPS: sum.ThroughputRPS, RateFactor: c.RateFactor,
		Rate: max(1, int(math.Round(c.RateFactor*sum.ThroughputRPS)))}
	r.Progress("[calibrate] %s serves %.0f req/s flat out: every variant gets RATE=%d (%.2f x)", c.Variant, cal.ThroughputRPS, cal.Rate, c.RateFactor)
	return cal, nil
}
