package sarif

import (
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"tracelab/pkg/analyze"
	"tracelab/pkg/detect"
)

func TestParsePaths(t *testing.T) {
	want := Paths{"checkout": "services/checkout/src/Main.java#checkout", "payment": "services/payment", "geo:eu": "geo"}
	for name, doc := range map[string]string{
		"yaml": "checkout: services/checkout/src/Main.java#checkout\npayment: services/payment/\n\"geo:eu\": ./geo\n",
		"json": "{\n\t\"checkout\": \"services/checkout/src/Main.java#checkout\",\n\t\"payment\": \"services/payment/\",\n\t\"geo:eu\": \"geo\"\n}\n",
	} {
		p, err := ParsePaths([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(p, want) {
			t.Errorf("%s: %v, want %v", name, p, want)
		}
	}
}

// A path code scanning could not place, or a file that is not a mapping,
// is an error of one line that says what to write instead.
func TestParsePathsRejects(t *testing.T) {
	for name, doc := range map[string]string{
		"absolute":      "checkout: /home/runner/work/app/checkout",
		"file URI":      "checkout: file:///home/runner/work/app/checkout",
		"https URI":     "checkout: https://github.com/acme/app/tree/main/checkout",
		"windows drive": `checkout: 'C:\app\checkout'`,
		"backslash":     `checkout: 'services\checkout'`,
		"parent":        "checkout: ../other/checkout",
		"parent inside": "checkout: services/../../checkout",
		"root":          "checkout: .",
		"empty path":    "checkout: ''",
		"null path":     "checkout:",
		"nested":        "checkout:\n  path: services/checkout",
		"list":          "- checkout\n- payment",
		"empty file":    "",
		"duplicate":     "checkout: a\ncheckout: b",
		"not yaml":      "{checkout: [",
		"no function":   "checkout: services/checkout/Main.java#",
		"call":          "checkout: services/checkout/Main.java#checkout()",
	} {
		_, err := ParsePaths([]byte(doc))
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: the error is more than one line: %q", name, err)
		}
	}
}

func TestLoadPaths(t *testing.T) {
	if p, err := LoadPaths(""); err != nil || p != nil {
		t.Errorf("no file: %v, %v; want no mapping and no error", p, err)
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "paths.yaml")
	if err := os.WriteFile(f, []byte("checkout: services/checkout\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := LoadPaths(f); err != nil || p["checkout"] != "services/checkout" {
		t.Errorf("%v, %v", p, err)
	}
	for _, bad := range []string{filepath.Join(dir, "missing.yaml"), dir} {
		if _, err := LoadPaths(bad); err == nil || !strings.Contains(err.Error(), bad) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v; want one line naming the file", bad, err)
		}
	}
}

// A path becomes a relative URI reference that reads back as the path: a
// colon cannot turn into a scheme, nor a space or "#" end the path.
func TestPathURI(t *testing.T) {
	for _, p := range []string{"services/checkout", "geo:eu/Main.java", "a b/c#d?e", "ünï/code.py", "50%/x"} {
		uri := pathURI(p)
		u, err := url.Parse(uri)
		if err != nil || u.Scheme != "" || u.Host != "" || u.RawQuery != "" || u.Fragment != "" {
			t.Errorf("%q -> %q: %+v, %v; want a plain relative path", p, uri, u, err)
			continue
		}
		if u.Path != p {
			t.Errorf("%q -> %q reads back as %q", p, uri, u.Path)
		}
	}
}

func TestRequestService(t *testing.T) {
	repo := testRepo(t, map[string]string{"geo/a.go": "", "geo-all/b.go": ""})
	p, err := NewPlacer(repo, Paths{"geo eu": "geo", "geo": "geo-all"})
	if err != nil {
		t.Fatal(err)
	}
	for req, want := range map[string]string{
		"geo eu GET /x":      "geo eu",
		"geo GET /x":         "geo",
		"catalog GET /items": "catalog",
		"catalog":            "catalog",
	} {
		if got := p.requestService(req); got != want {
			t.Errorf("requestService(%q) = %q, want %q", req, got, want)
		}
	}
}

// Each result sits at its service's mapped path, or, for a service the
// map does not name and whose spans name no code, at the repository's
// README, relative to %SRCROOT%, and keeps its logical location.
func TestResultsArePlaced(t *testing.T) {
	r := analyzeCase(t, "lab-nplus1-baseline")
	// No corpus case has findings in two services; a second one is the
	// first finding moved to another service.
	other := r.Findings[0]
	other.Service = "payment"
	r.Findings = append(r.Findings, other)
	mapped := r.Findings[0].Service
	repo := testRepo(t, map[string]string{"cmd/" + mapped + "/main.go": "package main\n", "README.md": "# x\n"})
	pl, err := NewPlacer(repo, Paths{mapped: "cmd/" + mapped + "/main.go"})
	if err != nil {
		t.Fatal(err)
	}
	l := FromReport(r, IDs(detect.All()), pl)
	for i, res := range l.Runs[0].Results {
		f := r.Findings[i]
		loc := res.Locations[0]
		want, how := "README.md", PlacedInRepository
		if f.Service == mapped {
			want, how = "cmd/"+mapped+"/main.go", PlacedByMap
		}
		phys := loc.PhysicalLocation
		if phys == nil || phys.ArtifactLocation.URI != pathURI(want) || phys.ArtifactLocation.URIBaseID != SourceRoot || phys.Region.StartLine != 1 || res.Properties["placement"] != how {
			t.Errorf("result %d (%s): physical location %+v by %v, want %q at line 1 of %s by %s", i, f.Service, phys, res.Properties["placement"], want, SourceRoot, how)
		}
		if len(loc.LogicalLocations) != 1 || loc.LogicalLocations[0].Kind != "member" {
			t.Errorf("result %d: logical locations %+v, want the operation", i, loc.LogicalLocations)
		}
	}
	if _, ok := l.Runs[0].OriginalURIBaseIDs[SourceRoot]; !ok {
		t.Errorf("run.originalUriBaseIds does not describe %s", SourceRoot)
	}
}

// A regression is placed at the service that serves the request type:
// its mapped path, or the repository's README.
func TestRegressionIsPlaced(t *testing.T) {
	c := compareCases(t, "lab-chatty-db-fixed", "lab-chatty-db-baseline")
	repo := testRepo(t, map[string]string{"services/orders/pom.xml": "", "README.md": ""})
	for paths, want := range map[string]string{"": "README.md", "services/orders": "services/orders"} {
		pl, err := NewPlacer(repo, Paths{"orders": paths})
		if paths == "" {
			pl, err = NewPlacer(repo, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		l := FromComparison(c, IDs(detect.All()), 0.10, pl)
		n := 0
		for _, res := range l.Runs[0].Results {
			if res.RuleID != RegressionRule {
				continue
			}
			n++
			if got := res.Locations[0].PhysicalLocation.ArtifactLocation.URI; got != want {
				t.Errorf("regression of %v at %q, want %q", res.Properties["request"], got, want)
			}
		}
		if n == 0 {
			t.Fatal("no regression; the case should have one")
		}
	}
}

// GitHub matches alerts by primaryLocationLineHash: the same finding keeps
// it whatever its numbers, and findings placed at one path do not share it.
func TestLineHash(t *testing.T) {
	form := regexp.MustCompile(`^[0-9a-f]{16}:1$`)
	f := detect.Finding{Detector: "n-plus-one", Service: "s", Request: "GET /a", Operation: "SELECT x", ShareOfCriticalPath: 0.2, Summary: "one"}
	g := f
	g.ShareOfCriticalPath, g.TracesAffected, g.CallsPerTrace, g.Summary = 0.7, 9, 12, "two"
	h := f
	h.Operation = "SELECT y"
	pl, err := NewPlacer(testRepo(t, map[string]string{"README.md": ""}), nil)
	if err != nil {
		t.Fatal(err)
	}
	l := FromReport(analyze.Report{Findings: []detect.Finding{f, g, h}}, IDs(detect.All()), pl)
	hashes := []string{}
	for _, res := range l.Runs[0].Results {
		hash := res.PartialFingerprints[LineHashKey]
		if !form.MatchString(hash) {
			t.Errorf("%s %q is not in the upload action's hash:occurrence form", LineHashKey, hash)
		}
		hashes = append(hashes, hash)
	}
	if hashes[0] != hashes[1] {
		t.Error("the line hash changes with the numbers; it must not")
	}
	if hashes[0] == hashes[2] {
		t.Error("two findings at one path share a line hash; GitHub would merge their alerts")
	}
}
