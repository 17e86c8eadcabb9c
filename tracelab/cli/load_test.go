package cli

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"tracelab/pkg/load"
)

func TestLoadRunWritesTheMarkedRun(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	var out bytes.Buffer
	loadOut = &out
	defer func() { loadOut = os.Stdout }()
	def := filepath.Join("..", "..", "loadtests", "nplus1.yaml")
	if code := runLoad([]string{"run", def, "--target", srv.URL, "--param", "ITERATIONS=5", "--out", "-"}); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	run, err := load.ReadMarked(out.String())
	if err != nil || run.Summary.Requests != 5 || len(run.Records) != 5 || run.Records[0].TraceID == "" {
		t.Fatalf("run %+v, %v; want 5 records with trace ids", run, err)
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
