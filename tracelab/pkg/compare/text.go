package compare

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"tracelab/pkg/detect"
)

// WriteText writes the comparison as `tracelab compare` prints it: the
// verdict, the findings by state, and per request type both sides.
func WriteText(w io.Writer, r Result) error {
	var b strings.Builder
	if r.Verdict.Pass {
		b.WriteString("verdict: pass\n")
	} else {
		b.WriteString("verdict: FAIL\n")
		for _, reason := range r.Verdict.Reasons {
			fmt.Fprintf(&b, "  - %s\n", reason)
		}
	}
	fmt.Fprintf(&b, "\nfindings: %d resolved, %d new, %d persisting\n", len(r.Resolved), len(r.New), len(r.Persisting))
	for _, group := range []struct {
		name string
		fs   []detect.Finding
	}{{"resolved", r.Resolved}, {"new", r.New}, {"persisting", r.Persisting}} {
		for _, f := range group.fs {
			fmt.Fprintf(&b, "  %-10s %s  %s", group.name, f.Detector, f.Service)
			if f.Request != "" {
				fmt.Fprintf(&b, "  %s", f.Request)
			}
			fmt.Fprintf(&b, "  %s\n", f.Operation)
		}
	}
	fmt.Fprintf(&b, "\nrequests (baseline -> candidate):\n")
	for _, q := range r.Requests {
		fmt.Fprintf(&b, "  %s\n", q.Request)
		fmt.Fprintf(&b, "    traces   %s -> %s\n", sideValue(q.Baseline, func(s *Side) string { return strconv.Itoa(s.Traces) }),
			sideValue(q.Candidate, func(s *Side) string { return strconv.Itoa(s.Traces) }))
		for _, p := range []struct {
			name  string
			get   func(*Side) float64
			ratio *Ratio
		}{{"p50", func(s *Side) float64 { return s.P50Ms }, q.P50Ratio}, {"p95", func(s *Side) float64 { return s.P95Ms }, q.P95Ratio}} {
			get := p.get
			fmt.Fprintf(&b, "    %s      %s -> %s ms", p.name,
				sideValue(q.Baseline, func(s *Side) string { return fmt.Sprintf("%.1f", get(s)) }),
				sideValue(q.Candidate, func(s *Side) string { return fmt.Sprintf("%.1f", get(s)) }))
			if p.ratio != nil {
				fmt.Fprintf(&b, "  %.2f× (95%% CI %.2f–%.2f×)", p.ratio.Value, p.ratio.Low, p.ratio.High)
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "    calls    %s -> %s per request\n",
			sideValue(q.Baseline, func(s *Side) string { return fmt.Sprintf("%g", s.CallsPerRequest) }),
			sideValue(q.Candidate, func(s *Side) string { return fmt.Sprintf("%g", s.CallsPerRequest) }))
		fmt.Fprintf(&b, "    db       %s -> %s round trips per request\n",
			sideValue(q.Baseline, func(s *Side) string { return fmt.Sprintf("%g", s.DBCallsPerRequest) }),
			sideValue(q.Candidate, func(s *Side) string { return fmt.Sprintf("%g", s.DBCallsPerRequest) }))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// sideValue formats a side's value, or "-" for a side the request type is
// missing from.
func sideValue(s *Side, f func(*Side) string) string {
	if s == nil {
		return "-"
	}
	return f(s)
}
