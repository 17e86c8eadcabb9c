package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"tracelab/pkg/lab"
)

// Local runs every component as a plain process on 127.0.0.1 under
// process-compose (infra/local/process-compose.yaml). process-compose runs
// detached from tracelab, so `make up` returns; its unix socket and pid
// file in the state folder are how later commands find it.
type Local struct {
	lab         *lab.Checkout
	root, state string
	ports       map[string]string // ports.env
	pc          ProcessCompose
	progress    Progress
	poll        time.Duration  // between two looks at the processes' states
	stopWait    time.Duration  // for the processes to stop after process-compose down
	cpuPids     map[string]int // the processes CPUSeconds reads, by name
	upPids      map[string]int // what the last Up left running, by name
}

// ProcessCompose is how Local drives process-compose and the processes it
// started; tests replace it with recorded answers (testdata/*.pc.transcript).
type ProcessCompose interface {
	// Call runs a client command (process list, process restart, down...)
	// and returns its standard output.
	Call(ctx context.Context, args ...string) ([]byte, error)
	// Launch starts the server (process-compose up ...) detached, in its
	// own process group, with its output appended to logPath, and returns
	// its pid.
	Launch(args []string, logPath string) (int, error)
	// Alive tells whether a process is alive; a zombie is not.
	Alive(pid int) bool
	// Stop asks a process to end (SIGTERM).
	Stop(pid int)
	// Kill sends SIGKILL to a process and its process group.
	Kill(pid int)
}

// NewLocal returns the local runtime, or lab.ErrNoTools before `make tools`.
func NewLocal(c *lab.Checkout, progress Progress) (*Local, error) {
	tools, err := c.Tools()
	if err != nil {
		return nil, err
	}
	pc := &execProcessCompose{bin: tools["PROCESS_COMPOSE_BIN"], dir: c.Root, env: environ(c, tools)}
	l := newLocal(c, pc)
	if progress != nil {
		l.progress = progress
	}
	return l, nil
}

