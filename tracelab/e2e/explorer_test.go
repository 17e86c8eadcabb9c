//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"tracelab/internal/headless"
	"tracelab/pkg/lab"
	"tracelab/pkg/result"
)

// checkExplorer drives the trace explorer (tracelab ui) in headless
// Chromium as a learner would, on the nplus1 smoke run that just ended,
// with its stack still up: the run's page; the baseline's traces that
// show the N+1; one of them, its folded calls expanded, a span's
// attributes read, the finding on its spans; the compare view against the
// fix, whose removed calls are the N+1's; the scenario's dashboard, with
// PromQL panels drawn from Prometheus and TraceQL panels listing traces.
// The screenshots are kept beside the run's result (explorer-*.png).
func checkExplorer(t *testing.T, res result.Result) {
	run := filepath.Base(filepath.Dir(res.ResultFile))
	shots := filepath.Dir(res.ResultFile)
	base := startExplorer(t, "local")

	tools, err := lab.ReadEnvFile(filepath.Join(root(t), lab.StateDir, "tools-test.env"))
	if err != nil || tools["CHROMIUM_BIN"] == "" {
		t.Fatal("CHROMIUM_BIN missing from .state/tools-test.env; run 'make tools-test'")
	}
	ctx, stop := headless.Browser(tools["CHROMIUM_BIN"], profileDir(t), 3*time.Minute)
	defer stop()

	step := func(name string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			var page string
			chromedp.Run(ctx, chromedp.Text("main", &page, chromedp.ByQuery))
			t.Fatalf("%s: %v\n  the page said: %.400s", name, err, page)
		}
	}
	shot := func(name string) {
		t.Helper()
		var png []byte
		step("screenshot "+name, chromedp.FullScreenshot(&png, 100)) // 100 is PNG; less, JPEG
		path := filepath.Join(shots, "explorer-"+name+".png")
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", path)
	}
	count := func(selector string) int {
		var n int
		step("count "+selector, chromedp.Evaluate(fmt.Sprintf("document.querySelectorAll(%q).length", selector), &n))
		return n
	}
	text := func(selector string) string {
		var s string
		step("read "+selector, chromedp.Text(selector, &s, chromedp.ByQuery))
		return s
	}

	// The run, and from it the baseline's traces that show the finding.
	step("open the run", chromedp.Navigate(base+"/#/run/"+run), chromedp.WaitVisible(".card", chromedp.ByQuery))
	shot("run")
	step("search the baseline's traces with the finding",
		chromedp.Click(`a[href*="variant=baseline"][href*="finding=n-plus-one"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#trace-list tr[data-trace]`, chromedp.ByQuery))
	listed := count(`#trace-list tr[data-trace]`)
	withTag := count(`#trace-list tr[data-trace] .tag.finding`)
	if listed == 0 || withTag != listed {
		t.Fatalf("the search lists %d traces, %d of them tagged n-plus-one; want all", listed, withTag)
	}
	if !strings.Contains(text("#search-count"), "traces match") {
		t.Error("the search does not say how many traces match")
	}
	if count("#scatter") != 1 {
		t.Error("no duration scatter")
	}
	shot("search")

	// One trace: the folded staircase, expanded; the finding on its spans.
	step("open a trace", chromedp.Click(`#trace-list tr[data-trace]`, chromedp.ByQuery),
		chromedp.WaitVisible(`.wf-row[data-fold]`, chromedp.ByQuery))
	if f := text(".finding-line"); !strings.Contains(f, "n-plus-one") {
		t.Errorf("the trace view names no n-plus-one finding: %q", f)
	}
	if !strings.Contains(text("#client-line"), "outside any span") {
		t.Error("the trace view does not say what the client waited outside any span")
	}
	foldLabel := text(`.wf-row[data-fold="0"]`)
	before := count(`.wf-row.finding[data-span]`)
	shot("trace-folded")
	step("expand the folded calls", chromedp.Click(`.wf-row[data-fold="0"]`, chromedp.ByQuery),
		chromedp.WaitNotPresent(`.wf-row[data-fold="0"]`, chromedp.ByQuery))
	after := count(`.wf-row.finding[data-span]`)
	t.Logf("folded row %q; finding rows drawn: %d folded, %d expanded", foldLabel, before, after)
	if after <= before {
		t.Errorf("expanding %q drew %d finding rows, no more than the %d before", foldLabel, after, before)
	}
	step("read a span's attributes", chromedp.Click(`.wf-row.finding[data-span]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#span-attributes td`, chromedp.ByQuery))
	attrs := text("#span-attributes")
	if !strings.Contains(attrs, "/prices/") || !strings.Contains(text("#span-details"), "n-plus-one") {
		t.Errorf("the span's details show neither its URL nor its finding: %.300q", attrs)
	}
	step("show the critical path", chromedp.Click(`#critical-path`, chromedp.ByQuery), chromedp.WaitVisible(`.wf-row .crit`, chromedp.ByQuery))
	shot("trace")

	// Compare: the baseline's typical trace against the fix's.
	step("open the compare view", chromedp.Navigate(base+"/#/compare/"+run), chromedp.WaitVisible(`#diff`, chromedp.ByQuery))
	removed := text(`#diff`)
	if count(`#diff tr[data-kind="removed"]`) == 0 || !strings.Contains(removed, "/prices/{id}") {
		t.Errorf("the compare view lists no removed /prices/{id} calls:\n%s", removed)
	}
	shot("compare")

	// The scenario's dashboard, drawn from its JSON.
	step("open the dashboard", chromedp.Navigate(base+"/#/dashboard/nplus1.json?run="+run),
		chromedp.WaitVisible(`#dashboard .panel`, chromedp.ByQuery),
		chromedp.Poll(`[...document.querySelectorAll("#dashboard .panel")].every(p => p.dataset.state)`, nil, chromedp.WithPollingTimeout(time.Minute)))
	data, traces := count(`.panel[data-state="data"]`), count(`.panel[data-state="traces"]`)
	var states string
	step("panel states", chromedp.Evaluate(`[...document.querySelectorAll("#dashboard .panel")].map(p => p.dataset.title + ": " + p.dataset.state + (p.dataset.state == "error" ? " (" + p.innerText.slice(0, 120) + ")" : "")).join("\n")`, &states))
	t.Logf("dashboard panels:\n%s", states)
	if data == 0 || traces == 0 {
		t.Errorf("the nplus1 dashboard drew %d PromQL panels with data and %d TraceQL panels with traces; want at least one of each", data, traces)
	}
	shot("dashboard")
	checkExplorerLive(t, base)
}

