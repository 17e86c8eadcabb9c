//go:build e2e

package e2e

import "testing"

// TestAntpathSmoke is the antpath scenario's smoke profile on the real stack:
// both matchers are probed flat out on one CPU, once their JIT has
// settled, where the gateway is on-CPU; at the same offered load (1.2 times what the AntPathMatcher
// gateway serves flat out), the AntPathMatcher gateway must show
// dispatch-overhead and the PathPattern one must not, and the verdict (CPU
// per request and capacity, judged on their intervals) must pass.
func TestAntpathSmoke(t *testing.T) {
	res := runSmoke(t, "antpath")
	probed := map[string]float64{}
	for _, p := range res.Capacity {
		probed[p.Variant] = p.Metrics["capacity_cpu_ms_per_request"]
		if p.Bound != "on-CPU" {
			t.Errorf("capacity %s; want on-CPU, the gateway flat out on its one CPU (load average %s)", describeProbe(p, "gateway"), loadAverage())
		}
		// The profile's settle: the probe waited for the gateway's JIT and
		// read its compiler while it measured.
		if p.SettleS <= 0 || p.JITCores == nil {
			t.Errorf("capacity %s; want a wait for the JIT and a reading of it (load average %s)", describeProbe(p, "gateway"), loadAverage())
		}
	}
	if probed["baseline"] <= probed["fixed"] || probed["fixed"] <= 0 {
		t.Errorf("CPU ms per request flat out: baseline %.3f, fixed %.3f; want AntPathMatcher's higher", probed["baseline"], probed["fixed"])
	}
	for _, v := range res.Variants {
		var found []map[string]any
		for _, f := range v.Analysis.Findings {
			if f.Detector != "dispatch-overhead" {
				continue
			}
			found = append(found, f.Evidence)
			if f.Service != "gateway" || f.ShareOfParent < 0.25 {
				t.Errorf("%s: finding in %s, %.2f of the request; want gateway, ≥ 0.25", v.Variant, f.Service, f.ShareOfParent)
			}
			for _, key := range []string{"gap_p50_ms", "share_of_request", "routes", "concurrency_max", "example_trace_id"} {
				if _, ok := f.Evidence[key]; !ok {
					t.Errorf("%s: evidence lacks %s: %v", v.Variant, key, f.Evidence)
				}
			}
		}
		// Two spans per request: the server span and the controller span.
		if got := v.Metrics["spans_per_request"]; got < 1.9 || got > 2.1 {
			t.Errorf("%s: %.2f spans per request, want 2 (server + controller)", v.Variant, got)
		}
		switch v.Variant {
		case "baseline":
			if len(found) == 0 {
				t.Error("baseline: no dispatch-overhead finding")
			}
		case "fixed":
			if len(found) != 0 {
				t.Errorf("fixed: unexpected dispatch-overhead finding: %v", found)
			}
		}
	}
	assertNothingLeft(t)
}
