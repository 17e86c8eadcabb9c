package kubecluster

import "syscall"

// dieWithParent has the kernel kill a part of the cluster when the test
// binary dies without running its cleanups (go test's -timeout panic, a
// kill -9), so that no etcd or API server outlives its test.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
