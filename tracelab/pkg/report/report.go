// Package report renders a scenario run's result: as one self-contained
// HTML file (the summary table, the latency distribution of each variant,
// and a waterfall of a representative trace per variant with the finding
// highlighted and the critical path marked; no script, font or stylesheet
// is fetched, so it opens offline), and as the text table the CLI prints.
package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"sort"
	"strings"

	"tracelab/pkg/analyze"
	"tracelab/pkg/detect"
	"tracelab/pkg/result"
	"tracelab/pkg/trace"
)

//go:embed report.html.tmpl
var pageTemplate string

// Options shape the page.
type Options struct {
	// HideVerdict leaves out the checks and the verdict.
	HideVerdict bool
	// Blind is for training: it also hides the scenario, the variants'
	// names and the findings (no text, no highlighted rows), so the page
	// shows only what a trace shows.
	Blind bool
	// MaxRows caps a waterfall; the rest of the trace is summarized in one row.
	MaxRows int
}

// WriteFile renders res into path.
func WriteFile(path string, res *result.Result, opt Options) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := Write(f, res, opt); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Write renders res from each variant's Traces, which a run leaves in
// memory; a result read from disk needs result.Result.ReadTraces first.
// It parses nothing, so a run's traces are parsed once.
func Write(w io.Writer, res *result.Result, opt Options) error {
	if opt.MaxRows == 0 {
		opt.MaxRows = 120
	}
	page := pageData{Result: res, HideVerdict: opt.HideVerdict || opt.Blind, Blind: opt.Blind}
	if opt.Blind {
		anon := *res
		anon.Scenario = "training round"
		page.Result = &anon
	}
	var durations [][]float64
	for _, v := range res.Variants {
		traces := v.Traces
		ds := make([]float64, 0, len(traces))
		for _, t := range traces {
			ds = append(ds, float64(t.Duration())/1e6)
		}
		durations = append(durations, ds)
		vp := variantPage{VariantResult: v, Findings: v.Analysis.Findings}
		if t, f := representative(traces, v.Analysis.Findings); t != nil {
			if opt.Blind {
				f = nil
			}
			vp.Waterfall = waterfall(t, f, opt.MaxRows)
		}
		if opt.Blind {
			vp.Variant = fmt.Sprintf("run %d", len(page.Variants)+1)
			vp.Findings = nil
		}
		page.Variants = append(page.Variants, vp)
	}
	hists := histograms(durations, 24)
	for i := range page.Variants {
		page.Variants[i].Histogram = hists[i]
	}
	tmpl, err := template.New("report").Funcs(template.FuncMap{
		"ms":      analyze.FormatMs,
		"pct":     func(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) },
		"float":   func(f float64) string { return fmt.Sprintf("%.2f", f) },
		"ids":     findingList,
		"cpums":   cpuMs,
		"msOr":    msOrDash,
		"cores":   cores,
		"orDash":  orDash,
		"upper":   strings.ToUpper,
		"percent": func(f float64) template.CSS { return template.CSS(fmt.Sprintf("%.3f%%", 100*f)) },
		"indent":  func(depth int) template.CSS { return template.CSS(fmt.Sprintf("%dpx", 4+12*depth)) },
	}).Parse(pageTemplate)
	if err != nil {
		return err
	}
	return tmpl.Execute(w, page)
}

type pageData struct {
	Result      *result.Result
	HideVerdict bool
	Blind       bool
	Variants    []variantPage
}

type variantPage struct {
	result.VariantResult
	Findings  []detect.Finding
	Waterfall *Waterfall
	Histogram Histogram
}

// representative picks the trace a finding names as its example, or else
// the trace of median duration: the shape most requests had.
func representative(traces []*trace.Trace, findings []detect.Finding) (*trace.Trace, *detect.Finding) {
	for i, f := range findings {
		if id, ok := f.Evidence["example_trace_id"].(string); ok {
			for _, t := range traces {
				if t.ID == id {
					return t, &findings[i]
				}
			}
		}
	}
	if len(traces) == 0 {
		return nil, nil
	}
	sorted := append([]*trace.Trace(nil), traces...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Duration() < sorted[j].Duration() })
	return sorted[len(sorted)/2], nil
}

