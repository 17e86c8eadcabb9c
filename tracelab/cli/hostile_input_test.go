package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Input past one of the parser's limits (tracelab/pkg/otlp, Limits) is bad
// input: exit 2 and one line naming the flag that raises the limit, from
// analyze and from compare on either side. Nesting used to double memory
// per level (30 levels: out of memory) and deeper files overflowed the
// stack, both fatal to the process.
func TestHostileInputExits2(t *testing.T) {
	write := tempWriter(t)
	span, nested := attributeSpan, nestedSpan
	files := map[string]struct{ path, flag string }{
		"1000 levels":    {write("deep.json", nested(1000)), "--max-attr-depth"},
		"100000 levels":  {write("deeper.json", nested(100_000)), "--max-attr-depth"},
		"a 2 MiB string": {write("long.json", span(`{"stringValue":"`+strings.Repeat("a", 2<<20)+`"}`)), "--max-attr-bytes"},
	}
	for name, f := range files {
		runs := map[string]func() (int, string, string){
			"analyze": func() (int, string, string) { return runAnalyzeCaptured(t, "--file", f.path, "--format", "json") },
			"compare": func() (int, string, string) {
				return runCompareCaptured(t, "--baseline", nplus1Baseline, "--candidate", f.path)
			},
		}
		for cmd, run := range runs {
			code, out, errOut := run()
			if code != exitUsage {
				t.Errorf("%s, %s: exit %d, want %d", cmd, name, code, exitUsage)
			}
			if out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, f.flag) {
				t.Errorf("%s, %s: stdout %.80q, stderr %.200q: want one line naming %s", cmd, name, out, errOut, f.flag)
			}
		}
	}
	// 30 levels, the depth that ran out of memory, are within the limit.
	if code, _, errOut := runAnalyzeCaptured(t, "--file", write("thirty.json", nested(30)), "--format", "json"); code != exitOK {
		t.Errorf("30 levels: exit %d, %s", code, errOut)
	}
}

// tempWriter returns a function that writes a file in a fresh temporary
// directory and returns its path.
func tempWriter(t *testing.T) func(name, content string) string {
	dir := t.TempDir()
	return func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
}

// attributeSpan is a one-span document whose attribute v has value.
func attributeSpan(value string) string {
	return `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"01","spanId":"02","name":"GET","kind":2,"attributes":[{"key":"v","value":` + value + `}]}]}]}]}`
}

// nestedSpan is attributeSpan with a value nested levels deep.
func nestedSpan(levels int) string {
	return attributeSpan(strings.Repeat(`{"arrayValue":{"values":[`, levels) + `{"stringValue":"x"}` + strings.Repeat(`]}}`, levels))
}
