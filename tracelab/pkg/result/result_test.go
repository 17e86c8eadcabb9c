package result

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tracelab/internal/tracegen"
	"tracelab/pkg/otlp"
	"tracelab/pkg/trace"
)

// A finished run read back from disk (tracelab report) gets each
// variant's traces from its traces file, which result.json does not hold.
func TestReadTracesFillsEachVariantFromItsFile(t *testing.T) {
	dir := t.TempDir()
	res := Result{Scenario: "nplus1"}
	for i, name := range []string{"baseline", "fixed"} {
		traces := trace.Group(tracegen.LabTrace(tracegen.LabOptions{Items: 3 + i, Start: time.Unix(1700000000, 0), Seed: int64(i)}))
		path := filepath.Join(dir, name+"-traces.json")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := otlp.Write(f, traces); err != nil {
			t.Fatal(err)
		}
		f.Close()
		res.Variants = append(res.Variants, VariantResult{Variant: name, TracesFile: path, Traces: traces})
	}
	data, _ := json.Marshal(res)
	path := filepath.Join(dir, "result.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	read, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if read.Variants[0].Traces != nil {
		t.Fatal("result.json carried the traces; they belong in the traces files")
	}
	if err := read.ReadTraces(); err != nil {
		t.Fatal(err)
	}
	for i, v := range read.Variants {
		want := res.Variants[i].Traces[0]
		if len(v.Traces) != 1 || v.Traces[0].ID != want.ID || len(v.Traces[0].Spans) != len(want.Spans) {
			t.Errorf("%s: read %d traces; want the one written, %s with %d spans", v.Variant, len(v.Traces), want.ID, len(want.Spans))
		}
	}

	read.Variants[1].TracesFile = filepath.Join(dir, "gone.json")
	if err := read.ReadTraces(); err == nil || !strings.Contains(err.Error(), "variant fixed") {
		t.Errorf("a missing traces file gave %v; want an error naming the variant", err)
	}
}
