// Package corpus judges pathology detectors on a labelled corpus of traces.
//
// Each case is a folder, testdata/corpus/<case>/, with traces.json (plain
// OTLP JSON) and labels.yaml: the findings a correct reader must report,
// and the detectors that must report nothing. Score compares what a tool
// reported with the labels; it works on a small Finding struct, so the
// findings of another analyzer (perf-sentinel, in corpus/benchdetect) are
// scored by the same code as tracelab's own.
//
// It backs the corpus test (`make test`, `make test-corpus`) and `make
// bench-detect`; in the tracelab binary, training (pkg/train) reads its
// labels to draw offline rounds.
package corpus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"tracelab/pkg/analyze"
	"tracelab/pkg/detect"
	"tracelab/pkg/otlp"
	"tracelab/pkg/trace"
)

// Tuning values: whether any detector threshold was looked at on a case.
const (
	Tuned   = "tuned"
	HeldOut = "held-out"
)

// Case is one labelled folder of the corpus.
type Case struct {
	Name   string // the folder's name
	Dir    string
	Labels Labels
}

// TracesPath is the case's OTLP JSON file.
func (c Case) TracesPath() string { return filepath.Join(c.Dir, "traces.json") }

// Labels is a case's labels.yaml.
type Labels struct {
	Source   string   `yaml:"source"`   // where the traces come from, and the script that records them
	Stack    string   `yaml:"stack"`    // the application stack that emitted them (bench-detect scores per stack)
	Tuning   string   `yaml:"tuning"`   // Tuned or HeldOut
	Findings []Label  `yaml:"findings"` // every finding a correct reader must report
	Absent   []string `yaml:"absent"`   // every detector id not under Findings
}

// Runtime is the language runtime of the case's application, from its
// stack's name: what bench-detect scores per runtime (JVM, Node.js,
// Python, Go); "generated" for the shapes, written span by span.
func (l Labels) Runtime() string {
	switch {
	case l.Stack == "generated":
		return "generated"
	case strings.HasPrefix(l.Stack, "node-"):
		return "Node.js"
	case strings.HasPrefix(l.Stack, "python-"):
		return "Python"
	case strings.HasPrefix(l.Stack, "go-"):
		return "Go"
	}
	return "JVM" // the lab's services, Spring, Quarkus
}

// Label is one expected finding. Empty fields match anything.
type Label struct {
	Detector         string  `yaml:"detector"`
	Service          string  `yaml:"service"`
	Request          string  `yaml:"request"`             // must equal the finding's request
	Operation        string  `yaml:"operation"`           // a substring of the finding's operation (see NormalizeOperation)
	MinCallsPerTrace float64 `yaml:"min_calls_per_trace"` // the finding's calls per trace must be at least this
}

func (l Label) String() string {
	s := l.Detector + " in " + l.Service
	if l.Request != "" {
		s += " for " + l.Request
	}
	if l.Operation != "" {
		s += " on `" + l.Operation + "`"
	}
	if l.MinCallsPerTrace > 0 {
		s += fmt.Sprintf(" (≥ %g calls per trace)", l.MinCallsPerTrace)
	}
	return s
}

// Finding is what Score needs of a tool's finding, whichever tool it is.
type Finding struct {
	Detector      string // a tracelab detector id (another tool's types are mapped to them first)
	Service       string
	Request       string
	Operation     string
	CallsPerTrace float64
	Summary       string // for people reading a failure

	// For another tool's findings; tracelab's leave both false.
	// OperationUnknown: the finding does not name the culprit's operation
	// (perf-sentinel's serialized_calls names a parent instead), so a
	// label's operation is not compared. NoHost: the tool drops the host
	// from URLs (perf-sentinel writes "GET /prices/{id}"), so a label's
	// host[:port] is left out of the comparison.
	OperationUnknown, NoHost bool
}

func (f Finding) String() string {
	req := f.Request
	if req == "" {
		req = "any request"
	}
	return fmt.Sprintf("%s in %s for %s on `%s` (%.4g calls per trace): %s",
		f.Detector, f.Service, req, f.Operation, f.CallsPerTrace, f.Summary)
}

