package train

import (
	"math/rand"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"tracelab/internal/headless"
	"tracelab/pkg/analyze"
	"tracelab/pkg/detect"
	"tracelab/pkg/explorer"
)

// The blind explorer leaks nothing: for every round of the set, the DOM of
// its search page and of its largest trace with a span's details open, in
// headless Chromium, holds no detector id, no finding's sentence (the
// analyzer's, on the same traces), no scenario name and no calls-per-request
// figure or folded repeat. TRAIN_SCREENSHOT=FILE keeps a PNG of the first
// lab round's trace page.
func TestBlindExplorerLeaksNothing(t *testing.T) {
	skipUnderRace(t)
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("no chromium on PATH (Debian: apt-get install chromium)")
	}
	set := loadSet(t)
	ctx, stop := headless.Browser(bin, "", 20*time.Minute)
	defer stop()
	scenarios := []string{"nplus1", "eventloop", "chatty-db", "kafka-batching", "antpath"}
	var ids []string
	for _, d := range detect.All() {
		ids = append(ids, d.ID())
	}
	shot := os.Getenv("TRAIN_SCREENSHOT")
	for _, c := range set.Cases {
		r, err := set.Round(c, rand.New(rand.NewSource(7)), 7, LevelFix)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(explorer.New(explorer.Config{Round: &explorer.Round{ID: r.ID, Traces: r.Traces()}}))
		// The largest trace shows the most: a repeat, if there is one.
		tr := r.Traces()[0]
		for _, x := range r.Traces() {
			if len(x.Spans) > len(tr.Spans) {
				tr = x
			}
		}
		var search, page string
		err = chromedp.Run(ctx,
			chromedp.Navigate(srv.URL+"/"),
			chromedp.WaitVisible(`#trace-list tr[data-trace]`, chromedp.ByQuery),
			chromedp.OuterHTML("html", &search, chromedp.ByQuery),
			chromedp.Navigate(srv.URL+"/#/trace/round/round/"+tr.ID),
			chromedp.WaitVisible(`body[data-waterfall="ready"]`, chromedp.ByQuery),
			chromedp.Click(`.wf-row[data-row="`+map[bool]string{true: "1", false: "0"}[len(tr.Spans) > 1]+`"]`, chromedp.ByQuery),
			chromedp.WaitVisible(`#span-attributes`, chromedp.ByQuery),
			chromedp.OuterHTML("html", &page, chromedp.ByQuery),
		)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if shot != "" && c.Lab() && c.Pathology != None {
			var png []byte
			if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err == nil {
				os.WriteFile(shot, png, 0o644)
			}
			shot = ""
		}
		srv.Close()
		dom := search + page
		for _, id := range ids {
			if strings.Contains(dom, id) {
				t.Errorf("%s: the page shows detector id %s", c.Name, id)
			}
		}
		for _, s := range scenarios {
			// A scenario's name as a word of its own: Vert.x names its
			// threads vert.x-eventloop-thread-N in any Quarkus trace
			// (chatty-db's too), which is evidence, not the answer.
			if regexp.MustCompile(`(^|[^\w.-])` + regexp.QuoteMeta(s) + `($|[^\w.-])`).MatchString(dom) {
				t.Errorf("%s: the page names scenario %s", c.Name, s)
			}
		}
		for _, f := range analyze.Analyze(r.Traces(), detect.All()).Findings {
			if strings.Contains(dom, f.Summary) {
				t.Errorf("%s: the page shows the finding %q", c.Name, f.Summary)
			}
		}
		for _, leak := range []string{"per request", "calls per", "finding", `class="wf-row fold`, "Fold repeats", "Compare with"} {
			if strings.Contains(dom, leak) {
				t.Errorf("%s: the page holds %q", c.Name, leak)
			}
		}
		for _, orig := range sortedKeys(r.Mask.Services) {
			if regexp.MustCompile(`\b` + orig + `\b`).MatchString(page) {
				t.Errorf("%s: the trace page shows the lab service name %s", c.Name, orig)
			}
		}
	}
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
