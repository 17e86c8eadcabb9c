//go:build !linux

package runtime

// PinProcesses does nothing where threads cannot be pinned (macOS).
func PinProcesses([]int, []int) (restore func()) { return func() {} }
