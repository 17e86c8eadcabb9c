//go:build pcrecord

package runtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"tracelab/internal/labtest"
)

// TestRecordLocalLifecycle records testdata/local-lifecycle.pc.transcript
// from the real process-compose (testdata/README.md says how to run it).
func TestRecordLocalLifecycle(t *testing.T) {
	bin := os.Getenv("PROCESS_COMPOSE_BIN")
	if bin == "" {
		t.Fatal("set PROCESS_COMPOSE_BIN to the process-compose to record")
	}
	root := t.TempDir()
	config, err := os.ReadFile("testdata/pcrecord/process-compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	components, err := os.ReadFile(filepath.Join("..", "..", "..", "infra", "components.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for path, content := range map[string]string{
		"infra/components.yaml":            string(components),
		"infra/local/process-compose.yaml": string(config),
		// The services' own file, which Local always passes second; here
		// every process is in the first.
		"infra/local/services.process-compose.yaml": "version: \"0.5\"\n",
		"infra/local/ports.env":                     "# no ports: every process is a sleep\n",
		".state/tools.env":                          "PROCESS_COMPOSE_BIN=" + bin + "\n",
	} {
		os.MkdirAll(filepath.Join(root, filepath.Dir(path)), 0o755)
		if err := os.WriteFile(filepath.Join(root, path), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err := NewLocal(labtest.Open(t, root), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	rec := &pcRecorder{pc: l.pc, root: root}
	l.pc = rec
	for step, err := range localLifecycle(context.Background(), l) {
		t.Logf("%s: %v", step, err)
	}
	var b strings.Builder
	b.WriteString("# The real process-compose answering tracelab's Local (localLifecycle in local_test.go),\n")
	b.WriteString("# recorded by record_test.go on testdata/pcrecord/process-compose.yaml; see testdata/README.md.\n")
	b.WriteString(rec.out.String())
	if err := os.WriteFile("testdata/local-lifecycle.pc.transcript", []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// pcRecorder passes every call to the real process-compose and writes the
// call and its answer in the transcript format.
type pcRecorder struct {
	pc   ProcessCompose
	root string
	out  strings.Builder
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

func (r *pcRecorder) step(args []string, answer string, err error) {
	fmt.Fprintf(&r.out, "$ process-compose %s\n", strings.ReplaceAll(strings.Join(args, " "), r.root, "$ROOT"))
	if err != nil {
		fmt.Fprintf(&r.out, "! %s\n", ansi.ReplaceAllString(strings.ReplaceAll(err.Error(), r.root, "$ROOT"), ""))
		return
	}
	if answer != "" {
		r.out.WriteString(strings.TrimSuffix(answer, "\n") + "\n")
	}
}

func (r *pcRecorder) Call(ctx context.Context, args ...string) ([]byte, error) {
	out, err := r.pc.Call(ctx, args...)
	r.step(args, string(out), err)
	return out, err
}

func (r *pcRecorder) Launch(args []string, logPath string) (int, error) {
	pid, err := r.pc.Launch(args, logPath)
	r.step(args, fmt.Sprintf("pid %d", pid), err)
	return pid, err
}

func (r *pcRecorder) Alive(pid int) bool { return r.pc.Alive(pid) }
func (r *pcRecorder) Stop(pid int)       { r.pc.Stop(pid) }
func (r *pcRecorder) Kill(pid int)       { r.pc.Kill(pid) }
