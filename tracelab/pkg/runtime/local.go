package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"tracelab/pkg/components"
)

// infra is the telemetry stack every scenario needs on the local runtime:
// the infrastructure infra/components.yaml marks always.
func infra(root string) ([]string, error) {
	_, always, err := components.InfraNames(root)
	return always, err
}

// Local runs every component as a plain process on 127.0.0.1 under
// process-compose (infra/local/process-compose.yaml). process-compose runs
// detached from tracelab, so `make up` returns; its unix socket and pid
// file in the state folder are how later commands find it.
type Local struct {
	root, state string
	ports       map[string]string // ports.env
	tools       map[string]string // .state/tools.env
	Progress    func(format string, a ...any)
}

// ErrNoTools means .state/tools.env is missing: nothing can have been started.
var ErrNoTools = errors.New("the lab's tools are not installed; run 'make tools'")

func NewLocal(root string) (*Local, error) {
	l := &Local{root: root, state: filepath.Join(root, ".state"), Progress: func(string, ...any) {}}
	var err error
	if l.ports, err = ReadEnvFile(filepath.Join(root, "infra", "local", "ports.env")); err != nil {
		return nil, err
	}
	if l.tools, err = ReadEnvFile(filepath.Join(l.state, "tools.env")); err != nil {
		return nil, ErrNoTools
	}
	return l, nil
}

func (l *Local) Name() string { return "local" }

func (l *Local) socket() string  { return filepath.Join(l.state, "process-compose.sock") }
func (l *Local) pidFile() string { return filepath.Join(l.state, "process-compose.pid") }

func (l *Local) Endpoint(service string) (string, error) {
	port, ok := l.ports[strings.ToUpper(service)+"_PORT"]
	if !ok {
		return "", fmt.Errorf("no port for service %q in infra/local/ports.env", service)
	}
	return "http://127.0.0.1:" + port, nil
}

func (l *Local) JaegerURL() string { return "http://127.0.0.1:" + l.ports["JAEGER_QUERY_PORT"] }

// PrometheusURL is the base URL of the local Prometheus.
func (l *Local) PrometheusURL() string { return "http://127.0.0.1:" + l.ports["PROMETHEUS_PORT"] }

// Running reports whether a process-compose started by the lab is alive.
func (l *Local) Running() bool {
	pid := l.pid()
	return pid > 0 && syscall.Kill(pid, 0) == nil
}

func (l *Local) pid() int {
	data, err := os.ReadFile(l.pidFile())
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid
}

// environ is what process-compose expands its file with, and what every
// process inherits: the tool paths, the ports and the state folder.
func (l *Local) environ() []string {
	env := os.Environ()
	for _, m := range []map[string]string{l.tools, l.ports} {
		for k, v := range m {
			env = append(env, k+"="+v)
		}
	}
	return append(env, "LAB_ROOT="+l.root, "LAB_STATE="+l.state, "LAB_VERSION="+l.version(), "PC_DISABLE_TUI=1")
}

// version is the checkout's commit, recorded on every span as service.version.
func (l *Local) version() string {
	out, err := exec.Command("git", "-C", l.root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "dev"
	}
	return strings.TrimSpace(string(out))
}

func (l *Local) pc(ctx context.Context, args ...string) ([]byte, error) {
	args = append(args, "--unix-socket", l.socket())
	cmd := exec.CommandContext(ctx, l.tools["PROCESS_COMPOSE_BIN"], args...)
	cmd.Env = l.environ()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("process-compose %s: %v: %s", args[0], err, firstLine(stderr.String()))
	}
	return out, nil
}