func newLocal(c *lab.Checkout, pc ProcessCompose) *Local {
	return &Local{lab: c, root: c.Root, state: c.State, ports: c.Ports, pc: pc,
		progress: func(string, ...any) {}, poll: 500 * time.Millisecond, stopWait: 30 * time.Second}
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

func (l *Local) PrometheusURL() string { return "http://127.0.0.1:" + l.ports["PROMETHEUS_PORT"] }

// Reconnect has nothing to do: every process listens on 127.0.0.1 itself.
func (l *Local) Reconnect(context.Context) error { return nil }

// Running reports whether a process-compose started by the lab is alive.
func (l *Local) Running() bool {
	pid := l.pid()
	return pid > 0 && l.pc.Alive(pid)
}

func (l *Local) pid() int {
	data, err := os.ReadFile(l.pidFile())
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid
}

// call runs a process-compose client command against the lab's instance.
func (l *Local) call(ctx context.Context, args ...string) ([]byte, error) {
	return l.pc.Call(ctx, append(args, "--unix-socket", l.socket())...)
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
		content := lab.EnvFileContent("Written by tracelab: the startup settings of this service's current variant.", vars)
		if old, err := os.ReadFile(path); err == nil && string(old) == content {
			continue
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
		changed[svc] = true
	}
	always, err := l.lab.AlwaysInfra()
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
			l.progress("starting %s", name)
			_, err = l.call(ctx, "process", "start", name)
		case changed[name]:
			// Stop, then start once the old instance is gone: process-compose's
			// own restart can lose the start when the old instance is slow to
			// exit (seen on a loaded machine: the service stayed Completed).
			l.progress("restarting %s with the %s settings", name, variant)
			if _, err = l.call(ctx, "process", "stop", name); err == nil {
				if err = l.waitStopped(ctx, name); err == nil {
					_, err = l.call(ctx, "process", "start", name)
				}
			}
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

// Exited implements Runtime: a process the last Up left running that
// process-compose no longer runs, or runs under another pid.
func (l *Local) Exited(ctx context.Context) error {
	if len(l.upPids) == 0 {
		return nil
	}
	if !l.Running() {
		return &ExitError{Name: "process-compose", Code: -1, LastLine: lastLogLine(filepath.Join(l.state, "logs", "process-compose.log")),
			Log: filepath.Join(".state", "logs", "process-compose.log")}
	}
	states, err := l.states(ctx)
	if err != nil {
		// An unanswered poll is not a death: the next one decides.
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(l.upPids)) {
		st := states[name]
		if st.IsRunning && st.Pid == l.upPids[name] {
			continue
		}
		code := st.ExitCode
		if st.IsRunning { // started again under another pid: the old one's code is gone
			code = -1
		}
		log := filepath.Join(".state", "logs", name+".log")
		return &ExitError{Name: name, Code: code, LastLine: lastLogLine(filepath.Join(l.root, log)), Log: log}
	}
	return nil
}

// waitStopped polls until process-compose no longer runs the process.
func (l *Local) waitStopped(ctx context.Context, name string) error {
	deadline := time.Now().Add(time.Minute)
	for {
		states, err := l.states(ctx)
		if err != nil {
			return err
		}
		// Only a terminal status will do: a process Terminating is no
		// longer IsRunning, yet process-compose refuses to start it.
		switch st := states[name]; st.Status {
		case "Completed", "Error", "Disabled", "Skipped":
			if !st.IsRunning {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s still runs a minute after it was asked to stop; see .state/logs/%s.log", name, name)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(l.poll):
		}
	}
}

// checkPortsFree names the first lab port another program holds.
func (l *Local) checkPortsFree() error {
	for _, k := range slices.Sorted(maps.Keys(l.ports)) {
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
	os.Remove(l.socket())
	args := []string{"up", "--tui=false", "--disable-dotenv", "--ordered-shutdown",
		"--unix-socket", l.socket(), "--log-file", logPath,
		"--config", filepath.Join(l.root, "infra", "local", "process-compose.yaml"),
		"--config", filepath.Join(l.root, "infra", "local", "services.process-compose.yaml")}
	pid, err := l.pc.Launch(append(args, processes...), logPath)
	if err != nil {
		return fmt.Errorf("cannot start process-compose: %v", err)
	}
	l.progress("started process-compose (pid %d): %s", pid, strings.Join(processes, ", "))
	return os.WriteFile(l.pidFile(), []byte(strconv.Itoa(pid)), 0o644)
}

type processState struct {
	Name      string `json:"name"`
	Status    string `json:"status"`
	Ready     string `json:"is_ready"`
	HasProbe  bool   `json:"has_ready_probe"`
	ExitCode  int    `json:"exit_code"`
	Pid       int    `json:"pid"`
	IsRunning bool   `json:"is_running"`
}

// States returns what process-compose knows of each process.
func (l *Local) states(ctx context.Context) (map[string]processState, error) {
	out, err := l.call(ctx, "process", "list", "--output", "json")
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
	limit, why := readyLimit()
	start := time.Now()
	deadline := start.Add(limit)
	lastReport := time.Now()
	for {
		if !l.Running() {
			return fmt.Errorf("process-compose stopped while starting; see %s", filepath.Join(l.state, "logs", "process-compose.log"))
		}
		states, err := l.states(ctx)
		var pending []string
		if err != nil {
			if time.Now().After(deadline) {
				return fmt.Errorf("process-compose did not answer for %s: %v", limit, err)
			}
		} else {
			for _, name := range want {
				st := states[name]
				if old, ok := replaced[name]; ok && st.Pid == old {
					pending = append(pending, name)
					continue
				}
				switch st.Status {
				case "Completed", "Error", "Skipped":
					how := fmt.Sprintf("exited with code %d", st.ExitCode)
					if st.ExitCode == 143 || st.ExitCode == 137 {
						how = fmt.Sprintf("was stopped (exit code %d) %s after it started, before its readiness check (%s) passed", st.ExitCode,
							time.Since(start).Round(time.Second), l.readinessCheck(name))
					}
					return fmt.Errorf("%s %s while starting: %s (log: %s)", name, how,
						lastLogLine(filepath.Join(l.state, "logs", name+".log")), filepath.Join(".state", "logs", name+".log"))
				}
				if st.Status != "Running" || (st.HasProbe && st.Ready != "Ready") {
					pending = append(pending, name)
				}
			}
			if len(pending) == 0 {
				if replaced == nil { // the whole stack: what Exited checks
					l.upPids = map[string]int{}
					for _, name := range want {
						l.upPids[name] = states[name].Pid
					}
				}
				return nil
			}
		}
		if time.Now().After(deadline) && len(pending) > 0 {
			name := pending[0]
			return fmt.Errorf("%s did not pass its readiness check (%s) within %s (%s): %s (log: %s)", name, l.readinessCheck(name),
				limit.Round(time.Second), why, lastLogLine(filepath.Join(l.state, "logs", name+".log")), filepath.Join(".state", "logs", name+".log"))
		}
		if time.Since(lastReport) > 10*time.Second && len(pending) > 0 {
			l.progress("waiting for %s to be ready (%s of at most %s)", strings.Join(pending, ", "), time.Since(start).Round(time.Second), limit.Round(time.Second))
			lastReport = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(l.poll):
		}
	}
}

// readyLimit is how long a start may take: 5 minutes, the slowest start
// seen on an idle 2-CPU machine being Spring services at about 100 s,
// stretched by the machine's load per CPU (a start's CPU work waits behind
// it), up to 4 times. process-compose's own readiness limits
// (failure_threshold) are set beyond that, so this is the one limit.
func readyLimit() (time.Duration, string) {
	const base, most = 5 * time.Minute, 4.0
	perCPU := 0.0
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(data)); len(f) > 0 {
			load, _ := strconv.ParseFloat(f[0], 64)
			perCPU = load / float64(goruntime.NumCPU())
		}
	}
	stretch := min(max(perCPU, 1), most)
	return time.Duration(stretch * float64(base)), fmt.Sprintf("%s, stretched %.1fx by a load of %.1f per CPU", base, stretch, perCPU)
}

// readinessCheck describes a process's readiness probe, as its
// process-compose file declares it.
func (l *Local) readinessCheck(name string) string {
	for _, file := range []string{"process-compose.yaml", "services.process-compose.yaml"} {
		data, err := os.ReadFile(filepath.Join(l.root, "infra", "local", file))
		if err != nil {
			continue
		}
		var pc struct {
			Processes map[string]struct {
				Ready *struct {
					HTTP *struct{ Host, Port, Path string } `yaml:"http_get"`
					Exec *struct{ Command string }          `yaml:"exec"`
				} `yaml:"readiness_probe"`
			}
		}
		// process-compose fills in the variables before it reads the YAML:
		// ${PORT} inside a {flow mapping} is not YAML until then.
		text := os.Expand(string(data), func(k string) string { return l.ports[k] })
		if yaml.Unmarshal([]byte(text), &pc) != nil {
			continue
		}
		p, ok := pc.Processes[name]
		if !ok || p.Ready == nil {
			continue
		}
		switch {
		case p.Ready.HTTP != nil:
			h := p.Ready.HTTP
			return "GET http://" + h.Host + ":" + h.Port + h.Path
		case p.Ready.Exec != nil:
			return "exec " + p.Ready.Exec.Command
		}
	}
	return "readiness_probe in infra/local/*process-compose.yaml"
}

// Down asks process-compose to stop everything, then makes sure: any
// process it had started that is still alive is killed with its group.
func (l *Local) Down(ctx context.Context) error {
	l.upPids = nil
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
	l.progress("stopping the local stack")
	if _, err := l.call(ctx, "down"); err != nil {
		l.progress("process-compose down: %v; stopping it by signal", err)
		l.pc.Stop(pcPid)
	}
	alive := func() bool { return slices.ContainsFunc(append(children, pcPid), l.pc.Alive) }
	// process-compose stops the processes in reverse dependency order, each
	// in its own time (PostgreSQL and Kafka flush first): wait for the last.
	for deadline := time.Now().Add(l.stopWait); alive() && time.Now().Before(deadline); {
		time.Sleep(l.poll)
	}
	if alive() {
		for _, p := range append(children, pcPid) {
			l.pc.Kill(p)
		}
	}
	return nil
}

// CPUSeconds implements Runtime, from the process tree of each service.
// The pids are asked of process-compose only when one is unknown or gone:
// the runner reads CPU several times a second.
func (l *Local) CPUSeconds(ctx context.Context, services []string) (map[string]float64, error) {
	out := map[string]float64{}
	read := func() (missing bool) {
		for _, name := range services {
			pid := l.cpuPids[name]
			if pid == 0 {
				missing = true
				continue
			}
			if sec, err := processTreeCPU(ctx, pid); err == nil {
				out[name] = sec
			} else {
				missing = true
			}
		}
		return missing
	}
	if !read() {
		return out, nil
	}
	states, err := l.states(ctx)
	if err != nil {
		return nil, err
	}
	l.cpuPids = map[string]int{}
	for name, st := range states {
		if st.IsRunning {
			l.cpuPids[name] = st.Pid
		}
	}
	read()
	return out, nil
}

// JITSeconds implements JITCounter, from the names and CPU times of the
// threads in the service's process tree.
func (l *Local) JITSeconds(ctx context.Context, service string) (float64, bool) {
	if pid := l.cpuPids[service]; pid != 0 {
		if sec, err := procTreeJIT(pid); err == nil {
			return sec, true
		}
	}
	// Unknown or gone (a restart): CPUSeconds asks process-compose again.
	if _, err := l.CPUSeconds(ctx, []string{service}); err != nil || l.cpuPids[service] == 0 {
		return 0, false
	}
	sec, err := procTreeJIT(l.cpuPids[service])
	return sec, err == nil
}

// BusySeconds implements CPUCounter, from /proc/stat: the time the CPUs
// spent on anything but idling and waiting for I/O.
func (l *Local) BusySeconds(settings map[string]string) (own, rest float64, restCPUs int, ok bool) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, 0, false
	}
	pinned := pinnedCPUs(settings)
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 9 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		cpu, err := strconv.Atoi(f[0][3:])
		if err != nil {
			continue
		}
		var busy float64
		// user nice system idle iowait irq softirq steal
		for _, i := range []int{1, 2, 3, 6, 7, 8} {
			v, _ := strconv.ParseFloat(f[i], 64)
			busy += v / userHZ
		}
		if pinned == nil || pinned[cpu] {
			own += busy
		} else {
			rest += busy
			restCPUs++
		}
	}
	return own, rest, restCPUs, true
}

