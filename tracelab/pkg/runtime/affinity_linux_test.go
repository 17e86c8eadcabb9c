package runtime

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// allowed is every thread's Cpus_allowed_list, as the kernel reports it.
func allowed(t *testing.T) map[string]bool {
	t.Helper()
	lists := map[string]bool{}
	for _, tid := range threadsOf(os.Getpid()) {
		data, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/status")
		if err != nil {
			continue // a thread that ended meanwhile
		}
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				lists[strings.TrimSpace(v)] = true
			}
		}
	}
	return lists
}

func TestPinProcessesPinsEveryThreadAndRestores(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: nothing to keep off")
	}
	before := allowed(t)
	unpin := PinProcesses([]int{os.Getpid()}, []int{0})
	during := allowed(t)
	unpin()
	after := allowed(t)
	if len(during) != 1 || !during["0"] {
		t.Errorf("pinned to CPU 0, the threads may run on %v", during)
	}
	if len(after) != len(before) {
		t.Errorf("after: %v, before: %v", after, before)
	}
	for l := range before {
		if !after[l] {
			t.Errorf("after: %v, before: %v", after, before)
		}
	}
}