// Up writes each service's settings file and starts what is missing; a
// service whose settings changed is restarted, as a Deployment would roll.
func (l *Local) Up(ctx context.Context, services []string, settings Settings, variant string) error {
	if err := os.MkdirAll(filepath.Join(l.state, "env"), 0o755); err != nil {
		return err
	}
	for _, dir := range []string{"logs", "data"} {
		if err := os.MkdirAll(filepath.Join(l.state, dir), 0o755); err != nil {
			return err
		}
	}
	changed := map[string]bool{}
	for _, svc := range services {
		vars := map[string]string{"LAB_VARIANT": variant}
		for k, v := range settings[svc] {
			vars[k] = v
		}
		path := filepath.Join(l.state, "env", svc+".env")
		content := envFileContent(vars)
		if old, err := os.ReadFile(path); err == nil && string(old) == content {
			continue
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
		changed[svc] = true
	}
	always, err := infra(l.root)
	if err != nil {
		return err
	}
	want := append(always, services...)

	if !l.Running() {
		if err := l.checkPortsFree(); err != nil {
			return err
		}
		if err := l.start(want); err != nil {
			return err
		}
		return l.waitReady(ctx, want, nil)
	}
	states, err := l.states(ctx)
	if err != nil {
		return err
	}
	// One at a time, in the scenario's order, each ready before the next:
	// a service may need the one before it from its first request on.
	for _, name := range want {
		st, known := states[name]
		switch {
		case !known || !st.IsRunning:
			l.Progress("starting %s", name)
			_, err = l.pc(ctx, "process", "start", name)
		case changed[name]:
			l.Progress("restarting %s with the %s settings", name, variant)
			_, err = l.pc(ctx, "process", "restart", name)
		default:
			continue
		}
		if err != nil {
			return err
		}
		if err := l.waitReady(ctx, []string{name}, map[string]int{name: st.Pid}); err != nil {
			return err
		}
	}
	return l.waitReady(ctx, want, nil)
}

// checkPortsFree names the first lab port another program holds.
func (l *Local) checkPortsFree() error {
	keys := make([]string, 0, len(l.ports))
	for k := range l.ports {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		addr := "127.0.0.1:" + l.ports[k]
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("port %s (%s in infra/local/ports.env) is already in use by another program; stop it or change the port", l.ports[k], k)
		}
		ln.Close()
	}
	return nil
}

func (l *Local) start(processes []string) error {
	logPath := filepath.Join(l.state, "logs", "process-compose.log")
	out, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	os.Remove(l.socket())
	args := []string{"up", "--tui=false", "--disable-dotenv", "--ordered-shutdown",
		"--unix-socket", l.socket(), "--log-file", logPath,
		"--config", filepath.Join(l.root, "infra", "local", "process-compose.yaml"),
		"--config", filepath.Join(l.root, "infra", "local", "services.process-compose.yaml")}
	cmd := exec.Command(l.tools["PROCESS_COMPOSE_BIN"], append(args, processes...)...)
	cmd.Env = l.environ()
	cmd.Dir = l.root
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group, so a Ctrl-C meant for tracelab reaches
	// process-compose only through tracelab's orderly Down.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("cannot start process-compose: %v", err)
	}
	l.Progress("started process-compose (pid %d): %s", cmd.Process.Pid, strings.Join(processes, ", "))
	go cmd.Wait() // reap it if it dies while tracelab still runs
	return os.WriteFile(l.pidFile(), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
}

type processState struct {
	Name      string `json:"name"`
	Status    string `json:"status"`
	Ready     string `json:"is_ready"`
	HasProbe  bool   `json:"has_ready_probe"`
	ExitCode  int    `json:"exit_code"`
	Pid       int    `json:"pid"`
	IsRunning bool   `json:"is_running"`
	Mem       int64  `json:"mem"`
}

// States returns what process-compose knows of each process.
func (l *Local) states(ctx context.Context) (map[string]processState, error) {
	out, err := l.pc(ctx, "process", "list", "--output", "json")
	if err != nil {
		return nil, err
	}
	var list []processState
	if err := json.Unmarshal(out, &list); err != nil {
		var wrapped struct {
			Data []processState `json:"data"`
		}
		if err2 := json.Unmarshal(out, &wrapped); err2 != nil {
			return nil, fmt.Errorf("process-compose process list: unexpected output: %v", err)
		}
		list = wrapped.Data
	}
	m := make(map[string]processState, len(list))
	for _, s := range list {
		m[s.Name] = s
	}
	return m, nil
}

