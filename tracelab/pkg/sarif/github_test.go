package sarif

// What GitHub code scanning requires of an uploaded SARIF file, each
// requirement checked on the generic JSON the upload reads, and each cited
// where it is written down. The SARIF multitool that runs these rules
// cannot be had here (no .NET), so its GitHub rules are restated:
//
//   - [docs]: GitHub, "SARIF support for code scanning",
//     https://docs.github.com/en/code-security/code-scanning/integrating-with-code-scanning/sarif-support-for-code-scanning
//     (source: github/docs, content/code-security/code-scanning/integrating-with-code-scanning/sarif-support-for-code-scanning.md),
//     its tables of required properties and its section "Validating your
//     SARIF file", whose limits are data/reusables/code-scanning/sarif-limits.md.
//   - [GHnnnn]: the SARIF validator's GitHub rules, microsoft/sarif-sdk,
//     src/Sarif.Multitool.Library/Rules/GHnnnn.*.cs (with the Base rules they
//     extend, Basennnn.*.cs), read at commit a4dbd243d958.
//   - [observed]: toshtag/fairux-linter, docs/sarif-upload-canary.md,
//     uploads to GitHub recorded on 2026-08-01/02: a result with logical
//     locations only, or none, fails the whole submission
//     ("locationFromSarifResult: expected a physical location").

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"tracelab/internal/schematest"
	"tracelab/pkg/analyze"
	"tracelab/pkg/detect"
)

// The upload limits of [docs] "Validating your SARIF file": past any, the
// file is rejected. maxLocations is the result table's own bound ("up to
// a maximum of 10"), tighter than the limits table's 1,000, and the
// default display limit of [GH1004].
const (
	maxRuns        = 20
	maxResults     = 25000
	maxRules       = 25000
	maxLocations   = 10
	maxTags        = 20
	maxDescription = 1024 // [docs] reportingDescriptor: short and full description "Limited to 1024 characters"
	maxRuleName    = 255  // [docs] reportingDescriptor.name
)

// violation is one requirement a log breaks: the rule or page section it
// comes from, where in the log (a JSON pointer), and what is wrong.
type violation struct{ rule, at, msg string }

func (v violation) String() string { return v.rule + " " + v.at + ": " + v.msg }

// githubViolations checks doc, a SARIF log as generic JSON, against what
// GitHub code scanning requires, and returns every requirement it breaks.
func githubViolations(doc any) []violation {
	var out []violation
	bad := func(rule, at, format string, a ...any) {
		out = append(out, violation{rule, at, fmt.Sprintf(format, a...)})
	}
	log, ok := doc.(map[string]any)
	if !ok {
		bad("docs sarifLog", "", "the log is not a JSON object")
		return out
	}

	// [docs] sarifLog: $schema required, "The URI of the SARIF JSON schema
	// for version 2.1.0"; [GH1011] it must name the final 2.1.0 schema (end
	// in "2.1.0" or "2.1.0.json"); [GH1013] it must be present.
	schema, _ := log["$schema"].(string)
	if !strings.HasSuffix(schema, "2.1.0") && !strings.HasSuffix(schema, "2.1.0.json") {
		bad("GH1011", "/$schema", "%q does not name the final SARIF 2.1.0 schema", schema)
	}
	// [docs] sarifLog.version: "only supports SARIF version 2.1.0"; [GH1013].
	if v, _ := log["version"].(string); v != "2.1.0" {
		bad("GH1013", "/version", "version %q, want 2.1.0", v)
	}
	// [docs] sarifLog.runs[] required, "one or more runs"; at most 20 a
	// file ([docs] limits, [GH1013] MaximumRuns).
	runs, ok := log["runs"].([]any)
	if !ok || len(runs) == 0 {
		bad("GH1013", "/runs", "no runs array, or an empty one")
	}
	if len(runs) > maxRuns {
		bad("docs limits", "/runs", "%d runs, more than %d", len(runs), maxRuns)
	}
	for i, r := range runs {
		out = append(out, runViolations(r, fmt.Sprintf("/runs/%d", i))...)
	}
	return out
}

