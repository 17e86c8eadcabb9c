package cli

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tracelab/pkg/load"
)

func TestLoadRunWritesTheMarkedRun(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	var out, log bytes.Buffer
	loadOut, loadLog = &out, &log
	defer func() { loadOut, loadLog = os.Stdout, os.Stderr }()
	def := filepath.Join("..", "..", "loadtests", "nplus1.yaml")
	if code := runLoad([]string{"run", def, "--target", srv.URL, "--param", "ITERATIONS=5", "--out", "-"}); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	run, err := load.ReadMarked(out.String())
	if err != nil || run.Summary.Requests != 5 || len(run.Records) != 5 || run.Records[0].TraceID == "" {
		t.Fatalf("run %+v, %v; want 5 records with trace ids", run, err)
	}
	// In a Job's log the two streams interleave: everything is on one.
	if log.Len() > 0 {
		t.Errorf("with --out -, %q went to stderr", log.String())
	}
	if !strings.HasPrefix(out.String(), run.Model+": 5 requests") {
		t.Errorf("stdout does not begin with the summary: %.80q", out.String())
	}
}

func TestLoadRunBadInput(t *testing.T) {
	def := filepath.Join("..", "..", "loadtests", "nplus1.yaml")
	for _, args := range [][]string{
		{},
		{"start", def},
		{"run", def},
		{"run", "--target", "http://127.0.0.1:1"},
		{"run", def, "--target", "http://127.0.0.1:1", "--param", "ITERATONS=5"},
		{"run", def, "--target", "http://127.0.0.1:1", "--param", "RATE=fast"},
		{"run", "/nonexistent.yaml", "--target", "http://127.0.0.1:1"},
	} {
		if code := runLoad(args); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
	// A refused connection is a failed request, which the summary counts;
	// the run itself was made.
	if code := runLoad([]string{"run", def, "--target", "http://127.0.0.1:1", "--param", "ITERATIONS=1"}); code != exitOK {
		t.Errorf("nothing listening: exit %d, want %d", code, exitOK)
	}
}
