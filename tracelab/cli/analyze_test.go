package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// runAnalyzeCaptured runs the command in-process and returns its exit
// code, stdout and stderr.
func runAnalyzeCaptured(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	// In process, the heap --max-memory watches is the test binary's,
	// shared with every other test: lifted unless a test sets it.
	if !slices.Contains(args, "--max-memory") {
		args = append(args, "--max-memory", "-1")
	}
	return runCaptured(t, &analyzeOut, runAnalyze, args...)
}

// runCaptured runs a command in-process with its output variable pointed
// at a buffer and stderr at a pipe, and returns its exit code, stdout and
// stderr.
func runCaptured(t *testing.T, out *io.Writer, run func([]string) int, args ...string) (int, string, string) {
	t.Helper()
	var buf bytes.Buffer
	prevOut := *out
	*out = &buf
	defer func() { *out = prevOut }()

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	prevErr := os.Stderr
	os.Stderr = w
	errc := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		errc <- string(b)
	}()
	code := run(args)
	os.Stderr = prevErr
	w.Close()
	return code, buf.String(), <-errc
}

func writeAnalyzeInput(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const analyzeFixtures = "../testdata"

func TestAnalyzeJSONOutput(t *testing.T) {
	code, out, errOut := runAnalyzeCaptured(t, "--file", filepath.Join(analyzeFixtures, "django-nplus1.otlp.json"), "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &top); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	for _, k := range []string{"traces", "spans", "findings", "requests", "background", "warnings"} {
		if _, ok := top[k]; !ok {
			t.Errorf("output lacks %q", k)
		}
	}
	if len(top) != 6 {
		t.Errorf("output has %d top-level keys, want 6", len(top))
	}
	var findings []struct {
		Detector string `json:"detector"`
	}
	if err := json.Unmarshal(top["findings"], &findings); err != nil || len(findings) != 1 || findings[0].Detector != "n-plus-one" {
		t.Errorf("findings = %s", top["findings"])
	}
}

func TestAnalyzeTextOutput(t *testing.T) {
	code, out, errOut := runAnalyzeCaptured(t, "-file", filepath.Join(analyzeFixtures, "hotrod-dispatch.jaeger.json"))
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"Analyzed 2 traces", "n-plus-one", "redis-manual GetDriver", "frontend GET /dispatch"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestAnalyzeBadInput(t *testing.T) {
	dir := t.TempDir()
	notOTLP := writeAnalyzeInput(t, "spans.json", `{"spans":[]}`)
	notJSON := writeAnalyzeInput(t, "log.txt", "GET /catalog/summary 200\n")
	empty := writeAnalyzeInput(t, "empty.json", "")
	cases := map[string][]string{
		"no --file":         {},
		"missing file":      {"--file", filepath.Join(dir, "nope.json")},
		"a directory":       {"--file", dir},
		"unknown format":    {"--file", notOTLP, "--format", "yaml"},
		"unknown flag":      {"--file", notOTLP, "--verbose"},
		"stray argument":    {"--file", notOTLP, "extra"},
		"not OTLP":          {"--file", notOTLP},
		"not JSON":          {"--file", notJSON},
		"empty file":        {"--file", empty},
		"not OTLP, as JSON": {"--file", notOTLP, "--format", "json"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runAnalyzeCaptured(t, args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if out != "" {
				t.Errorf("stdout should be empty, got %q", out)
			}
			if !strings.HasPrefix(errOut, "tracelab: ") || strings.Count(errOut, "\n") != 1 {
				t.Errorf("stderr should be one line, got %q", errOut)
			}
		})
	}
	_, _, errOut := runAnalyzeCaptured(t, "--file", notOTLP)
	if !strings.Contains(errOut, `expected "resourceSpans", "result.resourceSpans", "batches" or a bare "scopeSpans" at the top level`) {
		t.Errorf("message does not say what was expected: %q", errOut)
	}
}

func TestAnalyzeHelp(t *testing.T) {
	code, out, _ := runAnalyzeCaptured(t, "-h")
	if code != exitOK || !strings.Contains(out, "usage: tracelab analyze --file F") {
		t.Errorf("exit %d, output %q", code, out)
	}
}

func TestAnalyzeIsRegistered(t *testing.T) {
	if _, ok := commands["analyze"]; !ok {
		t.Fatal("analyze is not registered")
	}
}

func TestAnalyzeSARIFOutput(t *testing.T) {
	code, out, errOut := runAnalyzeCaptured(t, "--file", filepath.Join(analyzeFixtures, "django-nplus1.otlp.json"), "--format", "sarif")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name  string `json:"name"`
					Rules []struct {
						ID string `json:"id"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID string `json:"ruleId"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 || log.Runs[0].Tool.Driver.Name != "tracelab" {
		t.Fatalf("not a tracelab SARIF 2.1.0 log of one run:\n%s", out)
	}
	if len(log.Runs[0].Tool.Driver.Rules) == 0 {
		t.Error("no rules")
	}
	if r := log.Runs[0].Results; len(r) != 1 || r[0].RuleID != "n-plus-one" {
		t.Errorf("results = %+v, want one n-plus-one", r)
	}
}