func runViolations(r any, at string) []violation {
	var out []violation
	bad := func(rule, at, format string, a ...any) {
		out = append(out, violation{rule, at, fmt.Sprintf(format, a...)})
	}
	run, _ := r.(map[string]any)
	// [docs] run.tool.driver required; toolComponent.name required (GitHub
	// filters by it); [GH1014] tool present, [GH1018] driver and its name.
	driver := object(run, "tool", "driver")
	if driver == nil {
		bad("GH1018", at+"/tool/driver", "no tool.driver")
		return out
	}
	if name, _ := driver["name"].(string); strings.TrimSpace(name) == "" {
		bad("GH1018", at+"/tool/driver/name", "the tool has no name")
	}
	// [docs] toolComponent.rules[] required; [GH1018] rules array present.
	rules, ok := driver["rules"].([]any)
	if !ok {
		bad("GH1018", at+"/tool/driver/rules", "no rules array")
	}
	if len(rules) > maxRules {
		bad("docs limits", at+"/tool/driver/rules", "%d rules, more than %d", len(rules), maxRules)
	}
	ruleIDs := map[string]int{}
	for i, x := range rules {
		rat := fmt.Sprintf("%s/tool/driver/rules/%d", at, i)
		rule, _ := x.(map[string]any)
		// [docs] reportingDescriptor.id required, "a unique identifier";
		// [Base2012] id present.
		id, _ := rule["id"].(string)
		if id == "" {
			bad("GH2012", rat+"/id", "the rule has no id")
		} else if _, dup := ruleIDs[id]; dup {
			bad("docs reportingDescriptor", rat+"/id", "rule id %q is not unique", id)
		}
		ruleIDs[id] = i
		// [docs] shortDescription.text, fullDescription.text and help.text
		// required (descriptions at most 1,024 characters); [GH2012] the same three.
		for _, f := range []string{"shortDescription", "fullDescription", "help"} {
			text, _ := object(rule, f)["text"].(string)
			if strings.TrimSpace(text) == "" {
				bad("GH2012", rat+"/"+f+"/text", "rule %q has no %s.text", id, f)
			}
			if f != "help" && len(text) > maxDescription {
				bad("docs reportingDescriptor", rat+"/"+f+"/text", "%d characters, more than %d", len(text), maxDescription)
			}
		}
		if name, _ := rule["name"].(string); len(name) > maxRuleName {
			bad("docs reportingDescriptor", rat+"/name", "%d characters, more than %d", len(name), maxRuleName)
		}
		// [docs] defaultConfiguration.level: note, warning or error.
		if lvl, ok := object(rule, "defaultConfiguration")["level"].(string); ok && lvl != "note" && lvl != "warning" && lvl != "error" {
			bad("docs reportingDescriptor", rat+"/defaultConfiguration/level", "level %q; use note, warning or error", lvl)
		}
		// [docs] limits: tags per rule.
		if tags, _ := object(rule, "properties")["tags"].([]any); len(tags) > maxTags {
			bad("docs limits", rat+"/properties/tags", "%d tags, more than %d", len(tags), maxTags)
		}
	}

	// [docs] run.results[] required; [GH1014] results array present; at
	// most 25,000 ([docs] limits).
	results, ok := run["results"].([]any)
	if !ok {
		bad("GH1014", at+"/results", "no results array")
	}
	if len(results) > maxResults {
		bad("docs limits", at+"/results", "%d results, more than %d", len(results), maxResults)
	}
	for i, x := range results {
		rat := fmt.Sprintf("%s/results/%d", at, i)
		res, _ := x.(map[string]any)
		// [docs] result.message.text required, the alert's title; [GH1007]
		// fully formatted text; [GH1015] message and its text present.
		if text, _ := object(res, "message")["text"].(string); strings.TrimSpace(text) == "" {
			bad("GH1015", rat+"/message/text", "no message text")
		}
		// [docs] result.ruleId is "the unique identifier of the rule
		// (reportingDescriptor.id)", and "has to be the same across
		// analysis" for alerts to track; tracelab always names its rule, so
		// it must be one of the run's rules, and ruleIndex, when given, the
		// same rule ([docs] example: "Specifying both ruleIndex and ruleID
		// might lead to inconsistencies").
		id, _ := res["ruleId"].(string)
		if ri, known := ruleIDs[id]; id == "" || !known {
			bad("docs result", rat+"/ruleId", "ruleId %q is not a rule of tool.driver.rules", id)
		} else if idx, ok := res["ruleIndex"].(json.Number); ok {
			if n, err := idx.Int64(); err != nil || int(n) != ri {
				bad("docs result", rat+"/ruleIndex", "ruleIndex %s is not the index %d of rule %q", idx, ri, id)
			}
		}
		// [docs] result.locations[] required, "at least one location is
		// required for code scanning to display a result", "up to a maximum
		// of 10"; [GH1001] and [GH1015] locations present and not empty;
		// [observed] without one the whole upload fails.
		locs, _ := res["locations"].([]any)
		if len(locs) == 0 {
			bad("GH1001", rat+"/locations", "no locations")
		}
		if len(locs) > maxLocations {
			bad("docs result", rat+"/locations", "%d locations, more than %d", len(locs), maxLocations)
		}
		for j, l := range locs {
			out = append(out, locationViolations(l, fmt.Sprintf("%s/locations/%d", rat, j))...)
		}
		// [GH1001] checks related locations the same way.
		related, _ := res["relatedLocations"].([]any)
		for j, l := range related {
			out = append(out, locationViolations(l, fmt.Sprintf("%s/relatedLocations/%d", rat, j))...)
		}
		// [docs] result.partialFingerprints required, and "code scanning
		// only uses the primaryLocationLineHash"; without it alerts
		// duplicate across runs.
		if h, _ := object(res, "partialFingerprints")[LineHashKey].(string); h == "" {
			bad("docs result", rat+"/partialFingerprints/"+LineHashKey, "no %s", LineHashKey)
		}
	}
	return out
}

