// Command explorerbench measures the trace explorer in headless Chromium
// (make bench-explorer): for a trace of the nplus1 full baseline's shape
// (1,600 sequential price calls, 3,203 spans) and one of 50,000 spans, the
// time from navigation to the first paint and to a waterfall that answers
// clicks, and the time one click on a folded run takes to draw. Each
// measurement opens a fresh browser, so nothing is cached.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"time"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"tracelab/internal/headless"
	"tracelab/internal/tracegen"
	"tracelab/pkg/analyze"
	"tracelab/pkg/detect"
	"tracelab/pkg/explorer"
	"tracelab/pkg/otlp"
	"tracelab/pkg/result"
	"tracelab/pkg/trace"
)

func main() {
	chromium := flag.String("chromium", os.Getenv("CHROMIUM_BIN"), "the Chromium to drive (make tools-test installs one)")
	runs := flag.Int("runs", 5, "measurements per trace")
	flag.Parse()
	if *chromium == "" {
		fmt.Fprintln(os.Stderr, "explorerbench: no Chromium: set CHROMIUM_BIN or pass -chromium (make tools-test)")
		os.Exit(2)
	}
	dir, err := os.MkdirTemp("", "explorerbench")
	check(err)
	defer os.RemoveAll(dir)
	sizes := []struct {
		name  string
		items int
	}{{"nplus1 full baseline shape", 1600}, {"50,000 spans", 24999}}
	var traces []*trace.Trace
	for i, s := range sizes {
		traces = append(traces, trace.Group(tracegen.LabTrace(tracegen.LabOptions{Items: s.items, Seed: int64(i + 1),
			Start: time.Date(2026, 12, 7, 12, i, 0, 0, time.UTC)}))...)
	}
	writeRun(filepath.Join(dir, "bench"), traces)
	srv := httptest.NewServer(explorer.New(explorer.Config{Results: dir, Root: dir}))
	defer srv.Close()

	fmt.Printf("trace explorer in headless Chromium (%s), %d fresh browsers per trace: median [min, max]\n", *chromium, *runs)
	fmt.Printf("%-28s %7s %22s %26s %22s\n", "trace", "spans", "first paint", "interactive waterfall", "expand a fold")
	for i, s := range sizes {
		var paint, ready, expand []float64
		for r := 0; r < *runs; r++ {
			m := measure(*chromium, srv.URL+"/#/trace/bench/baseline/"+traces[i].ID)
			paint, ready, expand = append(paint, m.Paint), append(ready, m.Ready), append(expand, m.Expand)
		}
		fmt.Printf("%-28s %7d %22s %26s %22s\n", s.name, len(traces[i].Spans), spread(paint), spread(ready), spread(expand))
	}
	fmt.Println("goal: an interactive waterfall under 1 s for the nplus1 full baseline, under 3 s at 50,000 spans")
}

// writeRun saves traces as a one-variant run, analyzed, as a run does.
func writeRun(dir string, traces []*trace.Trace) {
	check(os.MkdirAll(dir, 0o755))
	f, err := os.Create(filepath.Join(dir, "baseline-traces.json"))
	check(err)
	check(otlp.Write(f, traces))
	check(f.Close())
	res := result.Result{Scenario: "bench", Profile: "bench", Runtime: "local", StartedAt: time.Now(), Verdict: "pass",
		Variants: []result.VariantResult{{Variant: "baseline", TracesFile: "baseline-traces.json",
			Analysis: analyze.Analyze(traces, detect.All())}}}
	data, err := json.Marshal(res)
	check(err)
	check(os.WriteFile(filepath.Join(dir, "result.json"), data, 0o644))
}

type measurement struct{ Paint, Ready, Expand float64 }

func measure(chromium, url string) measurement {
	ctx, stop := headless.Browser(chromium, "", 2*time.Minute)
	defer stop()
	// Start the browser first: its own start is not the page's time.
	check(chromedp.Run(ctx, chromedp.Navigate("about:blank")))
	var m measurement
	check(chromedp.Run(ctx,
		chromedp.Navigate(url),
		chromedp.WaitVisible(`body[data-waterfall="ready"]`, chromedp.ByQuery),
		chromedp.Evaluate(`({Paint: (performance.getEntriesByName("first-contentful-paint")[0] || {startTime: NaN}).startTime,
			Ready: performance.getEntriesByName("waterfall-interactive")[0].startTime})`, &m),
		chromedp.Evaluate(`new Promise((done) => {
			const t0 = performance.now();
			document.querySelector('.wf-row[data-fold]').click();
			requestAnimationFrame(() => setTimeout(() => done(performance.now() - t0)));
		})`, &m.Expand, func(p *cdpruntime.EvaluateParams) *cdpruntime.EvaluateParams { return p.WithAwaitPromise(true) }),
	))
	return m
}

func spread(xs []float64) string {
	s := slices.Clone(xs)
	slices.Sort(s)
	return fmt.Sprintf("%.0f ms [%.0f, %.0f]", s[len(s)/2], s[0], s[len(s)-1])
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "explorerbench:", err)
		os.Exit(1)
	}
}
