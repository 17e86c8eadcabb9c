package runtime

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	goruntime "runtime"
	"strconv"
	"strings"
)

// userHZ is the unit of /proc's CPU times: the kernel reports them in
// USER_HZ ticks, 100 per second on every Linux architecture's ABI.
const userHZ = 100

// processTreeCPU is the CPU time, in seconds, that a process and its
// descendants have used: a service's process may be a wrapper (taskset, a
// shell) around the JVM that does the work.
func processTreeCPU(ctx context.Context, pid int) (float64, error) {
	if _, err := os.Stat("/proc/self/stat"); err == nil {
		return procTreeCPU(pid)
	}
	return psTreeCPU(ctx, pid)
}

// procTreeCPU reads utime and stime of the process and of its descendants.
func procTreeCPU(pid int) (float64, error) {
	return procTree(pid, func(pid int) (float64, error) { return statCPU(fmt.Sprintf("/proc/%d/stat", pid)) })
}

// statCPU is the CPU time, in seconds, in a /proc stat file's utime and
// stime: a process's, or one thread's under /proc/PID/task.
func statCPU(path string) (float64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	sec, err := parseStat(data)
	if err != nil {
		return 0, fmt.Errorf("%s: %v", path, err)
	}
	return sec, nil
}

// parseStat reads utime and stime from one stat line.
func parseStat(line []byte) (float64, error) {
	// The command name (field 2) may hold spaces; fields after it are fixed.
	f := strings.Fields(string(line[bytes.LastIndexByte(line, ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("too few fields")
	}
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("unreadable CPU times")
	}
	return (utime + stime) / userHZ, nil
}

// compilerThreadName is in the name of every JIT compiler thread:
// HotSpot's are "C1 CompilerThreadN" and "C2 CompilerThreadN" (JVMCI's
// "JVMCI CompilerThreadN"), which the kernel keeps to 15 bytes.
const compilerThreadName = "CompilerThre"

// jitCommand prints the stat line of every JIT compiler thread in a
// container, with only a shell and cat in the image; a thread that ends
// meanwhile is skipped.
var jitCommand = []string{"sh", "-c", `for t in /proc/[0-9]*/task/*; do read -r c 2>/dev/null <"$t/comm" || continue; case "$c" in *` + compilerThreadName + `*) cat "$t/stat" 2>/dev/null;; esac; done`}

// jitStats sums the CPU time of jitCommand's stat lines; ok is false when
// there are none, since a running JVM always has a compiler thread.
func jitStats(out []byte) (sec float64, ok bool) {
	for _, line := range bytes.Split(out, []byte("\n")) {
		if v, err := parseStat(line); err == nil {
			sec += v
			ok = true
		}
	}
	return sec, ok
}

// procTreeJIT is the CPU time of the JIT compiler threads of a process and
// of its descendants.
func procTreeJIT(pid int) (float64, error) {
	return procTree(pid, func(pid int) (float64, error) {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			return 0, err
		}
		var total float64
		for _, t := range tasks {
			dir := fmt.Sprintf("/proc/%d/task/%s/", pid, t.Name())
			if comm, err := os.ReadFile(dir + "comm"); err == nil && strings.Contains(string(comm), compilerThreadName) {
				if sec, err := statCPU(dir + "stat"); err == nil {
					total += sec
				}
			}
		}
		return total, nil
	})
}

// procTree sums of(pid) over the process and, through each thread's
// children file, its descendants.
func procTree(pid int, of func(pid int) (float64, error)) (float64, error) {
	total, err := of(pid)
	if err != nil {
		return 0, err
	}
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, t := range tasks {
		children, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		for _, c := range strings.Fields(string(children)) {
			if child, err := strconv.Atoi(c); err == nil {
				if sec, err := procTree(child, of); err == nil {
					total += sec
				}
			}
		}
	}
	return total, nil
}

// psTreeCPU is the same where there is no /proc (macOS), from ps, whose
// cumulative time there has centiseconds.
func psTreeCPU(ctx context.Context, pid int) (float64, error) {
	out, err := exec.CommandContext(ctx, "ps", "-A", "-o", "pid=,ppid=,time=").Output()
	if err != nil {
		return 0, fmt.Errorf("ps: %v", err)
	}
	children := map[int][]int{}
	cpu := map[int]float64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			continue
		}
		p, _ := strconv.Atoi(f[0])
		pp, _ := strconv.Atoi(f[1])
		children[pp] = append(children[pp], p)
		cpu[p] = parseCPUTime(f[2])
	}
	if _, ok := cpu[pid]; !ok {
		return 0, fmt.Errorf("ps: no process %d", pid)
	}
	var walk func(int) float64
	walk = func(p int) float64 {
		total := cpu[p]
		for _, c := range children[p] {
			total += walk(c)
		}
		return total
	}
	return walk(pid), nil
}

// parseCPUTime reads ps's [[dd-]hh:]mm:ss[.ff] in seconds.
func parseCPUTime(s string) float64 {
	var days float64
	if d, rest, ok := strings.Cut(s, "-"); ok {
		days, _ = strconv.ParseFloat(d, 64)
		s = rest
	}
	var total float64
	for _, part := range strings.Split(s, ":") {
		v, _ := strconv.ParseFloat(part, 64)
		total = total*60 + v
	}
	return days*86400 + total
}

// cgroupCPU reads a container's CPU time, in seconds, from what its cgroup
// reports: cpu.stat's usage_usec on cgroup v2, cpuacct.usage (ns) on v1.
func cgroupCPU(out []byte) (float64, error) {
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
			us, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return us / 1e6, err
		}
	}
	if ns, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64); err == nil {
		return ns / 1e9, nil
	}
	return 0, fmt.Errorf("neither cpu.stat's usage_usec nor cpuacct.usage in %q", strings.TrimSpace(string(out)))
}

// cgroupCPUCommand prints the container's CPU time on either cgroup
// version, with only a shell and cat in the image.
var cgroupCPUCommand = []string{"sh", "-c", "cat /sys/fs/cgroup/cpu.stat 2>/dev/null || cat /sys/fs/cgroup/cpuacct/cpuacct.usage"}

// CPUs implements Runtime: its LAB_CPUS list when it
// has one (a taskset list such as "1" or "0-1,3"), else the machine's. The
// launcher pins with taskset; where there is none (macOS), the list is not
// applied and the service may use every CPU.
func (l *Local) CPUs(_ context.Context, _ string, settings map[string]string) float64 {
	if pinned := pinnedCPUs(settings); pinned != nil {
		return float64(len(pinned))
	}
	return float64(goruntime.NumCPU())
}

// pinnedCPUs is the set of CPUs of the service's LAB_CPUS list, or nil when
// it has none or it cannot be applied (no taskset).
func pinnedCPUs(settings map[string]string) map[int]bool {
	list := settings["LAB_CPUS"]
	if _, err := exec.LookPath("taskset"); list == "" || err != nil {
		return nil
	}
	set := map[int]bool{}
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		if !isRange {
			hi = lo
		}
		a, err1 := strconv.Atoi(strings.TrimSpace(lo))
		b, err2 := strconv.Atoi(strings.TrimSpace(hi))
		if err1 == nil && err2 == nil {
			for c := a; c <= b; c++ {
				set[c] = true
			}
		}
	}
	return set
}