func locationViolations(l any, at string) []violation {
	var out []violation
	bad := func(rule, at, format string, a ...any) {
		out = append(out, violation{rule, at, fmt.Sprintf(format, a...)})
	}
	loc, _ := l.(map[string]any)
	// [docs] location.physicalLocation required; [GH1016] present;
	// [GH1001] "will not display a result whose location does not provide
	// the URI of the artifact"; [observed] the upload fails without it.
	phys := object(loc, "physicalLocation")
	if phys == nil {
		bad("GH1001", at+"/physicalLocation", "no physicalLocation")
		return out
	}
	// [docs] physicalLocation.artifactLocation.uri required, best "a
	// relative path from the root of the GitHub repository being
	// analyzed"; [GH1001], [GH1017] present; [GH1005] a relative reference
	// or a file: URI, and [GH1006] an absolute file: URI is rejected unless
	// GitHub knows the checkout path, which tracelab does not: so relative,
	// inside the repository ([docs] "Specifying the root for source files":
	// relative paths are "relative to the root of the repository").
	art := object(phys, "artifactLocation")
	uri, _ := art["uri"].(string)
	if uri == "" {
		bad("GH1001", at+"/physicalLocation/artifactLocation/uri", "no artifact URI")
	} else if u, err := url.Parse(uri); err != nil {
		bad("GH1005", at+"/physicalLocation/artifactLocation/uri", "%q is not a URI reference: %v", uri, err)
	} else if u.Scheme != "" || u.Host != "" || strings.HasPrefix(u.Path, "/") {
		bad("GH1006", at+"/physicalLocation/artifactLocation/uri", "%q is absolute; give a path relative to the repository's root", uri)
	} else if p := u.Path; p == ".." || strings.HasPrefix(p, "../") || strings.Contains(p, "/../") || strings.HasSuffix(p, "/..") || strings.Contains(p, "\\") {
		bad("GH1005", at+"/physicalLocation/artifactLocation/uri", "%q leaves the repository or is not a / path", uri)
	}
	// [docs] region.startLine required; [GH1003] "at minimum,
	// region.startLine is required", the other region fields have
	// reasonable defaults (the page's table marks them required too, but
	// its own examples omit them); [GH1017] a region, with endLine not
	// before startLine.
	region := object(phys, "region")
	start, _ := region["startLine"].(json.Number)
	n, err := start.Int64()
	if region == nil || err != nil || n < 1 {
		bad("GH1003", at+"/physicalLocation/region/startLine", "no region.startLine of 1 or more")
	} else if end, ok := region["endLine"].(json.Number); ok {
		if e, err := end.Int64(); err != nil || e < n {
			bad("GH1017", at+"/physicalLocation/region/endLine", "endLine %s before startLine %d", end, n)
		}
	}
	return out
}

// object follows keys through nested JSON objects; nil where one is missing.
func object(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		next, ok := m[k].(map[string]any)
		if !ok {
			return nil
		}
		m = next
	}
	return m
}

