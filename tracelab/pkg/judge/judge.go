// Package judge holds a scenario run to its expectations: the findings
// that must and must not appear, the ratios between variants, each fix
// compared with the baseline as `tracelab compare` does, and the recorded
// baseline.json.
package judge

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"tracelab/pkg/bootstrap"
	"tracelab/pkg/compare"
	"tracelab/pkg/detect"
	"tracelab/pkg/result"
	"tracelab/pkg/scenario"
)

// Fixes are the variants expected to lack a detector that the baseline
// variant is expected to show, in run order: what `tracelab compare` would
// be asked to prove against the baseline.
func Fixes(s *scenario.Scenario, measured []result.VariantResult) []string {
	shown := map[string]bool{}
	for _, want := range s.Expectations.Variants["baseline"].Present {
		shown[want.Detector] = true
	}
	var fixes []string
	for _, v := range measured {
		if v.Variant == "baseline" {
			continue
		}
		for _, id := range s.Expectations.Variants[v.Variant].Absent {
			if shown[id] {
				fixes = append(fixes, v.Variant)
				break
			}
		}
	}
	return fixes
}

// CompareFixes compares each fix measured in this run with the baseline
// measured in it, as `tracelab compare --baseline B --candidate F` does
// with its default thresholds. Without a measured baseline there are no
// traces to compare with, and no comparisons.
func CompareFixes(s *scenario.Scenario, measured []result.VariantResult) map[string]compare.Result {
	out := map[string]compare.Result{}
	i := slices.IndexFunc(measured, func(v result.VariantResult) bool { return v.Variant == "baseline" })
	if i < 0 {
		return out
	}
	base := compareInput(measured[i])
	for _, name := range Fixes(s, measured) {
		j := slices.IndexFunc(measured, func(v result.VariantResult) bool { return v.Variant == name })
		out[name] = compare.Compare(base, compareInput(measured[j]), compare.DefaultOptions())
	}
	return out
}

func compareInput(v result.VariantResult) compare.Input {
	return compare.Input{Report: v.Analysis, Durations: v.Durations}
}

