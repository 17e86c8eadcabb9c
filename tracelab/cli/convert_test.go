package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConvertToJaegerKeepsTheTree(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.json")
	if code := runConvert([]string{"--file", filepath.Join(analyzeFixtures, "django-nplus1.otlp.json"), "--to", "jaeger", "--out", out}); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Data []struct {
			TraceID string `json:"traceID"`
			Spans   []struct {
				SpanID     string `json:"spanID"`
				References []struct {
					RefType, SpanID string
				} `json:"references"`
				ProcessID string `json:"processID"`
				Tags      []struct {
					Key   string `json:"key"`
					Value any    `json:"value"`
				} `json:"tags"`
			} `json:"spans"`
			Processes map[string]struct {
				ServiceName string `json:"serviceName"`
			} `json:"processes"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if len(doc.Data) == 0 {
		t.Fatal("no traces written")
	}
	roots, kinds := 0, 0
	for _, tr := range doc.Data {
		ids := map[string]bool{}
		for _, s := range tr.Spans {
			ids[s.SpanID] = true
		}
		for _, s := range tr.Spans {
			if _, ok := tr.Processes[s.ProcessID]; !ok {
				t.Errorf("span %s names process %q, which is not listed", s.SpanID, s.ProcessID)
			}
			if len(s.References) == 0 {
				roots++
			}
			for _, r := range s.References {
				if r.RefType != "CHILD_OF" || !ids[r.SpanID] {
					t.Errorf("span %s refers to %s %s, not a span of its trace", s.SpanID, r.RefType, r.SpanID)
				}
			}
			for _, tag := range s.Tags {
				if tag.Key == "span.kind" {
					kinds++
				}
			}
		}
	}
	if roots != len(doc.Data) {
		t.Errorf("%d root spans in %d traces", roots, len(doc.Data))
	}
	if kinds == 0 {
		t.Error("no span.kind tags")
	}
}

func TestConvertRedactsTheMachine(t *testing.T) {
	home := os.Getenv("HOME")
	in := writeAnalyzeInput(t, "agent.log", `{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"app"}},{"key":"host.name","value":{"stringValue":"build-7"}},{"key":"process.command_line","value":{"stringValue":"java -jar app.jar"}},{"key":"process.runtime.name","value":{"stringValue":"OpenJDK"}}]},"scopeSpans":[{"spans":[{"traceId":"01","spanId":"02","name":"GET /","kind":2,"startTimeUnixNano":"1","endTimeUnixNano":"2","attributes":[{"key":"code.filepath","value":{"stringValue":"`+home+`/src/app.py"}},{"key":"http.route","value":{"stringValue":"/"}}]}]}]}`)
	out := filepath.Join(t.TempDir(), "out.json")
	if code := runConvert([]string{"--file", in, "--to", "otlp", "--redact", "--out", out}); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	b, _ := os.ReadFile(out)
	for _, gone := range []string{"build-7", "java -jar", home + "/src"} {
		if strings.Contains(string(b), gone) {
			t.Errorf("%q is still in the output", gone)
		}
	}
	for _, kept := range []string{"OpenJDK", `"http.route"`, `"app"`} {
		if !strings.Contains(string(b), kept) {
			t.Errorf("%q was dropped", kept)
		}
	}
}

func TestConvertBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"--to", "otlp"},
		{"--file", "x.json", "--to", "zipkin"},
		{"--file", filepath.Join(analyzeFixtures, "django-nplus1.otlp.json"), "--to", "otlp", "--max-traces", "-1"},
		{"--file", "/nonexistent.json", "--to", "otlp"},
	} {
		if code := runConvert(args); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}
