//go:build !linux

package run

// pinProcess does nothing where threads cannot be pinned (macOS).
func pinProcess([]int) (restore func()) { return func() {} }