// Waterfall is one trace laid out as rows on a common time axis, with
// positions as fractions of the trace's duration.
type Waterfall struct {
	TraceID    string
	DurationMs float64
	Rows       []Row
	Hidden     int    // rows left out past the cap
	HiddenNote string // what the left-out rows were, mostly
	Highlight  string // what the highlighted rows are
	Axis       []Tick
}

type Row struct {
	Depth       int
	Service     string
	Operation   string
	Left, Width float64 // fractions of the trace
	DurationMs  float64
	Thread      string
	Finding     bool
	Critical    []Segment // parts of this span on the critical path
	Folded      int       // > 0: this row stands for that many sibling spans
	// Details is what the row's tooltip shows: kind, status, timing,
	// thread and attributes; the page has no script to ask for more.
	Details string
}

// Tick is a mark of the waterfall's time axis.
type Tick struct {
	Left  float64 // fraction of the trace
	Label string
}

// axis marks the trace's time at every quarter.
func axis(durationMs float64) []Tick {
	ticks := []Tick{{0, "0"}}
	for i := 1; i <= 4; i++ {
		ticks = append(ticks, Tick{float64(i) / 4, analyze.FormatMs(durationMs * float64(i) / 4)})
	}
	return ticks
}

// maxDetailAttrs bounds the attributes a row's tooltip lists, so a span
// with hundreds of them does not bloat a one-file report.
const maxDetailAttrs = 40

func details(t *trace.Trace, s *trace.Span, start int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n%s, status %s", s.Service, t.Operation(s), s.Kind, s.Status)
	if s.StatusMessage != "" {
		fmt.Fprintf(&b, " (%s)", s.StatusMessage)
	}
	fmt.Fprintf(&b, "\nstarts %s after the trace, lasts %s", analyze.FormatMs(float64(s.Start-start)/1e6), analyze.FormatMs(float64(s.Duration())/1e6))
	attrs := s.Attrs.Map()
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		if i == maxDetailAttrs {
			fmt.Fprintf(&b, "\n… %d more attributes", len(keys)-i)
			break
		}
		fmt.Fprintf(&b, "\n%s = %s", k, attrs[k])
	}
	return b.String()
}

type Segment struct{ Left, Width float64 }

func waterfall(t *trace.Trace, f *detect.Finding, maxRows int) *Waterfall {
	start, total := t.Root.Start, float64(max(t.Duration(), 1))
	w := &Waterfall{TraceID: t.ID, DurationMs: float64(t.Duration()) / 1e6, Axis: axis(float64(t.Duration()) / 1e6)}
	critical := map[string][]Segment{}
	for _, sec := range t.CriticalPath() {
		critical[sec.SpanID] = append(critical[sec.SpanID], Segment{float64(sec.Start-start) / total, float64(sec.Duration()) / total})
	}
	marked := highlighted(t, f)
	if f != nil {
		w.Highlight = fmt.Sprintf("%s: %s", f.Detector, f.Operation)
	}
	hidden := map[string]int{}
	row := func(s *trace.Span, depth int) Row {
		return Row{
			Depth: depth, Service: s.Service, Operation: t.Operation(s),
			Left: float64(s.Start-start) / total, Width: float64(s.Duration()) / total,
			DurationMs: float64(s.Duration()) / 1e6, Thread: s.Attr("thread.name"),
			Finding: marked[s.SpanID], Critical: critical[s.SpanID], Details: details(t, s, start),
		}
	}
	var walk func(s *trace.Span, depth int)
	walk = func(s *trace.Span, depth int) {
		if len(w.Rows) >= maxRows {
			w.Hidden++
			hidden[s.Service+" "+t.Operation(s)]++
		} else {
			w.Rows = append(w.Rows, row(s, depth))
		}
		children := t.Children(s)
		for i := 0; i < len(children); {
			j := i + 1
			for j < len(children) && t.Operation(children[j]) == t.Operation(children[i]) {
				j++
			}
			run := children[i:j]
			if len(run) <= foldAbove {
				for _, c := range run {
					walk(c, depth+1)
				}
			} else {
				// A long run of the same call (an N+1 staircase) is shown
				// as its first and last calls around one row that spans
				// the calls in between, so the whole run stays visible.
				for _, c := range run[:foldKeep] {
					walk(c, depth+1)
				}
				w.Rows = append(w.Rows, fold(t, run[foldKeep:len(run)-foldKeep], depth+1, start, total, marked, critical))
				for _, c := range run[len(run)-foldKeep:] {
					walk(c, depth+1)
				}
			}
			i = j
		}
	}
	for _, r := range t.Roots() {
		walk(r, 0)
	}
	w.HiddenNote = mostCommon(hidden)
	return w
}

