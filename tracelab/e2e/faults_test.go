//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"tracelab/pkg/result"
)

// killEachProcess kills every process of kafka-batching's stack in turn,
// with -9, while a run of the scenario is in progress, the stack already up
// (kafka-batching's smoke run leaves it so): each run must end within
// seconds with exit 3 and one line naming the process, its exit code and
// its log. The next run starts the dead process again, so PostgreSQL is
// killed before a run that needs it: it must start over the lock its
// killed instance left.
func killEachProcess(t *testing.T, _ result.Result) {
	for _, name := range []string{"prometheus", "jaeger", "otelcol", "postgres", "toxiproxy", "kafka", "ledger", "ingest"} {
		t.Run(name, func(t *testing.T) { killDuringRun(t, name) })
	}
	if log, _ := os.ReadFile(filepath.Join(root(t), ".state", "logs", "postgres.log")); !strings.Contains(string(log), "removing the locks of a PostgreSQL that did not stop") {
		t.Errorf("postgres.log does not show the killed instance's locks removed")
	}
}

func killDuringRun(t *testing.T, name string) {
	cmd := exec.Command(bin(t), "scenario", "run", "kafka-batching", "--profile", "smoke", "--variant", "baseline")
	cmd.Dir = root(t)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() { // the stack is up and the run under way
		lines = append(lines, sc.Text())
		if strings.Contains(sc.Text(), "warming up") {
			break
		}
	}
	pid := serverPid(t, name)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %s (pid %d): %v", name, pid, err)
	}
	killed := time.Now()
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	err = cmd.Wait()
	took := time.Since(killed)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("run with %s killed: %v, want exit 3; output:\n%s", name, err, strings.Join(lines, "\n"))
	}
	// Killed with -9: a process that is its server dies of the signal, a
	// script whose server it was exits with 137.
	last := lines[len(lines)-1]
	for _, want := range []string{": " + name + " ", " during the run: ", ".state/logs/" + name + ".log"} {
		if !strings.Contains(last, want) {
			t.Errorf("last line %q does not say %q", last, want)
		}
	}
	if !strings.Contains(last, name+" was killed (by a signal") && !strings.Contains(last, name+" exited with code 137") {
		t.Errorf("last line %q does not say how %s ended", last, name)
	}
	// The watcher looks every 2 s; a step it interrupts ends at once.
	if took > 15*time.Second {
		t.Errorf("the run ended %s after %s died", took.Round(time.Second), name)
	}
	t.Logf("%s killed: exit 3 after %s: %s", name, took.Round(100*time.Millisecond), last)
}

// serverPid is the pid of the server a stack process runs: the process
// itself, or, for kafka and toxiproxy, whose process is the script that
// configures them once they run, that script's child.
func serverPid(t *testing.T, name string) int {
	t.Helper()
	tools, err := checkout(t).Tools()
	if err != nil {
		t.Fatal(err)
	}
	list := exec.Command(tools["PROCESS_COMPOSE_BIN"], "process", "list", "--output", "json", "--unix-socket", filepath.Join(root(t), ".state", "process-compose.sock"))
	list.Env = append(os.Environ(), "PC_LOG_FILE="+filepath.Join(root(t), ".state", "logs", "process-compose-client.log"))
	out, err := list.Output()
	if err != nil {
		t.Fatalf("process-compose process list: %v", err)
	}
	var states []struct {
		Name string `json:"name"`
		Pid  int    `json:"pid"`
	}
	if err := json.Unmarshal(out, &states); err != nil {
		t.Fatalf("process-compose process list: %v", err)
	}
	for _, s := range states {
		if s.Name != name || s.Pid <= 0 {
			continue
		}
		if comm, _ := os.ReadFile("/proc/" + strconv.Itoa(s.Pid) + "/comm"); strings.TrimSpace(string(comm)) != "bash" {
			return s.Pid
		}
		children, _ := os.ReadFile("/proc/" + strconv.Itoa(s.Pid) + "/task/" + strconv.Itoa(s.Pid) + "/children")
		if f := strings.Fields(string(children)); len(f) == 1 {
			child, _ := strconv.Atoi(f[0])
			return child
		} else {
			t.Fatalf("%s (pid %d) is a script with children %v; want its one server", name, s.Pid, f)
		}
	}
	t.Fatalf("process-compose runs no %s", name)
	return 0
}