// FromDetect converts tracelab's findings.
func FromDetect(fs []detect.Finding) []Finding {
	out := make([]Finding, len(fs))
	for i, f := range fs {
		out[i] = Finding{Detector: f.Detector, Service: f.Service, Request: f.Request,
			Operation: f.Operation, CallsPerTrace: f.CallsPerTrace, Summary: f.Summary}
	}
	return out
}

// Load reads every case under dir: each subfolder holding labels.yaml and
// traces.json. A folder with neither (record/, the recording scripts) is
// not a case; one with only one of them is an error, so that a case is not
// skipped silently.
func Load(dir string) ([]Case, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var cases []Case
	for _, e := range entries {
		if !e.IsDir() || !exists(filepath.Join(dir, e.Name(), "labels.yaml")) && !exists(filepath.Join(dir, e.Name(), "traces.json")) {
			continue
		}
		c, err := LoadCase(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		cases = append(cases, c)
	}
	return cases, nil
}

// LoadCase reads one case's labels.yaml and checks that traces.json exists.
// Unknown fields in labels.yaml are errors: a misspelt key would otherwise
// drop a label without a word.
func LoadCase(dir string) (Case, error) {
	c := Case{Name: filepath.Base(dir), Dir: dir}
	f, err := os.Open(filepath.Join(dir, "labels.yaml"))
	if err != nil {
		return c, fmt.Errorf("case %s: %w", c.Name, err)
	}
	defer f.Close()
	dec := yaml.NewDecoder(f)
	dec.KnownFields(true)
	if err := dec.Decode(&c.Labels); err != nil {
		return c, fmt.Errorf("case %s: labels.yaml: %w", c.Name, err)
	}
	if _, err := os.Stat(c.TracesPath()); err != nil {
		return c, fmt.Errorf("case %s: %w", c.Name, err)
	}
	return c, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// DetectorIDs are the ids of every registered tracelab detector.
func DetectorIDs() []string {
	var ids []string
	for _, d := range detect.All() {
		ids = append(ids, d.ID())
	}
	return ids
}

// Validate checks labels against the detector ids: every id named exists,
// and every id is either under findings or absent, never both. A new
// detector therefore fails validation until every case says what it
// should find.
func (l Labels) Validate(ids []string) error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if strings.TrimSpace(l.Source) == "" {
		bad("source is empty: say where the traces come from")
	}
	if strings.TrimSpace(l.Stack) == "" {
		bad("stack is empty: name the application stack, such as python-django")
	}
	if l.Tuning != Tuned && l.Tuning != HeldOut {
		bad("tuning is %q, want %s or %s", l.Tuning, Tuned, HeldOut)
	}
	found := map[string]bool{}
	for i, f := range l.Findings {
		if !slices.Contains(ids, f.Detector) {
			bad("findings[%d]: unknown detector %q (known: %s)", i, f.Detector, strings.Join(ids, ", "))
		}
		if f.Service == "" {
			bad("findings[%d]: service is empty", i)
		}
		found[f.Detector] = true
	}
	absent := map[string]bool{}
	for _, id := range l.Absent {
		switch {
		case !slices.Contains(ids, id):
			bad("absent: unknown detector %q (known: %s)", id, strings.Join(ids, ", "))
		case absent[id]:
			bad("absent: %s is listed twice", id)
		case found[id]:
			bad("%s is both under findings and absent", id)
		}
		absent[id] = true
	}
	for _, id := range ids {
		if !found[id] && !absent[id] {
			bad("detector %s is neither under findings nor absent: label it", id)
		}
	}
	return errors.Join(errs...)
}

// Analyze runs every tracelab detector on the case's traces, read trace
// by trace as `tracelab analyze --file` reads them.
func (c Case) Analyze() (analyze.Report, error) {
	var an *analyze.Analyzer
	err := otlp.StreamFile(context.Background(), c.TracesPath(), otlp.Limits{}, func() func([]*trace.Trace) {
		an = analyze.NewAnalyzer(detect.All())
		return an.Add
	})
	if err != nil {
		return analyze.Report{}, fmt.Errorf("case %s: %w", c.Name, err)
	}
	return an.Report(), nil
}

// Traces parses the case's traces.json.
func (c Case) Traces() ([]*trace.Trace, error) {
	f, err := os.Open(c.TracesPath())
	if err != nil {
		return nil, err
	}
	defer f.Close()
	traces, err := otlp.ParseReader(f)
	if err != nil {
		return nil, fmt.Errorf("case %s: %w", c.Name, err)
	}
	return traces, nil
}

// Result is how a tool's findings compare with a case's labels.
type Result struct {
	Matched        []Match   // true positives
	Missed         []Label   // false negatives
	FalsePositives []Finding // findings that match no label
}

// Match pairs a label with the finding that satisfies it.
type Match struct {
	Label   Label
	Finding Finding
}

// Matches says whether finding f satisfies label l.
func Matches(l Label, f Finding) bool {
	if l.Detector != f.Detector || l.Service != f.Service {
		return false
	}
	if l.Request != "" && l.Request != f.Request {
		return false
	}
	if op := l.Operation; op != "" && !f.OperationUnknown {
		if f.NoHost {
			op = withoutHost(op)
		}
		if !strings.Contains(NormalizeOperation(f.Operation), NormalizeOperation(op)) {
			return false
		}
	}
	return f.CallsPerTrace >= l.MinCallsPerTrace
}

// hostPrefix is a URL's scheme and authority at the start of a word:
// "http://pricing:8080/", "pricing:8080/", "127.0.0.1:18081/".
var hostPrefix = regexp.MustCompile(`(^|\s)([a-z][a-z0-9+.-]*://)?[^\s/]*[.:][^\s/]*/`)

// withoutHost drops the host[:port] of the URLs in an operation.
func withoutHost(op string) string {
	return hostPrefix.ReplaceAllString(op, "$1/")
}

var (
	spaces       = regexp.MustCompile(`\s+`)
	placeholders = regexp.MustCompile(`\{[^{}\s]*\}|\$(\d+|\?)`)
)

// NormalizeOperation makes operations comparable across tools: lower case,
// runs of white space as one space, and every placeholder ({id}, {ownerId},
// $1, perf-sentinel's $?, ?) written as ?.
func NormalizeOperation(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = spaces.ReplaceAllString(s, " ")
	return placeholders.ReplaceAllString(s, "?")
}

// Score compares a tool's findings with a case's labels. Each finding
// satisfies at most one label and each label takes at most one finding;
// among the ways to pair them, Score takes one with the most pairs, so the
// order of the findings does not decide the outcome. Findings left over
// are false positives: a finding of a detector labelled absent, or of a
// labelled detector but matching none of its labels.
func Score(l Labels, fs []Finding) Result {
	labelOf := make([]int, len(fs)) // finding index -> label index, or -1
	for i := range labelOf {
		labelOf[i] = -1
	}
	// Kuhn's augmenting paths: give label li a finding, moving the
	// label that holds it to another finding if that one can move.
	var assign func(li int, seen []bool) bool
	assign = func(li int, seen []bool) bool {
		for fi, f := range fs {
			if seen[fi] || !Matches(l.Findings[li], f) {
				continue
			}
			seen[fi] = true
			if labelOf[fi] < 0 || assign(labelOf[fi], seen) {
				labelOf[fi] = li
				return true
			}
		}
		return false
	}
	var r Result
	matched := make([]bool, len(l.Findings))
	for li := range l.Findings {
		matched[li] = assign(li, make([]bool, len(fs)))
	}
	for li, lab := range l.Findings {
		if !matched[li] {
			r.Missed = append(r.Missed, lab)
		}
	}
	for fi, f := range fs {
		if li := labelOf[fi]; li >= 0 {
			r.Matched = append(r.Matched, Match{l.Findings[li], f})
		} else {
			r.FalsePositives = append(r.FalsePositives, f)
		}
	}
	return r
}