// parseGeneric reads raw as the upload does, numbers kept exact.
func parseGeneric(t *testing.T, raw []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// checkUploadable fails t if raw breaks the SARIF 2.1.0 schema or any of
// GitHub's requirements.
func checkUploadable(t *testing.T, raw []byte) {
	t.Helper()
	if err := schema(t).Validate(schematest.Parse(t, raw)); err != nil {
		t.Errorf("SARIF does not validate against the 2.1.0 schema: %v", err)
	}
	for _, v := range githubViolations(parseGeneric(t, raw)) {
		t.Errorf("GitHub would not take it: %s", v)
	}
}

func encodeLog(t *testing.T, l Log) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := writeLog(&buf, l); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Real reports and comparisons, placed in this repository with and
// without the lab's map, are what GitHub takes.
func TestGitHubTakesAnalyze(t *testing.T) {
	mapped := labPlacer(t)
	unmapped, err := NewPlacer(mapped.Repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"petclinic-batch-off", "lab-nplus1-baseline", "hotrod-dispatch", "lab-chatty-db-baseline"} {
		for _, pl := range []*Placer{unmapped, mapped} {
			t.Run(fmt.Sprintf("%s/mapped=%v", name, pl == mapped), func(t *testing.T) {
				r := analyzeCase(t, name)
				if len(r.Findings) == 0 {
					t.Fatal("no findings; the test needs a case with some")
				}
				checkUploadable(t, encodeLog(t, FromReport(r, IDs(detect.All()), pl)))
			})
		}
	}
	t.Run("empty report", func(t *testing.T) {
		checkUploadable(t, encodeLog(t, FromReport(analyze.Analyze(nil, detect.All()), IDs(detect.All()), nil)))
	})
}

func TestGitHubTakesComparison(t *testing.T) {
	for _, tc := range [][2]string{
		{"lab-nplus1-baseline", "lab-nplus1-fixed"},
		{"lab-chatty-db-fixed", "lab-chatty-db-baseline"},
		{"petclinic-batch-off", "petclinic-batch-off"},
	} {
		t.Run(tc[0]+"->"+tc[1], func(t *testing.T) {
			c := compareCases(t, tc[0], tc[1])
			checkUploadable(t, encodeLog(t, FromComparison(c, IDs(detect.All()), 0.10, labPlacer(t))))
		})
	}
}

// A result with only logical locations, what tracelab wrote before it
// placed results in the repository, is valid SARIF and still fails: the
// schema alone would not have caught it.
func TestResultWithoutPhysicalLocationFails(t *testing.T) {
	l := FromReport(analyzeCase(t, "petclinic-batch-off"), IDs(detect.All()), labPlacer(t))
	l.Runs[0].Results[0].Locations[0].PhysicalLocation = nil
	raw := encodeLog(t, l)
	if err := schema(t).Validate(schematest.Parse(t, raw)); err != nil {
		t.Fatalf("the logical-only log should be valid SARIF, the point being that the schema misses it: %v", err)
	}
	vs := githubViolations(parseGeneric(t, raw))
	if len(vs) != 1 || vs[0].rule != "GH1001" || vs[0].at != "/runs/0/results/0/locations/0/physicalLocation" {
		t.Fatalf("violations %v, want exactly GH1001 at result 0's physicalLocation", vs)
	}
	t.Logf("a logical-only result fails as it should: %s", vs[0])
}

// Each requirement catches the log that breaks it, or the checks above
// prove nothing. Every case starts from a log that passes.
func TestGitHubRequirementsReject(t *testing.T) {
	base := func() map[string]any {
		l := FromReport(analyzeCase(t, "lab-nplus1-baseline"), IDs(detect.All()), labPlacer(t))
		return parseGeneric(t, encodeLog(t, l)).(map[string]any)
	}
	if vs := githubViolations(base()); len(vs) != 0 {
		t.Fatalf("the base log breaks %v", vs)
	}
	run := func(d map[string]any) map[string]any { return d["runs"].([]any)[0].(map[string]any) }
	result := func(d map[string]any) map[string]any { return run(d)["results"].([]any)[0].(map[string]any) }
	location := func(d map[string]any) map[string]any {
		return result(d)["locations"].([]any)[0].(map[string]any)
	}
	phys := func(d map[string]any) map[string]any { return location(d)["physicalLocation"].(map[string]any) }
	setURI := func(uri string) func(map[string]any) {
		return func(d map[string]any) { phys(d)["artifactLocation"].(map[string]any)["uri"] = uri }
	}
	rule0 := func(d map[string]any) map[string]any {
		return run(d)["tool"].(map[string]any)["driver"].(map[string]any)["rules"].([]any)[0].(map[string]any)
	}
	for _, tc := range []struct {
		name, rule string
		break_     func(map[string]any)
	}{
		{"no $schema", "GH1011", func(d map[string]any) { delete(d, "$schema") }},
		{"draft schema", "GH1011", func(d map[string]any) {
			d["$schema"] = "https://schemastore.azurewebsites.net/schemas/json/sarif-2.1.0-rtm.5.json"
		}},
		{"version 2.0.0", "GH1013", func(d map[string]any) { d["version"] = "2.0.0" }},
		{"no runs", "GH1013", func(d map[string]any) { d["runs"] = []any{} }},
		{"21 runs", "docs limits", func(d map[string]any) {
			runs := d["runs"].([]any)
			for len(runs) < 21 {
				runs = append(runs, runs[0])
			}
			d["runs"] = runs
		}},
		{"no tool name", "GH1018", func(d map[string]any) { run(d)["tool"].(map[string]any)["driver"].(map[string]any)["name"] = "" }},
		{"no rules", "GH1018", func(d map[string]any) { delete(run(d)["tool"].(map[string]any)["driver"].(map[string]any), "rules") }},
		{"rule without fullDescription", "GH2012", func(d map[string]any) { delete(rule0(d), "fullDescription") }},
		{"rule without help", "GH2012", func(d map[string]any) { delete(rule0(d), "help") }},
		{"long shortDescription", "docs reportingDescriptor", func(d map[string]any) {
			rule0(d)["shortDescription"] = map[string]any{"text": strings.Repeat("x", maxDescription+1)}
		}},
		{"no results", "GH1014", func(d map[string]any) { delete(run(d), "results") }},
		{"empty message", "GH1015", func(d map[string]any) { result(d)["message"] = map[string]any{"text": " "} }},
		{"message by id only", "GH1015", func(d map[string]any) { result(d)["message"] = map[string]any{"id": "default"} }},
		{"no ruleId", "docs result", func(d map[string]any) { delete(result(d), "ruleId") }},
		{"unknown ruleId", "docs result", func(d map[string]any) { result(d)["ruleId"] = "no-such-rule" }},
		{"ruleIndex of another rule", "docs result", func(d map[string]any) { result(d)["ruleIndex"] = json.Number("3") }},
		{"no locations", "GH1001", func(d map[string]any) { delete(result(d), "locations") }},
		{"11 locations", "docs result", func(d map[string]any) {
			locs := result(d)["locations"].([]any)
			for len(locs) < 11 {
				locs = append(locs, locs[0])
			}
			result(d)["locations"] = locs
		}},
		{"logical location only", "GH1001", func(d map[string]any) { delete(location(d), "physicalLocation") }},
		{"no artifact URI", "GH1001", func(d map[string]any) { delete(phys(d), "artifactLocation") }},
		{"absolute file URI", "GH1006", setURI("file:///home/runner/work/app/checkout/Main.java")},
		{"absolute path", "GH1006", setURI("/home/runner/work/app/checkout")},
		{"https URI", "GH1006", setURI("https://github.com/acme/app/blob/main/checkout")},
		{"outside the repository", "GH1005", setURI("../other-repo/checkout")},
		{"backslashes", "GH1005", setURI("services\\checkout")},
		{"no region", "GH1003", func(d map[string]any) { delete(phys(d), "region") }},
		{"line 0", "GH1003", func(d map[string]any) { phys(d)["region"] = map[string]any{"startLine": json.Number("0")} }},
		{"endLine before startLine", "GH1017", func(d map[string]any) {
			phys(d)["region"] = map[string]any{"startLine": json.Number("5"), "endLine": json.Number("4")}
		}},
		{"no primaryLocationLineHash", "docs result", func(d map[string]any) {
			result(d)["partialFingerprints"] = map[string]any{FingerprintKey: "abc"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := base()
			tc.break_(d)
			vs := githubViolations(d)
			for _, v := range vs {
				if v.rule == tc.rule {
					return
				}
			}
			t.Errorf("violations %v; want one of %s", vs, tc.rule)
		})
	}
}
