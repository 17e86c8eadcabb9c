package corpus

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tracelab/pkg/analyze"
	"tracelab/pkg/detect"
)

// Dir is the labelled corpus, relative to this package.
const Dir = "../testdata/corpus"

// TestCorpus runs every tracelab detector on every labelled case: a missed
// label or a finding nobody labelled fails it, one line each.
func TestCorpus(t *testing.T) {
	cases, err := Load(Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatalf("no cases under %s", Dir)
	}
	ids := DetectorIDs()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if err := c.Labels.Validate(ids); err != nil {
				for _, line := range strings.Split(err.Error(), "\n") {
					t.Errorf("%s: labels.yaml: %s", c.Name, line)
				}
				return
			}
			rep, err := c.Analyze()
			if err != nil {
				t.Fatal(err)
			}
			r := Score(c.Labels, FromDetect(rep.Findings))
			for _, l := range r.Missed {
				t.Errorf("%s: missed: %s", c.Name, l)
			}
			for _, f := range r.FalsePositives {
				t.Errorf("%s: false positive: %s", c.Name, f)
			}
		})
	}
}

func TestScore(t *testing.T) {
	labels := Labels{
		Findings: []Label{
			{Detector: "n-plus-one", Service: "catalog", Request: "GET /catalog/summary", Operation: "/prices/{id}", MinCallsPerTrace: 1600},
			{Detector: "chatty-db", Service: "orders"},
			{Detector: "n-plus-one", Service: "books", Operation: `FROM  "books_author"`},
		},
		Absent: []string{"event-loop-blocking"},
	}
	match := Finding{Detector: "n-plus-one", Service: "catalog", Request: "GET /catalog/summary",
		Operation: "GET 127.0.0.1:18081/PRICES/{n}", CallsPerTrace: 1600}
	fewCalls := match
	fewCalls.CallsPerTrace = 1599
	otherRequest := match
	otherRequest.Request = "GET /catalog/other"
	books := Finding{Detector: "n-plus-one", Service: "books", Operation: `postgresql SELECT * FROM "books_author" WHERE id = ?`, CallsPerTrace: 10}
	absent := Finding{Detector: "event-loop-blocking", Service: "catalog", Operation: "GET /prices/{id}"}

	for _, tc := range []struct {
		name          string
		findings      []Finding
		matched       int
		missed        []string // detector/service of the missed labels
		falsePositive []string // detector/service of the false positives
	}{
		{"every label matched, chatty-db missed", []Finding{books, match}, 2, []string{"chatty-db/orders"}, nil},
		{"absent detector reported", []Finding{books, match, absent}, 2, []string{"chatty-db/orders"}, []string{"event-loop-blocking/catalog"}},
		{"request differs", []Finding{books, otherRequest}, 1, []string{"n-plus-one/catalog", "chatty-db/orders"}, []string{"n-plus-one/catalog"}},
		{"too few calls", []Finding{books, fewCalls}, 1, []string{"n-plus-one/catalog", "chatty-db/orders"}, []string{"n-plus-one/catalog"}},
		{"one finding satisfies one label", []Finding{books, books}, 1, []string{"n-plus-one/catalog", "chatty-db/orders"}, []string{"n-plus-one/books"}},
		{"nothing found", nil, 0, []string{"n-plus-one/catalog", "chatty-db/orders", "n-plus-one/books"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Score(labels, tc.findings)
			if len(r.Matched) != tc.matched {
				t.Errorf("matched %d, want %d: %+v", len(r.Matched), tc.matched, r.Matched)
			}
			var missed, fps []string
			for _, l := range r.Missed {
				missed = append(missed, l.Detector+"/"+l.Service)
			}
			for _, f := range r.FalsePositives {
				fps = append(fps, f.Detector+"/"+f.Service)
			}
			if strings.Join(missed, ",") != strings.Join(tc.missed, ",") {
				t.Errorf("missed %v, want %v", missed, tc.missed)
			}
			if strings.Join(fps, ",") != strings.Join(tc.falsePositive, ",") {
				t.Errorf("false positives %v, want %v", fps, tc.falsePositive)
			}
		})
	}
}

// A finding that could satisfy either of two labels goes to the one no
// other finding can satisfy, whatever the order.
func TestScoreTakesTheMostPairs(t *testing.T) {
	labels := Labels{Findings: []Label{
		{Detector: "n-plus-one", Service: "s"},                  // any operation
		{Detector: "n-plus-one", Service: "s", Operation: "/a"}, // only /a
	}}
	a := Finding{Detector: "n-plus-one", Service: "s", Operation: "GET /a"}
	b := Finding{Detector: "n-plus-one", Service: "s", Operation: "GET /b"}
	for _, fs := range [][]Finding{{a, b}, {b, a}} {
		if r := Score(labels, fs); len(r.Matched) != 2 || len(r.Missed)+len(r.FalsePositives) != 0 {
			t.Errorf("findings %v: %+v", fs, r)
		}
	}
}

