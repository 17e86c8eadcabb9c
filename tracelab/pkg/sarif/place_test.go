package sarif

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tracelab/internal/corpustest"
	"tracelab/internal/repotest"
	"tracelab/pkg/analyze"
	"tracelab/pkg/detect"
	"tracelab/pkg/trace"
)

// labPlacer places results in the lab's own repository with the lab's
// own map, as `tracelab analyze --format sarif --sarif-map
// services/sarif-map.yaml` run at its root does.
func labPlacer(t *testing.T) *Placer {
	t.Helper()
	root := repotest.Root(t)
	repo, err := OpenRepo(root)
	if err != nil {
		t.Fatal(err)
	}
	paths, err := LoadPaths(filepath.Join(root, "services", "sarif-map.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pl, err := NewPlacer(repo, paths)
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

// Every result of the lab's recorded smoke runs (the corpus's lab-* cases,
// committed) names a file of this repository that exists, at the line
// that declares the method that made the spans: read from the file, not
// from this test. Where the spans name the code (orders: Quarkus's
// code.function.name on the handler's server span) it comes from them;
// where they name none (catalog, ingest, gateway) from the lab's map.
func TestLabResultsLandOnTheMethodThatMadeTheSpans(t *testing.T) {
	pl := labPlacer(t)
	for _, tc := range []struct {
		cases     []string
		file      string // repository path
		method    string
		placement string
	}{
		{[]string{"lab-nplus1-baseline"}, "services/catalog/src/main/java/dev/tracelab/catalog/PriceFetcher.java", "oneCallPerItem", PlacedByMap},
		{[]string{"lab-chatty-db-baseline", "lab-eventloop-baseline"}, "services/orders/src/main/java/dev/tracelab/orders/OrdersResource.java", "create", PlacedAtCode},
		{[]string{"lab-kafka-batching-baseline"}, "services/ingest/src/main/java/dev/tracelab/ingest/EventPublisher.java", "publish", PlacedByMap},
		{[]string{"lab-antpath-baseline", "lab-antpath-virtual-threads"}, "services/gateway/src/main/java/dev/tracelab/gateway/PathMatching.java", "postProcessEnvironment", PlacedByMap},
	} {
		for _, name := range tc.cases {
			t.Run(name, func(t *testing.T) {
				l := FromReport(analyzeCase(t, name), IDs(detect.All()), pl)
				if len(l.Runs[0].Results) == 0 {
					t.Fatal("no results; the scenario's baseline has a pathology")
				}
				for _, r := range l.Runs[0].Results {
					checkLanded(t, pl.Repo.Root, r, tc.file, tc.method, tc.placement)
				}
				checkUploadable(t, encodeLog(t, l))
			})
		}
	}
	// A comparison's resolved finding is placed as the finding was.
	c := compareCases(t, "lab-nplus1-baseline", "lab-nplus1-fixed")
	l := FromComparison(c, IDs(detect.All()), 0.10, pl)
	if len(l.Runs[0].Results) == 0 {
		t.Fatal("comparison: no results")
	}
	for _, r := range l.Runs[0].Results {
		checkLanded(t, pl.Repo.Root, r, "services/catalog/src/main/java/dev/tracelab/catalog/PriceFetcher.java", "oneCallPerItem", PlacedByMap)
	}
}

// checkLanded fails t unless r sits in file, which exists under root, at
// a line that declares method.
func checkLanded(t *testing.T, root string, r Result, file, method, placement string) {
	t.Helper()
	phys := r.Locations[0].PhysicalLocation
	if phys == nil {
		t.Fatalf("%s: no physical location", r.RuleID)
	}
	uri, line := phys.ArtifactLocation.URI, phys.Region.StartLine
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(uri)))
	if err != nil {
		t.Fatalf("%s: placed at %s, which cannot be read: %v", r.RuleID, uri, err)
	}
	if uri != file || r.Properties["placement"] != placement {
		t.Errorf("%s: at %s:%d by %v, want %s by %s", r.RuleID, uri, line, r.Properties["placement"], file, placement)
	}
	lines := strings.Split(string(data), "\n")
	if line < 1 || line > len(lines) {
		t.Fatalf("%s: line %d of %s, which has %d", r.RuleID, line, uri, len(lines))
	}
	if text := lines[line-1]; !strings.Contains(text, " "+method+"(") || strings.HasSuffix(strings.TrimSpace(text), ";") {
		t.Errorf("%s: %s:%d is %q, not the declaration of %s", r.RuleID, uri, line, text, method)
	}
}

// testRepo writes files (path: content) under a new directory.
func testRepo(t *testing.T, files map[string]string) *Repo {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	repo, err := OpenRepo(root)
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

const javaHandler = `package com.acme.shop;

class Handler {
    private final Repo repo;

    Handler(Repo repo) { this.repo = repo; }

    @GetMapping("/items")
    public List<Item> items() {
        return load(ids());
    }

    private static <T> List<T> load(List<Long> ids) {
        List<T> out = new ArrayList<>();
        for (long id : ids) {
            out.add(repo.load(id));
        }
        return out;
    }
}
`

func TestLocate(t *testing.T) {
	repo := testRepo(t, map[string]string{
		"shop/src/main/java/com/acme/shop/Handler.java": javaHandler,
		"web/app/views.py":              "import x\n\n\nasync def get_user(request):\n    return x\n",
		"a/util.go":                     "package a\n\nfunc (s *S) Load(id int) error {\n\treturn nil\n}\n",
		"b/util.go":                     "package b\n",
		"jobs/src/com/acme/Twice.java":  "class Twice {}\n",
		"other/src/com/acme/Twice.java": "class Twice {}\n",
		"README.md":                     "# shop\n",
	})
	for _, tc := range []struct {
		name string
		code trace.Code
		want Where // zero: not placed
	}{
		{"stable code.function.name", trace.Code{Function: "com.acme.shop.Handler.items"}, Where{"shop/src/main/java/com/acme/shop/Handler.java", 9}},
		{"a generic method, not its calls", trace.Code{Function: "com.acme.shop.Handler.load"}, Where{"shop/src/main/java/com/acme/shop/Handler.java", 13}},
		{"an inner class's method, in the outer class's file", trace.Code{Function: "com.acme.shop.Handler$1.items"}, Where{"shop/src/main/java/com/acme/shop/Handler.java", 9}},
		{"a method the file does not declare: its class", trace.Code{Function: "com.acme.shop.Handler.findAll"}, Where{"shop/src/main/java/com/acme/shop/Handler.java", 3}},
		{"a Python module's function", trace.Code{Function: "web.app.views.get_user"}, Where{"web/app/views.py", 4}},
		{"an absolute file path, matched by its end, at the recorded line", trace.Code{File: "/srv/build/web/app/views.py", Line: 5, Function: "get_user"}, Where{"web/app/views.py", 5}},
		{"a file path without a line: the function's declaration", trace.Code{File: "/go/src/example.com/x/a/util.go", Function: "example.com/x/a.(*S).Load"}, Where{"a/util.go", 3}},
		{"a line past the file's end: the declaration", trace.Code{File: "app/views.py", Line: 99, Function: "get_user"}, Where{"web/app/views.py", 4}},
		{"a file name two files have, nothing else to tell them apart", trace.Code{File: "util.go"}, Where{}},
		{"a class two modules have", trace.Code{Function: "com.acme.Twice.run"}, Where{}},
		{"a class the repository does not have", trace.Code{Function: "org.other.Thing.run"}, Where{}},
		{"a file the repository does not have", trace.Code{File: "/app/main.rb", Line: 3}, Where{}},
	} {
		got, ok := repo.Locate(tc.code)
		if want := tc.want != (Where{}); ok != want || got != tc.want {
			t.Errorf("%s: Locate(%+v) = %+v, %v; want %+v", tc.name, tc.code, got, ok, tc.want)
		}
	}
}

// A JVM method's declaration, not a call of it, nor a statement.
func TestDeclarer(t *testing.T) {
	is := declarer("create")
	for _, line := range []string{
		"    public Uni<RestResponse<Order>> create(NewOrder order) {",
		"    Order create(Customer c, NewOrder o);",
		"  private static <T> List<T> create (List<Long> ids) {",
		"    fun create(order: NewOrder): Order {",
		"    def create(self, order):",
		"func (h *Handler) create(w http.ResponseWriter) {",
		"function create(req, res) {",
	} {
		if !is(line) {
			t.Errorf("%q: not read as declaring create", line)
		}
	}
	for _, line := range []string{
		"        return create(order);",
		"        Order o = create(order);",
		"        writer.create(customer, order);",
		"        create(order);",
		"        throw create(e);",
		"        case BATCH -> create(ids);",
		"    // create(order) is called per request",
		"    Order createAll(List<NewOrder> orders) {",
	} {
		if is(line) {
			t.Errorf("%q: read as declaring create", line)
		}
	}
}

// The user's map is checked against the repository: a path that does not
// exist, or a #function its file does not declare, is an error naming the
// service; a good one places the service's results, at the function.
func TestPlacerChecksTheMap(t *testing.T) {
	repo := testRepo(t, map[string]string{"shop/Handler.java": javaHandler})
	for name, tc := range map[string]struct {
		paths Paths
		want  string
	}{
		"missing file":          {Paths{"shop": "shop/Handlr.java"}, `service "shop": shop/Handlr.java does not exist in the repository at`},
		"missing directory":     {Paths{"shop": "services/shop"}, `service "shop": services/shop does not exist`},
		"function not declared": {Paths{"shop": "shop/Handler.java#checkout"}, `service "shop": shop/Handler.java declares no function checkout`},
		"function of a folder":  {Paths{"shop": "shop#items"}, `service "shop": shop is a directory`},
	} {
		_, err := NewPlacer(repo, tc.paths)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v; want one line with %q", name, err, tc.want)
		}
	}
	pl, err := NewPlacer(repo, Paths{"shop": "shop/Handler.java#load", "web": "shop"})
	if err != nil {
		t.Fatal(err)
	}
	for service, want := range map[string]Where{"shop": {"shop/Handler.java", 13}, "web": {"shop", 1}} {
		phys, how := pl.place(service, nil)
		if phys == nil || phys.ArtifactLocation.URI != want.Path || phys.Region.StartLine != want.Line || how != PlacedByMap {
			t.Errorf("%s: placed at %+v by %s, want %+v by the map", service, phys, how, want)
		}
	}
}

// A finding whose spans name no code and whose service the map does not
// name sits at the repository's README, a file that exists, never at a
// path made up from the service's name; without a README it has no
// physical location, and Unplaced counts it.
func TestRepositoryLevelResults(t *testing.T) {
	f := detect.Finding{Detector: "n-plus-one", Service: "books", Request: "GET /books", Operation: "SELECT books", TracesAffected: 1, Summary: "s"}
	for _, tc := range []struct {
		files    map[string]string
		uri      string
		unplaced int
	}{
		{map[string]string{"README.md": "# x\n", "readme.txt": "x\n", "books/views.py": "x\n"}, "README.md", 0},
		{map[string]string{"Readme.rst": "x\n"}, "Readme.rst", 0},
		{map[string]string{"books/views.py": "x\n", "docs/README.md": "x\n"}, "", 1},
	} {
		pl, err := NewPlacer(testRepo(t, tc.files), nil)
		if err != nil {
			t.Fatal(err)
		}
		l := FromReport(analyze.Report{Findings: []detect.Finding{f}}, IDs(detect.All()), pl)
		r := l.Runs[0].Results[0]
		uri := ""
		if p := r.Locations[0].PhysicalLocation; p != nil {
			uri = p.ArtifactLocation.URI
		}
		if uri != tc.uri || Unplaced(l) != tc.unplaced || r.Properties["placement"] != PlacedInRepository || len(r.Locations[0].LogicalLocations) != 1 {
			t.Errorf("repository %v: at %q (%d unplaced, placement %v), want %q (%d)", tc.files, uri, Unplaced(l), r.Properties["placement"], tc.uri, tc.unplaced)
		}
	}
}

// Findings of the recorded applications whose code this repository does
// not hold (PetClinic's repository spans name Spring Data interfaces) are
// placed at the repository level, not at a guessed file.
func TestCodeOutsideTheRepositoryIsNotGuessed(t *testing.T) {
	pl := labPlacer(t)
	r := analyze.Analyze(corpustest.Traces(t, "petclinic-batch-off"), detect.All())
	named := 0
	for _, f := range r.Findings {
		if f.Code != nil {
			named++
		}
	}
	if named == 0 {
		t.Fatal("no PetClinic finding names its code; the test needs some")
	}
	for _, res := range FromReport(r, IDs(detect.All()), pl).Runs[0].Results {
		if uri := res.Locations[0].PhysicalLocation.ArtifactLocation.URI; uri != "README.md" || res.Properties["placement"] != PlacedInRepository {
			t.Errorf("%s: at %s by %v, want the README by repository", res.RuleID, uri, res.Properties["placement"])
		}
	}
}