// waitReady polls until every wanted process passes its readiness check,
// and fails fast, naming the log, when one exits instead. replaced holds
// the pid of an instance being restarted: its exit is not a failure.
func (l *Local) waitReady(ctx context.Context, want []string, replaced map[string]int) error {
	const limit = 5 * time.Minute
	deadline := time.Now().Add(limit)
	lastReport := time.Now()
	for {
		if !l.Running() {
			return fmt.Errorf("process-compose stopped while starting; see %s", filepath.Join(l.state, "logs", "process-compose.log"))
		}
		states, err := l.states(ctx)
		var pending []string
		if err == nil {
			for _, name := range want {
				st := states[name]
				if old, ok := replaced[name]; ok && st.Pid == old {
					pending = append(pending, name)
					continue
				}
				switch st.Status {
				case "Completed", "Error", "Skipped":
					return fmt.Errorf("%s exited with code %d while starting: %s (log: %s)", name, st.ExitCode,
						lastLogLine(filepath.Join(l.state, "logs", name+".log")), filepath.Join(".state", "logs", name+".log"))
				}
				if st.Status != "Running" || (st.HasProbe && st.Ready != "Ready") {
					pending = append(pending, name)
				}
			}
			if len(pending) == 0 {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %s: %s; see .state/logs/", limit, strings.Join(pending, ", "))
		}
		if time.Since(lastReport) > 10*time.Second && len(pending) > 0 {
			l.Progress("waiting for %s to be ready", strings.Join(pending, ", "))
			lastReport = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// Down asks process-compose to stop everything, then makes sure: any
// process it had started that is still alive is killed with its group.
func (l *Local) Down(ctx context.Context) error {
	defer os.Remove(l.pidFile())
	defer os.Remove(l.socket())
	if !l.Running() {
		return nil
	}
	pcPid := l.pid()
	var children []int
	if states, err := l.states(ctx); err == nil {
		for _, s := range states {
			if s.Pid > 0 {
				children = append(children, s.Pid)
			}
		}
	}
	l.Progress("stopping the local stack")
	if _, err := l.pc(ctx, "down"); err != nil {
		syscall.Kill(pcPid, syscall.SIGTERM)
	}
	alive := func() bool {
		if syscall.Kill(pcPid, 0) == nil && !isZombie(pcPid) {
			return true
		}
		for _, p := range children {
			if syscall.Kill(p, 0) == nil && !isZombie(p) {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(30 * time.Second); alive() && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
	}
	if alive() {
		for _, p := range append(children, pcPid) {
			syscall.Kill(-p, syscall.SIGKILL)
			syscall.Kill(p, syscall.SIGKILL)
		}
	}
	return nil
}

// Status is one line per process: name, status, readiness, pid, memory.
func (l *Local) Status(ctx context.Context) (string, error) {
	if !l.Running() {
		return "the local stack is not running (make up starts it)\n", nil
	}
	states, err := l.states(ctx)
	if err != nil {
		return "", err
	}
	names := make([]string, 0, len(states))
	for n := range states {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s %-11s %-10s %8s %10s\n", "PROCESS", "STATUS", "READY", "PID", "MEM")
	for _, n := range names {
		s := states[n]
		fmt.Fprintf(&b, "%-12s %-11s %-10s %8d %9.0fM\n", n, s.Status, s.Ready, s.Pid, float64(s.Mem)/(1<<20))
	}
	fmt.Fprintf(&b, "\nJaeger %s   Prometheus %s   logs .state/logs/\n", l.JaegerURL(), l.PrometheusURL())
	return b.String(), nil
}

// MemoryBytes is the resident memory of every process the stack runs,
// their children included (PostgreSQL forks a backend per connection),
// read from /proc.
func (l *Local) MemoryBytes(ctx context.Context) (int64, error) {
	states, err := l.states(ctx)
	if err != nil {
		return 0, err
	}
	children := map[int][]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// The fields after the command name (in parentheses): state, ppid.
		s := string(data)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		if len(fields) > 1 {
			ppid, _ := strconv.Atoi(fields[1])
			children[ppid] = append(children[ppid], pid)
		}
	}
	var total int64
	var add func(pid int)
	add = func(pid int) {
		total += residentBytes(pid)
		for _, c := range children[pid] {
			add(c)
		}
	}
	for _, s := range states {
		if s.Pid > 0 && s.IsRunning {
			add(s.Pid)
		}
	}
	return total, nil
}

func residentBytes(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func isZombie(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the command name in parentheses.
	s := string(data)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z'
	}
	return false
}

func lastLogLine(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "no log"
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return "empty log"
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
