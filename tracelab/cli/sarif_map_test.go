package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sarifURIs are the artifact URIs of a SARIF log's results.
func sarifURIs(t *testing.T, out string) []string {
	t.Helper()
	var log struct {
		Runs []struct {
			Results []struct {
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil || len(log.Runs) != 1 {
		t.Fatalf("not a SARIF log of one run (%v):\n%s", err, out)
	}
	var uris []string
	for _, r := range log.Runs[0].Results {
		uris = append(uris, r.Locations[0].PhysicalLocation.ArtifactLocation.URI)
	}
	return uris
}

func writeMap(t *testing.T, text string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "sarif-map.yaml")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// --sarif-map places each service's results at its path; without it they
// sit at a directory named after the service.
func TestSARIFMap(t *testing.T) {
	fixture := filepath.Join(analyzeFixtures, "django-nplus1.otlp.json")
	code, out, errOut := runAnalyzeCaptured(t, "--file", fixture, "--format", "sarif")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if got := strings.Join(sarifURIs(t, out), " "); got != "books" {
		t.Errorf("uris %q, want the service's directory books", got)
	}
	m := writeMap(t, "books: apps/books/views.py\n")
	code, out, errOut = runAnalyzeCaptured(t, "--file", fixture, "--format", "sarif", "--sarif-map", m)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if got := strings.Join(sarifURIs(t, out), " "); got != "apps/books/views.py" {
		t.Errorf("uris %q, want the mapped apps/books/views.py", got)
	}
	code, out, errOut = runCompareCaptured(t, "--baseline", chattyFixed, "--candidate", chattyBaseline, "--format", "sarif", "--sarif-map", writeMap(t, "orders: services/orders\n"))
	if code != exitFail {
		t.Fatalf("compare: exit %d, want 1; stderr %q", code, errOut)
	}
	for _, uri := range sarifURIs(t, out) {
		if uri != "services/orders" {
			t.Errorf("compare: uri %q, want services/orders", uri)
		}
	}
}

// A map that cannot be read or places a service outside the repository is
// bad input: exit 2, one line, before any traces are read.
func TestSARIFMapRejected(t *testing.T) {
	fixture := filepath.Join(analyzeFixtures, "django-nplus1.otlp.json")
	for name, m := range map[string]string{
		"missing":  filepath.Join(t.TempDir(), "none.yaml"),
		"absolute": writeMap(t, "books: /home/runner/work/app/books\n"),
		"parent":   writeMap(t, "books: ../books\n"),
		"list":     writeMap(t, "- books\n"),
	} {
		code, _, errOut := runAnalyzeCaptured(t, "--file", fixture, "--format", "sarif", "--sarif-map", m)
		if code != exitUsage || !strings.Contains(errOut, "--sarif-map") {
			t.Errorf("analyze, %s: exit %d, stderr %q; want 2 naming --sarif-map", name, code, errOut)
		}
		checkOneLine(t, errOut)
		code, _, errOut = runCompareCaptured(t, "--baseline", chattyFixed, "--candidate", chattyBaseline, "--format", "sarif", "--sarif-map", m)
		if code != exitUsage || !strings.Contains(errOut, "--sarif-map") {
			t.Errorf("compare, %s: exit %d, stderr %q; want 2 naming --sarif-map", name, code, errOut)
		}
		checkOneLine(t, errOut)
	}
}
