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

// sarifRepo is a repository for --repo: the mapped file and a README.
func sarifRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range map[string]string{"apps/books/views.py": "def books(request):\n    pass\n", "services/orders/pom.xml": "", "README.md": "# app\n"} {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// --sarif-map places each service's results at its path in the
// repository --repo names; without it, results whose spans name no code
// sit at the repository's README, not at a directory named after the
// service.
func TestSARIFMap(t *testing.T) {
	fixture := filepath.Join(analyzeFixtures, "django-nplus1.otlp.json")
	repo := sarifRepo(t)
	code, out, errOut := runAnalyzeCaptured(t, "--file", fixture, "--format", "sarif", "--repo", repo)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if got := strings.Join(sarifURIs(t, out), " "); got != "README.md" {
		t.Errorf("uris %q, want the repository's README.md", got)
	}
	m := writeMap(t, "books: apps/books/views.py#books\n")
	code, out, errOut = runAnalyzeCaptured(t, "--file", fixture, "--format", "sarif", "--sarif-map", m, "--repo", repo)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if got := strings.Join(sarifURIs(t, out), " "); got != "apps/books/views.py" {
		t.Errorf("uris %q, want the mapped apps/books/views.py", got)
	}
	code, out, errOut = runCompareCaptured(t, "--baseline", chattyFixed, "--candidate", chattyBaseline, "--format", "sarif", "--sarif-map", writeMap(t, "orders: services/orders\n"), "--repo", repo)
	if code != exitFail {
		t.Fatalf("compare: exit %d, want 1; stderr %q", code, errOut)
	}
	for _, uri := range sarifURIs(t, out) {
		if uri != "services/orders" {
			t.Errorf("compare: uri %q, want services/orders", uri)
		}
	}
	// A repository without a README leaves such results with no file, and
	// says so: GitHub would refuse the upload.
	code, out, errOut = runAnalyzeCaptured(t, "--file", fixture, "--format", "sarif", "--repo", filepath.Join(repo, "apps"))
	if code != exitOK || strings.Join(sarifURIs(t, out), " ") != "" || !strings.Contains(errOut, "1 SARIF results have no file") {
		t.Errorf("no README: exit %d, uris %q, stderr %q", code, sarifURIs(t, out), errOut)
	}
}

// Run at the lab's root with the lab's map, analyze places catalog's N+1
// on PriceFetcher.oneCallPerItem, the loop that makes the calls.
func TestSARIFOfTheLab(t *testing.T) {
	root := filepath.Join("..", "..")
	code, out, errOut := runAnalyzeCaptured(t, "--file", nplus1Baseline, "--format", "sarif", "--repo", root, "--sarif-map", filepath.Join(root, "services", "sarif-map.yaml"))
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if got := strings.Join(sarifURIs(t, out), " "); got != "services/catalog/src/main/java/dev/tracelab/catalog/PriceFetcher.java" {
		t.Errorf("uris %q, want catalog's PriceFetcher.java", got)
	}
}

// A map that cannot be read or places a service outside the repository is
// bad input: exit 2, one line, before any traces are read.
func TestSARIFMapRejected(t *testing.T) {
	fixture := filepath.Join(analyzeFixtures, "django-nplus1.otlp.json")
	repo := sarifRepo(t)
	for name, m := range map[string]string{
		"missing":  filepath.Join(t.TempDir(), "none.yaml"),
		"absolute": writeMap(t, "books: /home/runner/work/app/books\n"),
		"parent":   writeMap(t, "books: ../books\n"),
		"list":     writeMap(t, "- books\n"),
		// Paths and functions the repository does not have.
		"no such file":     writeMap(t, "books: apps/books/view.py\n"),
		"no such function": writeMap(t, "books: apps/books/views.py#authors\n"),
	} {
		code, _, errOut := runAnalyzeCaptured(t, "--file", fixture, "--format", "sarif", "--sarif-map", m, "--repo", repo)
		if code != exitUsage || !strings.Contains(errOut, "--sarif-map") {
			t.Errorf("analyze, %s: exit %d, stderr %q; want 2 naming --sarif-map", name, code, errOut)
		}
		checkOneLine(t, errOut)
		code, _, errOut = runCompareCaptured(t, "--baseline", chattyFixed, "--candidate", chattyBaseline, "--format", "sarif", "--sarif-map", m, "--repo", repo)
		if code != exitUsage || !strings.Contains(errOut, "--sarif-map") {
			t.Errorf("compare, %s: exit %d, stderr %q; want 2 naming --sarif-map", name, code, errOut)
		}
		checkOneLine(t, errOut)
	}
}
