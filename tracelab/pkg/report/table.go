package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"tracelab/pkg/analyze"
	"tracelab/pkg/result"
)

// WriteTable prints, as text, a run's side-by-side summary, its findings and the
// verdict's checks.
func WriteTable(w io.Writer, res *result.Result) {
	fmt.Fprintf(w, "\nscenario %s, profile %s, runtime %s\n\n", res.Scenario, res.Profile, res.Runtime)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "variant\trequests\tp50\tp95\tserver p50\toutside spans p50/p95\treq/s\terrors\tspans/req\tcalls/req\tCPU ms/req\tCPU\tbound\tfindings")
	for _, v := range res.Variants {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s / %s\t%.2f\t%.1f%%\t%.0f\t%.0f\t%s\t%s\t%s\t%s\n", v.Variant, v.Load.Requests,
			analyze.FormatMs(v.Metrics["p50_ms"]), analyze.FormatMs(v.Metrics["p95_ms"]), msOrDash(v.Metrics, "server_p50_ms"),
			msOrDash(v.Metrics, "outside_p50_ms"), msOrDash(v.Metrics, "outside_p95_ms"), v.Metrics["throughput_rps"],
			100*v.Metrics["error_rate"], v.Metrics["spans_per_request"], v.Metrics["calls_per_request"],
			cpuMs(v.Metrics, "cpu_ms_per_request"), cores(v.Metrics, "cpu_cores"), orDash(v.Bound), findingList(v.Analysis.Findings))
	}
	tw.Flush()

	if len(res.Capacity) > 0 {
		fmt.Fprintln(w, "\ncapacity (closed model, flat out):")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "variant\trequests\treq/s\tmean\tCPU ms/req\tCPU\tothers on its CPUs\tload generator\tJIT settled after\tJIT while measured\tbound")
		for _, p := range res.Capacity {
			others, gen, settle, jit := "-", "-", "-", "-"
			if u, ok := p.CPU[res.Entrypoint]; ok && u.OthersCores > 0 {
				others = fmt.Sprintf("%.0f%%", 100*u.OthersCores)
			}
			if p.GeneratorCores > 0 {
				gen = fmt.Sprintf("%.0f%%", 100*p.GeneratorCores)
			}
			if p.SettleS > 0 {
				settle = fmt.Sprintf("%.0f s", p.SettleS)
			}
			if p.JITCores != nil {
				jit = fmt.Sprintf("%.0f%%", 100**p.JITCores)
			}
			fmt.Fprintf(tw, "%s\t%d\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Variant, p.Requests, p.ThroughputRPS, analyze.FormatMs(p.MeanMs),
				cpuMs(p.Metrics, "capacity_cpu_ms_per_request"), cores(p.Metrics, "capacity_cpu_cores"), others, gen, settle, jit, orDash(p.Bound))
		}
		tw.Flush()
	}

	for _, v := range res.Variants {
		for _, f := range v.Analysis.Findings {
			fmt.Fprintf(w, "\n[%s] %s: %s\n", v.Variant, f.Detector, f.Summary)
			if id, ok := f.Evidence["example_trace_id"]; ok {
				fmt.Fprintf(w, "    example trace: %v\n", id)
			}
		}
	}

	fmt.Fprintln(w, "\nchecks:")
	for _, c := range res.Checks {
		mark := "ok  "
		if !c.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  %s %s — %s\n", mark, c.Name, c.Detail)
	}
	fmt.Fprintf(w, "\nverdict: %s\n", strings.ToUpper(res.Verdict))
}

// msOrDash formats a latency, or "-" where no request was joined to its
// trace.
func msOrDash(m map[string]float64, key string) string {
	if v, ok := m[key]; ok {
		return analyze.FormatMs(v)
	}
	return "-"
}

// cpuMs and cores format a CPU figure, or "-" where CPU was not read.
func cpuMs(m map[string]float64, key string) string {
	if v, ok := m[key]; ok {
		return fmt.Sprintf("%.2f", v)
	}
	return "-"
}

func cores(m map[string]float64, key string) string {
	if v, ok := m[key]; ok {
		return fmt.Sprintf("%.0f%%", 100*v)
	}
	return "-"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
