package analyze

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"tracelab/pkg/detect"
)

// WriteText renders the report for a terminal: totals, then one block per
// finding (most costly first), then per request type where the critical
// path goes.
func WriteText(w io.Writer, r Report) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "Analyzed %s traces, %s spans.\n", thousands(r.Traces), thousands(r.Spans))

	fmt.Fprintln(bw)
	if len(r.Findings) == 0 {
		fmt.Fprintln(bw, "Findings: none.")
	} else {
		fmt.Fprintf(bw, "Findings (%d), most costly first:\n", len(r.Findings))
		for i, f := range r.Findings {
			writeFinding(bw, i+1, f)
		}
	}

	fmt.Fprintln(bw)
	if len(r.Requests) == 0 {
		fmt.Fprintln(bw, "Requests: none.")
	} else {
		fmt.Fprintln(bw, "Requests:")
		for _, rq := range r.Requests {
			fmt.Fprintf(bw, "\n  %s\n", rq.Request)
			db := ""
			if rq.DBCallsPerTrace > 0 {
				db = fmt.Sprintf(" (%s to a database)", number(rq.DBCallsPerTrace))
			}
			fmt.Fprintf(bw, "    %s %s, mean %s, %s spans and %s outgoing calls%s per trace\n",
				thousands(rq.Traces), plural(rq.Traces, "trace", "traces"), FormatMs(rq.MeanDurationMs),
				number(rq.SpansPerTrace), number(rq.CallsPerTrace), db)
			if len(rq.CriticalPath) > 0 {
				fmt.Fprintln(bw, "    critical path (mean per trace):")
				for _, seg := range rq.CriticalPath {
					fmt.Fprintf(bw, "      %6s  %9s  %s %s\n", percent(seg.Share), FormatMs(seg.MeanMs), seg.Service, clip(seg.Operation))
				}
			}
		}
	}
	if len(r.Background) > 0 {
		fmt.Fprintln(bw)
		fmt.Fprintln(bw, "Background (traces that serve no request: start-up, jobs; not analyzed for findings):")
		for _, b := range r.Background {
			fmt.Fprintf(bw, "  %s %s, %s spans  %s\n", thousands(b.Traces), plural(b.Traces, "trace", "traces"), thousands(b.Spans), clip(b.Root))
		}
	}
	return bw.Flush()
}

func writeFinding(w io.Writer, n int, f detect.Finding) {
	fmt.Fprintf(w, "\n  %d. %s: %s of the critical path\n", n, f.Detector, percent(f.ShareOfCriticalPath))
	row := func(label, format string, a ...any) {
		fmt.Fprintf(w, "     %-10s %s\n", label, fmt.Sprintf(format, a...))
	}
	row("service", "%s", f.Service)
	if f.Request != "" {
		row("request", "%s", clip(f.Request))
	}
	if f.ParentOperation != "" {
		row("in", "%s", clip(f.ParentOperation))
	}
	row("operation", "%s", clip(f.Operation))
	var shape []string
	if f.CallsPerTrace > 0 {
		shape = append(shape, number(f.CallsPerTrace)+" calls per trace")
	}
	if f.MaxConcurrency > 0 {
		shape = append(shape, fmt.Sprintf("max concurrency %d", f.MaxConcurrency))
	}
	if f.ShareOfParent > 0 {
		shape = append(shape, percent(f.ShareOfParent)+" of the parent span")
	}
	if len(shape) > 0 {
		row("shape", "%s", strings.Join(shape, ", "))
	}
	traces := fmt.Sprintf("%s affected", thousands(f.TracesAffected))
	if id, ok := f.Evidence["example_trace_id"]; ok {
		traces += fmt.Sprintf(", e.g. %v", id)
	}
	row("traces", "%s", traces)
	var extra []string
	for _, k := range slices.Sorted(maps.Keys(f.Evidence)) {
		if k != "example_trace_id" {
			extra = append(extra, fmt.Sprintf("%s=%v", k, f.Evidence[k]))
		}
	}
	if len(extra) > 0 {
		row("evidence", "%s", strings.Join(extra, " "))
	}
	if f.Summary != "" {
		fmt.Fprintf(w, "     %s\n", f.Summary)
	}
}

// clip shortens long fingerprints (a multi-row INSERT can run to pages) to
// keep one operation per line; the JSON output keeps them whole.
func clip(s string) string {
	const max = 160
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && s[cut]&0xC0 == 0x80 { // do not split a UTF-8 sequence
		cut--
	}
	return s[:cut] + "…"
}

// FormatMs writes milliseconds with a unit that suits the magnitude; every
// duration tracelab prints goes through it.
func FormatMs(ms float64) string {
	switch {
	case ms < 1:
		return fmt.Sprintf("%.0f µs", ms*1000)
	case ms < 1000:
		return fmt.Sprintf("%.1f ms", ms)
	}
	return fmt.Sprintf("%.2f s", ms/1000)
}

func percent(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

func number(x float64) string {
	if x == float64(int64(x)) {
		return thousands(int(x))
	}
	return fmt.Sprintf("%.1f", x)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// thousands writes 1234567 as 1,234,567.
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
