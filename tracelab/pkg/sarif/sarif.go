// Package sarif encodes an analysis report as SARIF 2.1.0, the format CI
// systems and code-scanning tools read findings from.
//
// Where a finding is has two parts in its one location. The logical part
// is a hierarchy kept in run.logicalLocations of the service that makes
// the calls (kind "module"), the request type it makes them in (kind
// "function") and the culprit operation (kind "member"), whose
// fullyQualifiedName is "service request operation". The physical part is
// a file of the user's repository, relative to its root (uriBaseId
// %SRCROOT%), at a line: the code that made the spans where their
// OpenTelemetry code attributes name it, else the user's map, else the
// repository's README (Placer says why). The result's "placement"
// property says which.
//
// Each rule is a detector id; a result's level is "error" when the finding
// takes at least half of the request's critical path (ErrorShare),
// "warning" otherwise. The numbers a reader needs to weigh a finding go in
// its properties, and partial fingerprints of detector, service, request
// and operation let a code-scanning tool match the same finding across
// runs.
package sarif

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"strings"

	"tracelab/pkg/analyze"
	"tracelab/pkg/compare"
	"tracelab/pkg/detect"
)

// SchemaURI and Version name the SARIF version a Log is written in.
const (
	SchemaURI = "https://json.schemastore.org/sarif-2.1.0.json"
	Version   = "2.1.0"
)

// ErrorShare is the share of the critical path from which a finding is an
// "error" rather than a "warning": at half the request's time, the
// pathology is most of what the request pays.
const ErrorShare = 0.5

// FingerprintKey is the partialFingerprints key of a result. Bump its
// version if what the hash covers ever changes, so tools do not match old
// and new fingerprints.
const FingerprintKey = "tracelabFinding/v1"

// LineHashKey is the one partialFingerprints key GitHub code scanning
// reads. Left out, its upload action would hash line 1 of the file the
// result is placed at, the same for every finding placed there, and
// GitHub would merge them; so tracelab fills it with the finding's own
// identity, in the action's "hash:occurrence" form.
const LineHashKey = "primaryLocationLineHash"

// SourceRoot is the uriBaseId of every artifact location: the root of the
// repository the SARIF is uploaded to, which the consumer knows and
// tracelab does not.
const SourceRoot = "%SRCROOT%"

// Log is a SARIF log file, with the parts of the format tracelab fills in.
type Log struct {
	Schema  string `json:"$schema"`
	Version string `json:"version"`
	Runs    []Run  `json:"runs"`
}

// Run is one run of tracelab over a set of traces.
type Run struct {
	Tool               Tool                    `json:"tool"`
	OriginalURIBaseIDs map[string]BaseLocation `json:"originalUriBaseIds,omitempty"`
	LogicalLocations   []LogicalLocation       `json:"logicalLocations,omitempty"`
	Results            []Result                `json:"results"`
}

// BaseLocation describes a uriBaseId. Without a uri, it says the consumer
// resolves it (SARIF 2.1.0 §3.14.14).
type BaseLocation struct {
	Description Message `json:"description"`
}

// Tool describes tracelab and its rules.
type Tool struct {
	Driver Driver `json:"driver"`
}

// Driver is the tool component that produced the results.
type Driver struct {
	Name           string `json:"name"`
	InformationURI string `json:"informationUri,omitempty"`
	Rules          []Rule `json:"rules"`
}

// Rule (a SARIF reportingDescriptor) is one detector.
type Rule struct {
	ID                   string         `json:"id"`
	ShortDescription     Message        `json:"shortDescription"`
	FullDescription      Message        `json:"fullDescription"`
	Help                 Message        `json:"help"`
	DefaultConfiguration Configuration  `json:"defaultConfiguration"`
	Properties           RuleProperties `json:"properties"`
}

// RuleProperties are what code scanning filters rules by.
type RuleProperties struct {
	Tags []string `json:"tags"`
}

// Configuration is a rule's default reporting configuration.
type Configuration struct {
	Level string `json:"level"`
}

// Message is a plain-text SARIF message.
type Message struct {
	Text string `json:"text"`
}

