package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"tracelab/internal/tracegen"
	"tracelab/pkg/otlp"
	"tracelab/pkg/trace"
)

// tracelabBinary builds tracelab once for the tests that run it as a
// process of its own. It is built without the race detector even when the
// tests run under it: ThreadSanitizer maps memory of its own, which no
// memory limit meant for tracelab leaves room for.
var tracelabBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "tracelab-cli-test")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "tracelab")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = ".." // the module's root
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v: %s", err, out)
	}
	return bin, nil
})

// outOfMemory is how Go ends a process past the limit; the wording
// depends on where the allocation failed.
var outOfMemory = regexp.MustCompile(`^fatal error: (runtime: )?(out of memory|cannot allocate memory)`)

func TestMain(m *testing.M) {
	code := m.Run()
	if bin, err := tracelabBinary(); err == nil {
		os.RemoveAll(filepath.Dir(bin))
	}
	os.Exit(code)
}

// underMemoryLimit runs `tracelab args...` as a process whose memory may not
// pass mib MiB. The limit is RLIMIT_DATA (set by util-linux's prlimit),
// which counts the memory a process maps for use (Go's heap, thread
// stacks), not RLIMIT_AS: Go reserves a large address space unmapped at
// start, which RLIMIT_AS refuses. A process past the limit dies with Go's
// "out of memory".
func underMemoryLimit(t *testing.T, mib uint64, stdin io.Reader, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	bin, err := tracelabBinary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("prlimit", append([]string{fmt.Sprintf("--data=%d", mib<<20), bin}, args...)...)
	cmd.Stdin = stdin
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// limitMiB is the memory the processes below may use. A run of tracelab
// on a small file needs 100-112 MiB of it: each thread started through cgo
// maps an 8 MiB stack, and a busy machine makes it start more. The
// 300,000 spans below need 73 MiB resident read trace by trace, and more
// than 320 MiB of the limit read whole.
const limitMiB = 256

// Hostile inputs end as they do without a limit, within it: exit 2 and one
// line, or a report. 28 levels of nesting took 2.1 GiB before the parser
// rendered nested values once.
func TestHostileInputUnderAMemoryLimit(t *testing.T) {
	write := tempWriter(t)
	span, nested := attributeSpan, nestedSpan
	jaeger := httptest.NewServer(endless(`{"result":{"resourceSpans":[`))
	defer jaeger.Close()
	for _, c := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"28 levels", []string{"--file", write("28.json", nested(28))}, exitOK, ""},
		{"100000 levels", []string{"--file", write("deep.json", nested(100_000))}, exitUsage, "--max-attr-depth"},
		{"a 2 MiB string", []string{"--file", write("long.json", span(`{"stringValue":"`+strings.Repeat("a", 2<<20)+`"}`))}, exitUsage, "--max-attr-bytes"},
		{"an endless answer", []string{"--jaeger", jaeger.URL, "--service", "s", "--max-response-bytes", "64MiB"}, exitUsage, "answered more than 64 MiB"},
	} {
		code, out, errOut := underMemoryLimit(t, limitMiB, nil, append([]string{"analyze", "--format", "json"}, c.args...)...)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d; stderr %.300q", c.name, code, c.code, errOut)
			continue
		}
		if c.code != exitOK && (out != "" || strings.Count(withoutSlowNotice(errOut), "\n") != 1 || !strings.Contains(errOut, c.msg)) {
			t.Errorf("%s: stdout %.80q, stderr %.200q: want one line with %q", c.name, out, errOut, c.msg)
		}
	}
}

// A file of 300,000 spans is analysed within the limit, trace by trace;
// the same bytes read whole, from stdin, are not: the limit is real.
func TestAFileLargerThanTheLimitIsAnalysedTraceByTrace(t *testing.T) {
	var body bytes.Buffer
	traces := trace.Group(tracegen.Generate(300_000, 1))
	if err := otlp.Write(&body, traces); err != nil {
		t.Fatal(err)
	}
	spans := 0
	for _, tr := range traces {
		spans += len(tr.Spans)
	}
	traces = nil
	path := filepath.Join(t.TempDir(), "traces.json")
	if err := os.WriteFile(path, body.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := underMemoryLimit(t, limitMiB, nil, "analyze", "--file", path, "--format", "json")
	var rep struct{ Spans int }
	if code != exitOK || json.Unmarshal([]byte(out), &rep) != nil || rep.Spans != spans {
		t.Fatalf("%d MiB file under a %d MiB limit: exit %d, %d of %d spans; stderr %.300q", body.Len()>>20, limitMiB, code, rep.Spans, spans, errOut)
	}
	code, _, errOut = underMemoryLimit(t, limitMiB, bytes.NewReader(body.Bytes()), "analyze", "--file", "-", "--format", "json")
	if code == exitOK || !outOfMemory.MatchString(errOut) {
		t.Errorf("read whole from stdin under the same limit: exit %d, stderr %.200q; want Go's out of memory", code, errOut)
	}
}

// A Jaeger answer far larger than the memory limit, with --limit 20 and a
// raised --max-response-bytes, is analyzed within the limit: the spans of
// the traces past the limit are dropped as they are read. Read whole, its
// 150,000 spans of 2 KiB each would take over 300 MiB.
func TestLimitBoundsTheMemoryOfALargeAnswer(t *testing.T) {
	value := strings.Repeat("x", 2048)
	var body bytes.Buffer
	body.WriteString(`{"result":{"resourceSpans":[`)
	const n = 150_000
	for i := range n {
		if i > 0 {
			body.WriteByte(',')
		}
		fmt.Fprintf(&body, `{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"catalog"}}]},"scopeSpans":[{"spans":[{"traceId":"%032x","spanId":"%016x","name":"GET /catalog/summary","kind":2,"startTimeUnixNano":"%d","endTimeUnixNano":"%d","attributes":[{"key":"big","value":{"stringValue":"%s-%d"}}]}]}]}`, i+1, i+1, 1000+i, 2000+i, value, i)
	}
	body.WriteString(`]}}`)
	jaeger := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(body.Bytes())
	}))
	defer jaeger.Close()
	code, out, errOut := underMemoryLimit(t, limitMiB, nil, "analyze", "--jaeger", jaeger.URL, "--service", "catalog",
		"--limit", "20", "--max-response-bytes", "1GiB", "--format", "json")
	var rep struct{ Traces int }
	if code != exitOK || json.Unmarshal([]byte(out), &rep) != nil || rep.Traces != 20 {
		t.Fatalf("a %d MiB answer, --limit 20, under a %d MiB limit: exit %d, %d traces; stderr %.300q", body.Len()>>20, limitMiB, code, rep.Traces, errOut)
	}
}
