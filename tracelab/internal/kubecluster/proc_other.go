//go:build !linux

package kubecluster

import "syscall"

// dieWithParent: only Linux can tie a child's life to its parent's; elsewhere
// a test binary killed before its cleanups leaves the cluster running.
func dieWithParent() *syscall.SysProcAttr { return nil }