// Judge compares the measured variants with the scenario's expectations,
// with each other (compared: CompareFixes) and with the recorded baseline
// of the same profile.
func Judge(s *scenario.Scenario, profile string, measured []result.VariantResult, compared map[string]compare.Result, base *scenario.Baseline) []result.Check {
	var checks []result.Check
	byName := map[string]result.VariantResult{}
	for _, v := range measured {
		byName[v.Variant] = v
		exp := s.Expectations.Variants[v.Variant]
		checks = append(checks, checkErrors(v, exp)...)
		if o := s.Expectations.Objective; o != nil && exp.Objective != "" {
			checks = append(checks, checkObjective(v, *o, exp.Objective))
		}
		if s.Expectations.Delivery != nil {
			checks = append(checks, checkDelivery(v, s.Expectations.Delivery))
		}
		for _, want := range exp.Present {
			checks = append(checks, checkPresent(v, want))
		}
		for _, id := range exp.Absent {
			checks = append(checks, checkAbsent(v, id))
		}
		if rec, ok := base.Lookup(profile, v.Variant); ok {
			checks = append(checks, checkAgainstRecord(v, rec, s.Expectations.StructureTolerance)...)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(compared)) {
		checks = append(checks, checkComparison(s, name, compared[name]))
	}
	for _, r := range s.Expectations.Ratios {
		checks = append(checks, checkRatio(r, profile, byName, base))
	}
	return checks
}

// checkComparison holds a fix to the verdict of `tracelab compare` against
// the baseline, and to having resolved what the baseline was expected to
// show.
func checkComparison(s *scenario.Scenario, fix string, c compare.Result) result.Check {
	var want []string
	for _, p := range s.Expectations.Variants["baseline"].Present {
		if slices.Contains(s.Expectations.Variants[fix].Absent, p.Detector) {
			want = append(want, p.Detector)
		}
	}
	check := result.Check{Name: fmt.Sprintf("%s against baseline (tracelab compare): %s resolved, nothing worse", fix, strings.Join(want, ", "))}
	resolved := map[string]bool{}
	var names []string
	for _, f := range c.Resolved {
		resolved[f.Detector] = true
		names = append(names, f.Detector+" in "+f.Service)
	}
	var missing []string
	for _, id := range want {
		if !resolved[id] {
			missing = append(missing, id)
		}
	}
	check.OK = c.Verdict.Pass && len(missing) == 0
	parts := []string{"resolved: " + listOrNone(names)}
	if len(missing) > 0 {
		parts = append(parts, "not resolved: "+strings.Join(missing, ", "))
	}
	parts = append(parts, fmt.Sprintf("%d new, %d persisting", len(c.New), len(c.Persisting)))
	parts = append(parts, c.Verdict.Reasons...)
	check.Detail = strings.Join(parts, "; ")
	return check
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// checkErrors judges the share of failed requests: none by default; at
// most max_error_rate; at least min_error_rate, for a variant that must
// reproduce the case's errors (timeouts) rather than only its waits.
func checkErrors(v result.VariantResult, exp scenario.VariantExpectation) []result.Check {
	detail := fmt.Sprintf("%d requests, %.1f%% failed", v.Load.Requests, 100*v.Load.Failed)
	var checks []result.Check
	if exp.MinErrorRate > 0 {
		checks = append(checks, result.Check{
			Name:   fmt.Sprintf("%s: at least %g%% of requests failed", v.Variant, 100*exp.MinErrorRate),
			OK:     v.Load.Requests > 0 && v.Load.Failed >= exp.MinErrorRate,
			Detail: detail,
		})
	}
	switch {
	case exp.MaxErrorRate > 0:
		checks = append(checks, result.Check{
			Name:   fmt.Sprintf("%s: at most %g%% of requests failed", v.Variant, 100*exp.MaxErrorRate),
			OK:     v.Load.Requests > 0 && v.Load.Failed <= exp.MaxErrorRate,
			Detail: detail,
		})
	case exp.MinErrorRate == 0:
		checks = append(checks, result.Check{
			Name:   v.Variant + ": every request succeeded",
			OK:     v.Load.Requests > 0 && v.Load.Failed == 0,
			Detail: detail,
		})
	}
	return checks
}

// checkObjective judges the scenario's objective for one variant: a
// baseline is expected to break it, a fix to meet it.
func checkObjective(v result.VariantResult, o scenario.Objective, want string) result.Check {
	got := v.Metrics[o.Metric]
	met := got <= o.Max
	c := result.Check{Name: fmt.Sprintf("%s: objective %s ≤ %g %s", v.Variant, o.Metric, o.Max, want)}
	c.OK = met == (want == "met")
	verdict := "met"
	if !met {
		verdict = "broken"
	}
	c.Detail = fmt.Sprintf("%s %.1f: %s", o.Metric, got, verdict)
	return c
}

// checkDelivery fails a variant that lost an accepted event.
func checkDelivery(v result.VariantResult, d *scenario.Delivery) result.Check {
	c := result.Check{Name: fmt.Sprintf("%s: nothing lost (accepted ≤ stored by %s)", v.Variant, d.Service)}
	if v.Delivery == nil {
		c.Detail = "not counted"
		return c
	}
	dc := v.Delivery
	c.OK = dc.Accepted <= dc.Stored && dc.Stored <= dc.Sent
	c.Detail = fmt.Sprintf("sent %d, accepted %d, stored %d", dc.Sent, dc.Accepted, dc.Stored)
	switch {
	case dc.Stored < dc.Accepted:
		c.Detail += fmt.Sprintf(": %d accepted events lost", dc.Accepted-dc.Stored)
	case dc.Stored > dc.Sent:
		c.Detail += ": more stored than sent (duplicates, or another writer)"
	case dc.Stored > dc.Accepted:
		c.Detail += fmt.Sprintf(" (%d failed requests were delivered after their answer)", dc.Stored-dc.Accepted)
	}
	if dc.Accepted < dc.Sent {
		// A timed-out request's event may still reach the broker: it is
		// not counted as accepted, so only stored < accepted is a loss.
		c.Detail += fmt.Sprintf("; the %d failed requests count as not accepted", dc.Sent-dc.Accepted)
	}
	return c
}

func checkPresent(v result.VariantResult, want scenario.FindingExpectation) result.Check {
	c := result.Check{Name: fmt.Sprintf("%s: %s found", v.Variant, want.Detector)}
	var candidates []string
	for _, f := range v.Analysis.Findings {
		if f.Detector != want.Detector || (want.Service != "" && f.Service != want.Service) {
			continue
		}
		candidates = append(candidates, describe(f))
		if f.CallsPerTrace >= want.MinCallsPerTrace && f.ShareOfParent >= want.MinShareOfParent &&
			f.ShareOfCriticalPath >= want.MinShareOfCriticalPath {
			c.OK, c.Detail = true, describe(f)
			return c
		}
	}
	need := fmt.Sprintf("need ≥%.0f calls/trace, ≥%.0f%% of parent, ≥%.0f%% of critical path",
		want.MinCallsPerTrace, 100*want.MinShareOfParent, 100*want.MinShareOfCriticalPath)
	if len(candidates) == 0 {
		c.Detail = "no such finding; " + need
	} else {
		c.Detail = strings.Join(candidates, "; ") + " — too weak: " + need
	}
	return c
}

func checkAbsent(v result.VariantResult, id string) result.Check {
	c := result.Check{Name: fmt.Sprintf("%s: no %s", v.Variant, id), OK: true, Detail: "none found"}
	for _, f := range v.Analysis.Findings {
		if f.Detector == id {
			c.OK, c.Detail = false, "found: "+describe(f)
			return c
		}
	}
	return c
}

// checkAgainstRecord guards against a pathology that silently stops
// reproducing: the same findings as recorded, and the same request shape.
func checkAgainstRecord(v result.VariantResult, rec scenario.RecordedVariant, tol float64) []result.Check {
	got := result.FindingIDs(v.Analysis.Findings)
	checks := []result.Check{{
		Name:   v.Variant + ": same findings as baseline.json",
		OK:     slices.Equal(got, rec.Findings),
		Detail: fmt.Sprintf("now %v, recorded %v", got, rec.Findings),
	}}
	if tol == 0 {
		return checks
	}
	for _, m := range []string{"calls_per_request", "spans_per_request"} {
		now, was := v.Metrics[m], rec.Metrics[m]
		drift := math.Abs(now-was) / math.Max(was, 1)
		checks = append(checks, result.Check{
			Name:   fmt.Sprintf("%s: %s within %.0f%% of baseline.json", v.Variant, m, 100*tol),
			OK:     drift <= tol,
			Detail: fmt.Sprintf("now %.1f, recorded %.1f", now, was),
		})
	}
	return checks
}

// checkRatio takes a variant's value from this run, or from baseline.json
// when the variant was not run: that is how a fix alone is validated
// against the recorded baseline. The ratio carries a 95% bootstrap
// interval over what was measured now (a recorded value is taken as
// exact), and holds only when the interval's lower bound clears the
// minimum: a ratio that clears it only by luck of the run does not pass.
func checkRatio(r scenario.Ratio, profile string, measured map[string]result.VariantResult, base *scenario.Baseline) result.Check {
	c := result.Check{Name: fmt.Sprintf("%s(%s) / %s(%s) ≥ %g, 95%% interval", r.Metric, r.Numerator, r.Metric, r.Denominator, r.Min)}
	value := func(variant string) (bootstrap.Sample, string) {
		if v, ok := measured[variant]; ok {
			if smp, ok := v.Samples[r.Metric]; ok {
				return smp, "now"
			}
			if x, ok := v.Metrics[r.Metric]; ok {
				return bootstrap.Fixed(x), "now, no interval"
			}
			return nil, ""
		}
		if rec, ok := base.Lookup(profile, variant); ok {
			if x, ok := rec.Metrics[r.Metric]; ok {
				return bootstrap.Fixed(x), "recorded"
			}
		}
		return nil, ""
	}
	num, numSrc := value(r.Numerator)
	den, denSrc := value(r.Denominator)
	if num == nil || den == nil {
		c.Detail = fmt.Sprintf("needs %s of both variants, measured now or recorded in baseline.json for profile %s", r.Metric, profile)
		return c
	}
	iv := bootstrap.Ratio(num, den, bootstrap.Resamples, bootstrap.Seed)
	if iv == nil {
		c.Detail = fmt.Sprintf("%s(%s) is %g", r.Metric, r.Denominator, den.Estimate())
		return c
	}
	c.Ratio = iv
	c.OK = iv.Low >= r.Min
	c.Detail = fmt.Sprintf("%.2f× [%.2f, %.2f] (%s %.2f %s / %s %.2f %s)", iv.Value, iv.Low, iv.High,
		r.Numerator, num.Estimate(), numSrc, r.Denominator, den.Estimate(), denSrc)
	return c
}

func describe(f detect.Finding) string {
	s := fmt.Sprintf("%s in %s: %s", f.Detector, f.Service, f.Operation)
	if f.CallsPerTrace > 0 {
		s += fmt.Sprintf(", %.0f calls/trace", f.CallsPerTrace)
	}
	if f.ShareOfParent > 0 {
		s += fmt.Sprintf(", %.0f%% of parent", 100*f.ShareOfParent)
	}
	return s + fmt.Sprintf(", %.0f%% of critical path", 100*f.ShareOfCriticalPath)
}

// Verdict is "pass" when every check holds, else "fail".
func Verdict(checks []result.Check) string {
	for _, c := range checks {
		if !c.OK {
			return "fail"
		}
	}
	return "pass"
}