// Status is one line per process: name, status, readiness, pid, and the
// memory of its process tree (kafka's and toxiproxy's processes are the
// scripts that start their servers).
func (l *Local) Status(ctx context.Context) (string, error) {
	if !l.Running() {
		return "the local stack is not running (make up starts it)\n", nil
	}
	states, err := l.states(ctx)
	if err != nil {
		return "", err
	}
	children := childrenByParent()
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s %-11s %-10s %8s %10s\n", "PROCESS", "STATUS", "READY", "PID", "MEM")
	for _, n := range slices.Sorted(maps.Keys(states)) {
		s := states[n]
		var mem int64
		if s.Pid > 0 && s.IsRunning {
			mem = treeResident(s.Pid, children)
		}
		fmt.Fprintf(&b, "%-12s %-11s %-10s %8d %9.0fM\n", n, s.Status, s.Ready, s.Pid, float64(mem)/(1<<20))
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
	children := childrenByParent()
	var total int64
	for _, s := range states {
		if s.Pid > 0 && s.IsRunning {
			total += treeResident(s.Pid, children)
		}
	}
	return total, nil
}

// childrenByParent maps each process to its children, from /proc.
func childrenByParent() map[int][]int {
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
	return children
}

// treeResident is the resident memory of a process and its descendants.
func treeResident(pid int, children map[int][]int) int64 {
	total := residentBytes(pid)
	for _, c := range children[pid] {
		total += treeResident(c, children)
	}
	return total
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
