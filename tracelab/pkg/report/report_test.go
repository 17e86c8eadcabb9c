package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"tracelab/internal/tracegen"
	"tracelab/pkg/analyze"
	"tracelab/pkg/detect"
	"tracelab/pkg/result"
	"tracelab/pkg/trace"
)

// labRun analyzes generated nplus1 traces as the runner would, leaving
// them in memory for the report.
func labRun(t *testing.T, variant string, batch bool) result.VariantResult {
	t.Helper()
	var spans []*trace.Span
	for i := 0; i < 3; i++ {
		spans = append(spans, tracegen.LabTrace(tracegen.LabOptions{Items: 200, CallMs: 12, Batch: batch, Start: time.Unix(1700000000+int64(i)*10, 0), Seed: int64(i)})...)
	}
	traces := trace.Group(spans)
	return result.VariantResult{
		Variant:  variant,
		Metrics:  map[string]float64{"p50_ms": 1},
		Analysis: analyze.Analyze(traces, detect.All()),
		Traces:   traces,
	}
}

func render(t *testing.T, opt Options) string {
	res := &result.Result{Scenario: "nplus1", Profile: "smoke", Verdict: "pass",
		Variants: []result.VariantResult{labRun(t, "baseline", false), labRun(t, "fixed", true)},
		Checks:   []result.Check{{Name: "baseline: n-plus-one found", OK: true}}}
	var b bytes.Buffer
	if err := Write(&b, res, opt); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestReportShowsTheStaircaseAndItsFinding(t *testing.T) {
	html := render(t, Options{})
	baseline, fixed, ok := strings.Cut(html, `id="variant-fixed"`)
	if !ok {
		t.Fatal("no section for the fixed variant")
	}
	// 200 calls: 3 shown at each end, the 194 between folded in one row.
	if !strings.Contains(baseline, "… 194 more GET 127.0.0.1:18081/prices/{id}") {
		t.Error("the sequential calls are not folded into one row")
	}
	if n := strings.Count(baseline, `class="wf-row finding`); n != 7 {
		t.Errorf("want 7 highlighted rows (6 calls and the folded run), got %d", n)
	}
	if !strings.Contains(baseline, `class="crit"`) {
		t.Error("no critical path marked")
	}
	if strings.Contains(fixed, "wf-row finding") {
		t.Error("the fixed variant has highlighted rows")
	}
	if !strings.Contains(html, `id="verdict"`) || strings.Contains(html, "http://") && strings.Contains(html, "<script src") {
		t.Error("want a verdict and no external resources")
	}
}

func TestReportWithoutVerdict(t *testing.T) {
	html := render(t, Options{HideVerdict: true})
	if strings.Contains(html, `id="verdict"`) || strings.Contains(html, `id="checks"`) {
		t.Error("the verdict is shown although hidden")
	}
}

func TestHistogramsShareOneAxis(t *testing.T) {
	h := histograms([][]float64{{100, 110, 120}, {2, 3}}, 10)
	if h[0].MinMs != 2 || h[1].MaxMs != 120 || !h[0].LogScale {
		t.Fatalf("got %+v", h[0])
	}
	total := 0
	for _, b := range h[1].Bins {
		total += b.Count
	}
	if total != 2 {
		t.Errorf("lost samples: %d", total)
	}
}

func TestBlindReportHidesTheAnswer(t *testing.T) {
	html := render(t, Options{Blind: true})
	for _, leak := range []string{"nplus1", "n-plus-one", "baseline", `id="verdict"`, "wf-row finding", "the finding"} {
		if strings.Contains(html, leak) {
			t.Errorf("the blind report shows %q", leak)
		}
	}
	if !strings.Contains(html, `class="crit"`) || !strings.Contains(html, "… 194 more GET") {
		t.Error("the blind report lost the waterfall")
	}
}

// A Kafka variant shows its producer's batching; a variant without client
// metrics shows none.
func TestReportShowsRecordsPerRequest(t *testing.T) {
	fixed := labRun(t, "fixed", true)
	fixed.Metrics["records_per_request"] = 2.25
	fixed.Metrics["batch_size_bytes"] = 1012.4
	res := &result.Result{Scenario: "kafka-batching", Profile: "smoke", Verdict: "pass",
		Variants: []result.VariantResult{labRun(t, "baseline", false), fixed}}
	var b bytes.Buffer
	if err := Write(&b, res, Options{}); err != nil {
		t.Fatal(err)
	}
	baseline, fixedHTML, _ := strings.Cut(b.String(), `id="variant-fixed"`)
	if !strings.Contains(fixedHTML, "<b>2.25 records/request</b>, batches of 1012 bytes") {
		t.Error("the fixed variant does not show its records per request")
	}
	if strings.Contains(baseline, "records/request") {
		t.Error("a variant without client metrics shows records per request")
	}
}

// Each waterfall has a time axis, and each span row's tooltip holds its
// kind, timing and attributes: what a reader of the offline file can ask.
func TestWaterfallHasAnAxisAndSpanDetails(t *testing.T) {
	html := render(t, Options{})
	if n := strings.Count(html, `class="wf-row wf-axis"`); n != 2 {
		t.Errorf("%d time axes; want one per variant's waterfall", n)
	}
	if !strings.Contains(html, "CLIENT, status UNSET") || !strings.Contains(html, "url.full = http://127.0.0.1:18081/prices/") {
		t.Error("no span row's tooltip lists its kind, status and attributes")
	}
}