// Result is one finding.
type Result struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             Message           `json:"message"`
	Locations           []Location        `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	BaselineState       string            `json:"baselineState,omitempty"`
	Properties          map[string]any    `json:"properties"`
}

// Location is where a result was found: a place in the repository, and
// the service, request and operation in the traces.
type Location struct {
	PhysicalLocation *PhysicalLocation `json:"physicalLocation,omitempty"`
	LogicalLocations []LogicalLocation `json:"logicalLocations,omitempty"`
}

// PhysicalLocation is a file or directory of the repository, at a line.
type PhysicalLocation struct {
	ArtifactLocation ArtifactLocation `json:"artifactLocation"`
	Region           Region           `json:"region"`
}

// ArtifactLocation is a path relative to the root URIBaseID names.
type ArtifactLocation struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

// Region is a line of an artifact.
type Region struct {
	StartLine int `json:"startLine"`
}

// LogicalLocation is a service, a request type or an operation. In
// run.logicalLocations it carries its parentIndex; a result refers to one
// by index and repeats its name, fullyQualifiedName and kind for readers
// that do not follow the index.
type LogicalLocation struct {
	Name               string `json:"name"`
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
	Index              *int   `json:"index,omitempty"`
	ParentIndex        *int   `json:"parentIndex,omitempty"`
}

// ruleText is the short description and help of each detector: what it
// finds and the fix it advises, as in docs/cli.md's table of detector ids.
var ruleText = map[string][2]string{
	"n-plus-one": {
		"One parent repeats the same call, one at a time, with different values.",
		"The parent makes the same call (or runs the same repository/ORM unit) five or more times in a row with different values, each waiting for the last. Fetch them in one batch request or a JOIN.",
	},
	"n-plus-one-or-redundant": {
		"One parent repeats the same read, one at a time, with values the spans do not record.",
		"The parent sends the same read five or more times in a row, and the spans record no values: either one row per item (fetch them in one batch or a JOIN) or the same row again (read it once and keep it). Record the values to tell which.",
	},
	"redundant-call": {
		"One request repeats the same read with the same values.",
		"The request sends the same read (a SELECT or GET with the same values) three or more times. Keep the first answer: cache it or deduplicate the calls.",
	},
	"chatty-db": {
		"One request sends many different statements to a database, one round trip after another.",
		"The request sends five or more different statements to one database, each waiting for the last. Do the same work in one statement or one batched round trip.",
	},
	"event-loop-blocking": {
		"Calls hold an event-loop thread.",
		"Blocking calls run on an event-loop thread, so other requests wait for the thread. Use a non-blocking client, or move the call to a worker thread.",
	},
	"dispatch-overhead": {
		"Requests spend most of their time before the handler starts.",
		"Most of the request's time goes to dispatch (filters, handler mapping) before its handler runs. Look at the route matcher and the filter chain.",
	},
	RegressionRule: {
		"A request type got slower than the baseline, beyond noise.",
		"The candidate's p95 latency of this request type exceeds the baseline's by more than the allowed regression, even at the low end of the ratio's 95% bootstrap confidence interval. Look at what changed on its critical path.",
	},
	"kafka-producer-contention": {
		"Producer sends wait on the Kafka client's buffer under bursts.",
		"Sends wait for room in the producer's buffer when messages come in bursts. Use larger batches, a longer linger and a larger buffer.",
	},
}

// placementHelp tells a reader of a code-scanning alert where it sits
// and why.
const placementHelp = " The alert sits at the method that made the spans when they, or their handler's span, carry OpenTelemetry code attributes (property placement: code); else at the path tracelab's --sarif-map gives the service (placement: map); else at line 1 of the repository's README (placement: repository), since the traces name no code. The service, request type and operation are in its logical location, and an example trace id in its properties."

// RuleFor returns the rule of a detector id; an id without a description
// here (a detector added since) still gets a rule, with generic text.
func RuleFor(id string) Rule {
	t, ok := ruleText[id]
	if !ok {
		t = [2]string{"tracelab detector " + id + ".", "A pathology found by the tracelab detector " + id + "; the result's message says what and what to do."}
	}
	return Rule{
		ID: id, ShortDescription: Message{t[0]}, FullDescription: Message{t[1]}, Help: Message{t[1] + placementHelp},
		DefaultConfiguration: Configuration{"warning"},
		Properties:           RuleProperties{Tags: []string{"performance", "traces"}},
	}
}

// FromReport encodes r as a log of one run whose rules are detectorIDs (in
// that order; pass the ids of detect.All()). A finding of an id not in
// detectorIDs gets a rule of its own, appended. pl places the results in
// the repository (nil: none placed).
func FromReport(r analyze.Report, detectorIDs []string, pl *Placer) Log {
	b := newBuilder(detectorIDs, pl)
	for _, f := range r.Findings {
		b.finding(f, "")
	}
	return b.log()
}

// Write encodes r as SARIF on w, indented.
func Write(w io.Writer, r analyze.Report, detectorIDs []string, pl *Placer) error {
	return writeLog(w, FromReport(r, detectorIDs, pl))
}

// RegressionRule is the rule of a request type that got slower beyond the
// comparison's allowance.
const RegressionRule = "p95-regression"

// FromComparison encodes a comparison as a log of one run. Each finding is
// a result with its SARIF baselineState: "new" (in the candidate only),
// "unchanged" (persisting) or "absent" (resolved; level "none", as it no
// longer happens). Each request type that regressed is an "error" result of
// RegressionRule, located at its request type and placed as a finding of
// the service that serves it whose code is not known.
func FromComparison(c compare.Result, detectorIDs []string, maxRegression float64, pl *Placer) Log {
	b := newBuilder(detectorIDs, pl)
	for _, f := range c.New {
		b.finding(f, "new")
	}
	for _, f := range c.Persisting {
		b.finding(f, "unchanged")
	}
	for _, f := range c.Resolved {
		b.finding(f, "absent").Level = "none"
	}
	for _, q := range c.Requests {
		reason, bad := compare.Regressed(q, maxRegression)
		if !bad {
			continue
		}
		// q.Request is "service operation" already: one location.
		i := b.locs.add(q.Request, q.Request, "function", nil)
		loc := LogicalLocation{Name: q.Request, FullyQualifiedName: q.Request, Kind: "function", Index: &i}
		phys, how := b.placer.place(pl.requestService(q.Request), nil)
		b.run.Results = append(b.run.Results, Result{
			RuleID:              RegressionRule,
			RuleIndex:           b.rule(RegressionRule),
			Level:               "error",
			Message:             Message{reason},
			Locations:           []Location{{PhysicalLocation: phys, LogicalLocations: []LogicalLocation{loc}}},
			PartialFingerprints: fingerprints(fingerprint(RegressionRule, q.Request)),
			Properties: map[string]any{
				"request": q.Request, "p95_ratio": q.P95Ratio,
				"baseline_p95_ms": q.Baseline.P95Ms, "candidate_p95_ms": q.Candidate.P95Ms,
				"placement": how,
			},
		})
	}
	return b.log()
}

// WriteComparison encodes c as SARIF on w, indented.
func WriteComparison(w io.Writer, c compare.Result, detectorIDs []string, maxRegression float64, pl *Placer) error {
	return writeLog(w, FromComparison(c, detectorIDs, maxRegression, pl))
}

// WriteLog encodes l on w, indented.
func WriteLog(w io.Writer, l Log) error { return writeLog(w, l) }

func writeLog(w io.Writer, l Log) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(l)
}

// builder collects a run's rules, logical locations and results.
type builder struct {
	run       Run
	ruleIndex map[string]int
	locs      locationTable
	placer    *Placer
}

func newBuilder(detectorIDs []string, pl *Placer) *builder {
	b := &builder{
		run: Run{
			Tool: Tool{Driver: Driver{Name: "tracelab", Rules: []Rule{}}},
			OriginalURIBaseIDs: map[string]BaseLocation{SourceRoot: {Description: Message{
				"The root of the repository the services' code is in; the consumer supplies it (GitHub code scanning: the checkout)."}}},
			Results: []Result{},
		},
		ruleIndex: map[string]int{},
		locs:      locationTable{index: map[string]int{}},
		placer:    pl,
	}
	for _, id := range detectorIDs {
		b.rule(id)
	}
	return b
}

// rule returns the index of id's rule, adding it first if need be.
func (b *builder) rule(id string) int {
	if i, ok := b.ruleIndex[id]; ok {
		return i
	}
	b.ruleIndex[id] = len(b.run.Tool.Driver.Rules)
	b.run.Tool.Driver.Rules = append(b.run.Tool.Driver.Rules, RuleFor(id))
	return b.ruleIndex[id]
}

// finding adds f as a result, with baselineState unless it is empty, and
// returns it for the caller to adjust.
func (b *builder) finding(f detect.Finding, baselineState string) *Result {
	phys, how := b.placer.place(f.Service, f.Code)
	props := properties(f)
	props["placement"] = how
	b.run.Results = append(b.run.Results, Result{
		RuleID:              f.Detector,
		RuleIndex:           b.rule(f.Detector),
		Level:               Level(f),
		Message:             Message{f.Summary},
		Locations:           []Location{{PhysicalLocation: phys, LogicalLocations: []LogicalLocation{b.locs.leaf(f)}}},
		PartialFingerprints: fingerprints(Fingerprint(f)),
		BaselineState:       baselineState,
		Properties:          props,
	})
	return &b.run.Results[len(b.run.Results)-1]
}

func (b *builder) log() Log {
	b.run.LogicalLocations = b.locs.all
	return Log{Schema: SchemaURI, Version: Version, Runs: []Run{b.run}}
}

// IDs returns the ids of ds, in order.
func IDs(ds []detect.Detector) []string {
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.ID()
	}
	return ids
}

// Level is a finding's SARIF level: "error" from ErrorShare of the
// critical path on, "warning" below it.
func Level(f detect.Finding) string {
	if f.ShareOfCriticalPath >= ErrorShare {
		return "error"
	}
	return "warning"
}

// Fingerprint is a stable hash of what identifies a finding across runs:
// detector, service, request and operation. The numbers, which change from
// run to run, are left out.
func Fingerprint(f detect.Finding) string {
	return fingerprint(f.Detector, f.Service, f.Request, f.Operation)
}

// fingerprints are a result's partialFingerprints: tracelab's own, and
// the same identity under the key GitHub reads.
func fingerprints(fp string) map[string]string {
	return map[string]string{FingerprintKey: fp, LineHashKey: fp[:16] + ":1"}
}

func fingerprint(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(h[:16])
}

// properties are the numbers of a finding, and its evidence as is.
func properties(f detect.Finding) map[string]any {
	p := map[string]any{
		"detector":               f.Detector,
		"service":                f.Service,
		"operation":              f.Operation,
		"share_of_critical_path": f.ShareOfCriticalPath,
		"traces_affected":        f.TracesAffected,
	}
	if f.Request != "" {
		p["request"] = f.Request
	}
	if f.ParentOperation != "" {
		p["parent_operation"] = f.ParentOperation
	}
	if f.CallsPerTrace != 0 {
		p["calls_per_trace"] = f.CallsPerTrace
	}
	if f.ShareOfParent != 0 {
		p["share_of_parent"] = f.ShareOfParent
	}
	if f.MaxConcurrency != 0 {
		p["max_concurrency"] = f.MaxConcurrency
	}
	if id, ok := f.Evidence["example_trace_id"].(string); ok && id != "" {
		p["example_trace_id"] = id
	}
	if len(f.Evidence) > 0 {
		p["evidence"] = f.Evidence
	}
	if f.Code != nil {
		p["code"] = f.Code
	}
	return p
}

// Unplaced counts the results of l with no physical location: those the
// repository had no README to hold (Placer), which GitHub code scanning
// refuses.
func Unplaced(l Log) int {
	n := 0
	for _, run := range l.Runs {
		for _, r := range run.Results {
			if len(r.Locations) == 0 || r.Locations[0].PhysicalLocation == nil {
				n++
			}
		}
	}
	return n
}

// locationTable builds run.logicalLocations: each service, request type
// and operation once, children pointing at their parents.
type locationTable struct {
	all   []LogicalLocation
	index map[string]int // by fullyQualifiedName and kind
}

func (t *locationTable) add(name, fqn, kind string, parent *int) int {
	key := kind + "\x00" + fqn
	if i, ok := t.index[key]; ok {
		return i
	}
	i := len(t.all)
	t.index[key] = i
	t.all = append(t.all, LogicalLocation{Name: name, FullyQualifiedName: fqn, Kind: kind, ParentIndex: parent})
	return i
}

// leaf adds the finding's service, request and operation and returns the
// operation's location as a result refers to it. A finding without a
// request (one that spans routes) hangs its operation on the service.
func (t *locationTable) leaf(f detect.Finding) LogicalLocation {
	parent := t.add(f.Service, f.Service, "module", nil)
	fqn := f.Service
	if f.Request != "" {
		fqn += " " + f.Request
		p := parent
		parent = t.add(f.Request, fqn, "function", &p)
	}
	fqn += " " + f.Operation
	p := parent
	i := t.add(f.Operation, fqn, "member", &p)
	return LogicalLocation{Name: f.Operation, FullyQualifiedName: fqn, Kind: "member", Index: &i}
}