// A tool that drops hosts from URLs still matches a label that names one;
// the path must still match.
func TestScoreWithoutHost(t *testing.T) {
	labels := Labels{Findings: []Label{{Detector: "n-plus-one", Service: "cart", Operation: "pricing:8080/prices/{id}"}}}
	f := Finding{Detector: "n-plus-one", Service: "cart", Operation: "GET /prices/{id}"}
	if r := Score(labels, []Finding{f}); len(r.Matched) != 0 {
		t.Errorf("a finding without the host matched without NoHost: %+v", r)
	}
	f.NoHost = true
	if r := Score(labels, []Finding{f}); len(r.Matched) != 1 {
		t.Errorf("NoHost: %+v", r)
	}
	f.Operation = "GET /stock/{id}"
	if r := Score(labels, []Finding{f}); len(r.Matched) != 0 {
		t.Errorf("another path matched: %+v", r)
	}
	for in, want := range map[string]string{
		"GET http://pricing:8080/prices/{id}": "GET /prices/{id}",
		"127.0.0.1:18081/prices/{id}":         "/prices/{id}",
		"/prices/{id}":                        "/prices/{id}",
		"from types":                          "from types",
	} {
		if got := withoutHost(in); got != want {
			t.Errorf("withoutHost(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestValidate(t *testing.T) {
	ids := []string{"chatty-db", "n-plus-one", "redundant-call"}
	ok := Labels{Source: "s", Stack: "st", Tuning: HeldOut,
		Findings: []Label{{Detector: "n-plus-one", Service: "x"}}, Absent: []string{"chatty-db", "redundant-call"}}
	if err := ok.Validate(ids); err != nil {
		t.Errorf("valid labels: %v", err)
	}
	for name, tc := range map[string]struct {
		l    Labels
		want string
	}{
		"unlabelled detector": {Labels{Source: "s", Stack: "st", Tuning: Tuned, Findings: ok.Findings, Absent: []string{"chatty-db"}},
			"redundant-call is neither under findings nor absent"},
		"both":           {Labels{Source: "s", Stack: "st", Tuning: Tuned, Findings: ok.Findings, Absent: []string{"chatty-db", "n-plus-one", "redundant-call"}}, "n-plus-one is both"},
		"unknown":        {Labels{Source: "s", Stack: "st", Tuning: Tuned, Findings: []Label{{Detector: "nplus1", Service: "x"}}, Absent: ok.Absent}, `unknown detector "nplus1"`},
		"tuning":         {Labels{Source: "s", Stack: "st", Tuning: "heldout", Findings: ok.Findings, Absent: ok.Absent}, `tuning is "heldout"`},
		"missing source": {Labels{Stack: "st", Tuning: Tuned, Findings: ok.Findings, Absent: ok.Absent}, "source is empty"},
		"missing stack":  {Labels{Source: "s", Tuning: Tuned, Findings: ok.Findings, Absent: ok.Absent}, "stack is empty"},
	} {
		err := tc.l.Validate(ids)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", name, err, tc.want)
		}
	}
}

func TestLoadRejectsUnknownKeys(t *testing.T) {
	dir := t.TempDir()
	if err := writeFile(dir+"/c/labels.yaml", "source: s\ntuning: tuned\nfindings:\n  - detector: n-plus-one\n    servce: x\n"); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(dir+"/c/traces.json", `{"resourceSpans":[]}`); err != nil {
		t.Fatal(err)
	}
	_, err := Load(dir)
	if err == nil || !strings.Contains(err.Error(), "servce") {
		t.Errorf("got %v, want an error naming the unknown key servce", err)
	}
}

func writeFile(path, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(text), 0o644)
}

// TestStreamedAsWhole holds the trace-by-trace reading to the whole-file
// one: on every case, however its file orders its spans, the two reports
// are the same.
func TestStreamedAsWhole(t *testing.T) {
	cases, err := Load(Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		streamed, err := c.Analyze()
		if err != nil {
			t.Fatal(err)
		}
		traces, err := c.Traces()
		if err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(streamed)
		b, _ := json.Marshal(analyze.Analyze(traces, detect.All()))
		if string(a) != string(b) {
			t.Errorf("%s: read trace by trace:\n%s\nread whole:\n%s", c.Name, a, b)
		}
	}
}
