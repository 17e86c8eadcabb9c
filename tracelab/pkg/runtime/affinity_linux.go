package runtime

import (
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// cpuMask is the kernel's cpu_set_t for up to 1024 CPUs.
type cpuMask [16]uint64

func setAffinity(tid int, m *cpuMask) error {
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, uintptr(tid), unsafe.Sizeof(*m), uintptr(unsafe.Pointer(m)))
	if errno != 0 {
		return errno
	}
	return nil
}

func getAffinity(tid int, m *cpuMask) error {
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, uintptr(tid), unsafe.Sizeof(*m), uintptr(unsafe.Pointer(m)))
	if errno != 0 {
		return errno
	}
	return nil
}

// threadsOf lists the threads of a process. Affinity is per thread in
// Linux, and a new thread inherits its creator's, so setting it on all of
// them covers the threads started afterwards.
func threadsOf(pid int) []int {
	tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	var tids []int
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids
}

// PinProcesses keeps every thread of the given processes on the given CPUs,
// and returns what puts each thread back where it was allowed to run. A
// thread that cannot be set (it ended, or is another user's) is left.
func PinProcesses(pids []int, cpus []int) (restore func()) {
	var want cpuMask
	for _, c := range cpus {
		if c >= 0 && c < 64*len(want) {
			want[c/64] |= 1 << (c % 64)
		}
	}
	was := map[int]*cpuMask{}
	if len(cpus) > 0 {
		for _, pid := range pids {
			for _, tid := range threadsOf(pid) {
				m := new(cpuMask)
				if getAffinity(tid, m) == nil && setAffinity(tid, &want) == nil {
					was[tid] = m
				}
			}
		}
	}
	return func() {
		for tid, m := range was {
			setAffinity(tid, m)
		}
	}
}