// startExplorer runs `tracelab ui` on a free port until the test ends and
// returns its URL, read from the line it prints.
func startExplorer(t *testing.T, runtime string) string {
	t.Helper()
	cmd := exec.Command(bin(t), "ui", "--addr", "127.0.0.1:0", "--runtime", runtime)
	cmd.Dir = root(t)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("tracelab ui printed no address: %v", err)
	}
	url, _, ok := strings.Cut(strings.TrimPrefix(line, "trace explorer: "), "/ ")
	if !ok || !strings.HasPrefix(url, "http://") {
		t.Fatalf("tracelab ui printed %q", line)
	}
	return url
}

// profileDir is a browser profile removed after the test, whatever the
// browser's helpers still write into it as they exit (t.TempDir would fail
// the test on that).
func profileDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "tracelab-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// checkExplorerOnKind: the explorer, run as `make ui RUNTIME=kind` runs it,
// reads the cluster's Jaeger and Prometheus (kind maps them to the local
// ports).
func checkExplorerOnKind(t *testing.T) { checkExplorerLive(t, startExplorer(t, "kind")) }

// checkExplorerLive: the explorer at base reads the running stack: it
// says Jaeger and Prometheus answer, lists catalog's recent traces from
// Jaeger, and gets a PromQL panel's series from Prometheus.
func checkExplorerLive(t *testing.T, base string) {
	t.Helper()
	var status struct {
		JaegerUp bool `json:"jaeger_up"`
		PromUp   bool `json:"prom_up"`
	}
	getJSON(t, base+"/api/status", &status)
	var live struct{ Total int }
	getJSON(t, base+"/api/runs/live/traces?variant=catalog&lookback=1h", &live)
	var prom struct {
		Series []struct{ Points [][2]float64 }
	}
	getJSON(t, base+"/api/promql?expr="+url.QueryEscape(`sum(rate(traces_span_metrics_calls_total[1m]))`), &prom)
	t.Logf("live: Jaeger %v, Prometheus %v, %d live catalog traces, %d series", status.JaegerUp, status.PromUp, live.Total, len(prom.Series))
	if !status.JaegerUp || !status.PromUp || live.Total == 0 || len(prom.Series) == 0 || len(prom.Series[0].Points) == 0 {
		t.Error("the explorer does not read the cluster's Jaeger and Prometheus")
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %s %s", url, resp.Status, body)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}
