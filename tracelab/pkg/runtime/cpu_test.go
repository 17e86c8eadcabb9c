package runtime

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	goruntime "runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The process tree's CPU includes a child's: a wrapper's own time is
// nothing next to the JVM under it.
func TestProcessTreeCPUCountsChildren(t *testing.T) {
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Skip("no sh:", err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	ctx := context.Background()
	deadline := time.Now().Add(20 * time.Second)
	var child float64
	for child < 0.2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		sec, err := processTreeCPU(ctx, cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		child = sec
	}
	tree, err := processTreeCPU(ctx, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if child < 0.2 || tree < child {
		t.Errorf("the busy child used %.2f s, this process's tree %.2f s: the child is not counted", child, tree)
	}
}

func TestParseCPUTime(t *testing.T) {
	for in, want := range map[string]float64{"0:01.25": 1.25, "1:02:03.50": 3723.5, "2-00:00:01": 172801} {
		if got := parseCPUTime(in); got != want {
			t.Errorf("parseCPUTime(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestCgroupCPU(t *testing.T) {
	v2 := "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n"
	if got, err := cgroupCPU([]byte(v2)); err != nil || got != 2.5 {
		t.Errorf("cgroup v2: %v, %v; want 2.5 s", got, err)
	}
	if got, err := cgroupCPU([]byte("1500000000\n")); err != nil || got != 1.5 {
		t.Errorf("cgroup v1: %v, %v; want 1.5 s", got, err)
	}
	if _, err := cgroupCPU([]byte("sh: cat: not found")); err == nil {
		t.Error("an error message was read as CPU time")
	}
}

func TestCPUsFor(t *testing.T) {
	for list, want := range map[string]float64{"1": 1, "0-1": 2, "0-1,3": 3, "2,4": 2} {
		if got := (&Local{}).CPUs(context.Background(), "svc", map[string]string{"LAB_CPUS": list}); got != want {
			t.Errorf("LAB_CPUS=%s: %v CPUs, want %v", list, got, want)
		}
	}
	// Without taskset (macOS) the launcher cannot pin, so the list is no budget.
	t.Setenv("PATH", t.TempDir())
	if got, want := (&Local{}).CPUs(context.Background(), "svc", map[string]string{"LAB_CPUS": "1"}), float64(goruntime.NumCPU()); got != want {
		t.Errorf("LAB_CPUS=1 without taskset: %v CPUs, want the machine's %v", got, want)
	}
}

// Only the threads named as a JIT compiler's count: a thread of this test
// spins under a plain name, then under a HotSpot compiler thread's name,
// and only the second spin is read as the JIT's. The thread stays alive
// while it is read: a thread's time leaves /proc/PID/task with it.
func TestProcTreeJITCountsOnlyCompilerThreads(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc")
	}
	names := make(chan string)
	spun := make(chan error)
	tasks := make(chan string, 1)
	go func() {
		// The thread ends with the goroutine, so its names go with it.
		goruntime.LockOSThread()
		task := fmt.Sprintf("/proc/self/task/%d/", syscall.Gettid())
		tasks <- task
		for name := range names {
			err := os.WriteFile(task+"comm", []byte(name), 0)
			// Spin for 0.3 s of this thread's CPU, however busy the machine.
			start, _ := statCPU(task + "stat")
			for used := start; err == nil && used-start < 0.3; {
				used, err = statCPU(task + "stat")
			}
			spun <- err
		}
	}()
	task := <-tasks
	// Wait for the thread to end, so the test can run again (-count); Go
	// keeps the main thread, which never ends.
	defer func() {
		close(names)
		if task == fmt.Sprintf("/proc/self/task/%d/", os.Getpid()) {
			return
		}
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(task); err != nil {
				return
			}
		}
	}()
	read := func(name string) float64 {
		names <- name
		if err := <-spun; err != nil {
			t.Fatalf("naming the thread: %v", err)
		}
		sec, err := procTreeJIT(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		return sec
	}
	before, err := procTreeJIT(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	afterWorker := read("worker")
	afterCompiler := read("C2 CompilerThread0")
	if afterWorker != before {
		t.Errorf("a thread named worker counted as the JIT: %.2f s, then %.2f s", before, afterWorker)
	}
	if afterCompiler-afterWorker < 0.29 {
		t.Errorf("a compiler thread's 0.3 s spin counted %.2f s", afterCompiler-afterWorker)
	}
}

// The compiler threads' stat lines, as jitCommand prints them from a
// container, add up; a name with spaces does not shift the fields.
func TestJITStatsAddsTheCompilerThreads(t *testing.T) {
	out := []byte("812 (C2 CompilerThre) S 1 1 1 0 -1 1077936192 0 0 0 0 1500 230 0 0 20 0 1 0 90 0 0\n" +
		"813 (C1 CompilerThre) S 1 1 1 0 -1 1077936192 0 0 0 0 270 0 0 0 20 0 1 0 90 0 0\n")
	if sec, ok := jitStats(out); !ok || sec != 20 {
		t.Errorf("jitStats = %v, %v; want 20 s (2,000 ticks)", sec, ok)
	}
	if _, ok := jitStats([]byte("")); ok {
		t.Error("no compiler thread read as a reading")
	}
	// The command itself, on this machine's /proc (a container's holds
	// only its own processes): it runs, and whatever it prints parses.
	if _, err := exec.LookPath("sh"); err == nil {
		out, err := exec.Command(jitCommand[0], jitCommand[1:]...).Output()
		if err != nil {
			t.Fatalf("jitCommand: %v", err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if _, err := parseStat([]byte(line)); line != "" && err != nil {
				t.Errorf("jitCommand printed %q: %v", line, err)
			}
		}
	}
}
