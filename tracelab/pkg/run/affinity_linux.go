package run

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

// eachThread calls f with every thread of this process. Affinity is per
// thread in Linux, and a new thread inherits its creator's, so setting it on
// all of them covers the threads the Go runtime starts afterwards.
func eachThread(f func(tid int)) {
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil {
			f(tid)
		}
	}
}

// pinProcess keeps this process, the load generator when it runs here, on
// the given CPUs, and returns what puts it back where it was allowed to run.
// It does nothing when the CPUs cannot be set.
func pinProcess(cpus []int) (restore func()) {
	var was, want cpuMask
	if len(cpus) == 0 || getAffinity(0, &was) != nil {
		return func() {}
	}
	for _, c := range cpus {
		if c >= 0 && c < 64*len(want) {
			want[c/64] |= 1 << (c % 64)
		}
	}
	eachThread(func(tid int) { setAffinity(tid, &want) })
	return func() { eachThread(func(tid int) { setAffinity(tid, &was) }) }
}
