//go:build e2e

package e2e

import (
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"tracelab/pkg/lab"
	"tracelab/pkg/result"
)

// chromium runs the headless browser installed by `make tools` with flags
// that work without a display, a sandbox or a network.
func chromium(t *testing.T, args ...string) string {
	t.Helper()
	tools, err := lab.ReadEnvFile(filepath.Join(root(t), lab.StateDir, "tools-test.env"))
	if err != nil || tools["CHROMIUM_BIN"] == "" {
		t.Fatal("CHROMIUM_BIN missing from .state/tools-test.env; run 'make tools-test'")
	}
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--window-size=1280,3200", "--hide-scrollbars"}
	out, err := exec.Command(tools["CHROMIUM_BIN"], append(base, args...)...).Output()
	if err != nil {
		t.Fatalf("chromium %v: %v", args, err)
	}
	return string(out)
}

var sectionRE = regexp.MustCompile(`<h2 id="variant-([^"]+)"`)

// checkReportInChromium opens a run's report.html in headless Chromium:
// the DOM after rendering holds each variant's waterfall, with the
// finding's rows highlighted exactly in the variants that have a finding
// and the critical path marked; the screenshot shows the highlight and
// the critical path in their colours.
func checkReportInChromium(t *testing.T, report string, res result.Result) {
	url := "file://" + report
	dom := chromium(t, "--dump-dom", url)
	if !strings.Contains(dom, `id="summary"`) {
		t.Fatalf("no summary table in the rendered DOM of %s", report)
	}
	locs := sectionRE.FindAllStringSubmatchIndex(dom, -1)
	if len(locs) != len(res.Variants) {
		t.Fatalf("%d variant sections in the DOM, want %d", len(locs), len(res.Variants))
	}
	anyFinding := false
	for i, loc := range locs {
		end := len(dom)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		section, variant := dom[loc[0]:end], dom[loc[2]:loc[3]]
		var findings int
		for _, v := range res.Variants {
			if v.Variant == variant {
				findings = len(v.Analysis.Findings)
			}
		}
		rows := strings.Count(section, `class="wf-row`)
		highlighted := strings.Count(section, `class="wf-row finding`)
		crit := strings.Count(section, `class="crit"`)
		t.Logf("%s: %d waterfall rows, %d highlighted, %d critical-path marks, %d findings", variant, rows, highlighted, crit, findings)
		if rows == 0 || crit == 0 {
			t.Errorf("%s: the waterfall is missing (%d rows) or has no critical path (%d marks)", variant, rows, crit)
		}
		switch {
		case findings > 0 && highlighted == 0:
			t.Errorf("%s: %d findings but no highlighted row in the waterfall", variant, findings)
		case findings == 0 && highlighted > 0:
			t.Errorf("%s: no finding but %d highlighted rows", variant, highlighted)
		}
		anyFinding = anyFinding || findings > 0
	}

	shot := filepath.Join(filepath.Dir(report), "report.png")
	chromium(t, "--screenshot="+shot, url)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", shot, err)
	}
	// The stylesheet's colours: #e8a100 for the finding, #b3261e for the
	// critical path. Counting them proves the bars were laid out and painted.
	var amber, red int
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			switch {
			case near(r, 0xe8) && near(g, 0xa1) && near(bl, 0x00):
				amber++
			case near(r, 0xb3) && near(g, 0x26) && near(bl, 0x1e):
				red++
			}
		}
	}
	t.Logf("screenshot %s: %d finding-coloured and %d critical-path pixels", shot, amber, red)
	if red < 100 {
		t.Errorf("screenshot shows no critical path (%d red pixels)", red)
	}
	if anyFinding && amber < 100 {
		t.Errorf("screenshot shows no highlighted finding (%d amber pixels)", amber)
	}
}

func near(a, b uint32) bool { return a+6 >= b && a <= b+6 }
