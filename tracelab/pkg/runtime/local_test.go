package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tracelab/internal/labtest"
)

// localLifecycle drives Local through what a scenario run does to it: a
// cold start, a variant switch (a restart of each service whose settings
// changed), the same variant again (no restart), a service that fails at
// start, and the stack's end. record_test.go runs it against the real
// process-compose to record the transcript; TestLocalLifecycle replays it.
func localLifecycle(ctx context.Context, l *Local) map[string]error {
	services := []string{"pricing", "catalog"}
	batch := Settings{"catalog": {"CATALOG_FETCH_MODE": "batch"}}
	errs := map[string]error{}
	errs["cold start"] = l.Up(ctx, services, Settings{"catalog": {"CATALOG_FETCH_MODE": "sequential"}}, "baseline")
	errs["variant switch"] = l.Up(ctx, services, batch, "fixed")
	errs["same variant"] = l.Up(ctx, services, batch, "fixed")
	errs["failing start"] = l.Up(ctx, append(services, "broken"), batch, "fixed")
	errs["down"] = l.Down(ctx)
	return errs
}

// pcReplay is a fake process-compose that replays a transcript recorded
// from the real one (testdata/*.pc.transcript; testdata/README.md says
// how). Each call must be the next of the transcript, with the test's
// checkout in place of $ROOT. The processes it started are alive until
// process-compose down.
type pcReplay struct {
	tr              *transcript
	root            string
	down            bool
	stopped, killed []int
}

func (p *pcReplay) next(args []string) step {
	return p.tr.next("process-compose " + strings.ReplaceAll(strings.Join(args, " "), p.root, "$ROOT"))
}

func (p *pcReplay) Call(ctx context.Context, args ...string) ([]byte, error) {
	s := p.next(args)
	if args[0] == "down" {
		p.down = true
	}
	if s.fail {
		return nil, errors.New(strings.TrimSpace(s.output))
	}
	return []byte(s.output), nil
}

func (p *pcReplay) Launch(args []string, logPath string) (int, error) {
	s := p.next(args)
	var pid int
	if _, err := fmt.Sscanf(s.output, "pid %d", &pid); err != nil {
		return 0, fmt.Errorf("transcript: launch answered %q, want pid N", s.output)
	}
	return pid, nil
}

func (p *pcReplay) Alive(pid int) bool { return !p.down }
func (p *pcReplay) Stop(pid int)       { p.stopped = append(p.stopped, pid) }
func (p *pcReplay) Kill(pid int)       { p.killed = append(p.killed, pid) }

// labRoot is an empty checkout but for infra/components.yaml, the lab's
// own, which says what infrastructure every scenario starts, and an empty
// ports.env.
func labRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "infra", "components.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "infra", "local"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "infra", "components.yaml"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "infra", "local", "ports.env"), []byte("# no ports\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestLocalLifecycle(t *testing.T) {
	root := labRoot(t)
	pc := &pcReplay{tr: loadTranscript(t, "testdata/local-lifecycle.pc.transcript"), root: root}
	l := newLocal(labtest.Open(t, root), pc)
	l.poll = 0
	errs := localLifecycle(context.Background(), l)
	for _, step := range []string{"cold start", "variant switch", "same variant", "down"} {
		if errs[step] != nil {
			t.Errorf("%s: %v", step, errs[step])
		}
	}
	want := "broken exited with code 3 while starting"
	if err := errs["failing start"]; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("failing start: %v, want %q", err, want)
	}
	env, _ := os.ReadFile(filepath.Join(root, ".state", "env", "catalog.env"))
	if !strings.Contains(string(env), "CATALOG_FETCH_MODE=batch\nLAB_VARIANT=fixed\n") {
		t.Errorf("catalog.env after the switch:\n%s", env)
	}
	if _, err := os.Stat(filepath.Join(root, ".state", "process-compose.pid")); !os.IsNotExist(err) {
		t.Errorf("the pid file outlives Down: %v", err)
	}
	if len(pc.stopped)+len(pc.killed) > 0 {
		t.Errorf("signalled %v, %v although process-compose down stopped everything", pc.stopped, pc.killed)
	}
	pc.tr.done()
}

// A process-compose that does not stop its processes has them killed.
func TestLocalDownKillsWhatOutlivesProcessCompose(t *testing.T) {
	root := labRoot(t)
	os.MkdirAll(filepath.Join(root, ".state"), 0o755)
	os.WriteFile(filepath.Join(root, ".state", "process-compose.pid"), []byte("4242"), 0o644)
	path := filepath.Join(t.TempDir(), "t.transcript")
	os.WriteFile(path, []byte(`$ process-compose process list --output json --unix-socket $ROOT/.state/process-compose.sock
[{"name": "jaeger", "status": "Running", "pid": 4250, "is_running": true}]
$ process-compose down --unix-socket $ROOT/.state/process-compose.sock
! process-compose down: exit status 1: context deadline exceeded
`), 0o644)
	pc := &pcReplay{tr: loadTranscript(t, path), root: root}
	l := newLocal(labtest.Open(t, root), pc)
	l.poll, l.stopWait = 0, 0
	l.pc = stubbornProcesses{pc}
	if err := l.Down(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(pc.stopped, pc.killed); got != "[4242] [4250 4242]" {
		t.Errorf("stopped and killed %s; want process-compose asked to stop, then jaeger's process and process-compose killed", got)
	}
	pc.tr.done()
}

type stubbornProcesses struct{ *pcReplay }

func (stubbornProcesses) Alive(int) bool { return true }