const (
	foldAbove = 8 // sibling runs longer than this are folded
	foldKeep  = 3 // calls shown at each end of a folded run
)

// fold summarizes sibling spans (and, implicitly, their subtrees) as one
// row covering them, keeping their highlight and critical-path marks.
func fold(t *trace.Trace, spans []*trace.Span, depth int, start int64, total float64, marked map[string]bool, critical map[string][]Segment) Row {
	first, last := spans[0].Start, spans[0].End
	var sum int64
	r := Row{Depth: depth, Service: spans[0].Service, Folded: len(spans)}
	for _, s := range spans {
		first, last = min(first, s.Start), max(last, s.End)
		sum += s.Duration()
		r.Finding = r.Finding || marked[s.SpanID]
		r.Critical = append(r.Critical, critical[s.SpanID]...)
	}
	r.Operation = fmt.Sprintf("… %d more %s", len(spans), t.Operation(spans[0]))
	r.Left, r.Width = float64(first-start)/total, float64(last-first)/total
	r.DurationMs = float64(sum) / 1e6
	r.Critical = merge(r.Critical, 0.002)
	return r
}

// merge joins segments closer than gap (a fraction of the trace), so a
// folded run of 1,600 calls draws one critical-path line, not 1,600.
func merge(segs []Segment, gap float64) []Segment {
	sort.Slice(segs, func(i, j int) bool { return segs[i].Left < segs[j].Left })
	var out []Segment
	for _, s := range segs {
		if n := len(out); n > 0 && s.Left <= out[n-1].Left+out[n-1].Width+gap {
			out[n-1].Width = max(out[n-1].Width, s.Left+s.Width-out[n-1].Left)
			continue
		}
		out = append(out, s)
	}
	return out
}

// highlighted marks the spans a finding is about (detect.Finding.SpansIn).
func highlighted(t *trace.Trace, f *detect.Finding) map[string]bool {
	marked := map[string]bool{}
	if f != nil {
		for _, s := range f.SpansIn(t) {
			marked[s.SpanID] = true
		}
	}
	return marked
}

func mostCommon(counts map[string]int) string {
	best, n := "", 0
	for k, c := range counts {
		if c > n || (c == n && k < best) {
			best, n = k, c
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d × %s", n, best)
}

// Histogram is a latency distribution on a scale shared by all variants,
// so their shapes can be compared by eye.
type Histogram struct {
	Bins     []Bin
	MinMs    float64
	MaxMs    float64
	LogScale bool
}

type Bin struct {
	FromMs, ToMs float64
	Count        int
	Height       float64 // fraction of the tallest bin of this variant
}

// histograms bins every variant's request durations on one shared axis,
// logarithmic when the variants differ by more than 10×.
func histograms(all [][]float64, n int) []Histogram {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, ds := range all {
		for _, d := range ds {
			lo, hi = math.Min(lo, d), math.Max(hi, d)
		}
	}
	out := make([]Histogram, len(all))
	if math.IsInf(lo, 1) {
		return out
	}
	logScale := lo > 0 && hi/lo > 10
	edge := func(i int) float64 {
		f := float64(i) / float64(n)
		if logScale {
			return lo * math.Pow(hi/lo, f)
		}
		return lo + (hi-lo)*f
	}
	for v, ds := range all {
		h := Histogram{MinMs: lo, MaxMs: hi, LogScale: logScale}
		for i := 0; i < n; i++ {
			h.Bins = append(h.Bins, Bin{FromMs: edge(i), ToMs: edge(i + 1)})
		}
		for _, d := range ds {
			i := n - 1
			for j := 0; j < n; j++ {
				if d < h.Bins[j].ToMs {
					i = j
					break
				}
			}
			h.Bins[i].Count++
		}
		top := 0
		for _, b := range h.Bins {
			top = max(top, b.Count)
		}
		for i := range h.Bins {
			h.Bins[i].Height = float64(h.Bins[i].Count) / float64(max(top, 1))
		}
		out[v] = h
	}
	return out
}

// findingList names the detectors that found something, or says none did.
func findingList(fs []detect.Finding) string {
	if ids := result.FindingIDs(fs); len(ids) > 0 {
		return strings.Join(ids, ", ")
	}
	return "none"
}
