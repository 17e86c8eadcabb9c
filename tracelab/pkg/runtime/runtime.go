// Package runtime is the one interface through which the scenario runner
// reaches a place where the lab runs: plain local processes (the default),
// or a Kubernetes cluster (kind, EKS) driven by kubectl.
package runtime

import (
	"context"
	"fmt"

	"tracelab/pkg/lab"
	"tracelab/pkg/load"
)

// Settings are a variant's startup settings (lab.Settings), named here
// because Up takes them.
type Settings = lab.Settings

// Runtime brings services up with a variant's settings, says where the
// endpoints are, and tears everything down.
type Runtime interface {
	Name() string
	// Up starts the services (and the telemetry stack they depend on), or
	// restarts those whose settings changed, and returns once all are ready.
	// variant is recorded on every span as the resource attribute lab.variant.
	Up(ctx context.Context, services []string, settings Settings, variant string) error
	// Endpoint is the base URL of a service's HTTP API.
	Endpoint(service string) (string, error)
	// JaegerURL is the base URL of Jaeger's query API.
	JaegerURL() string
	// PrometheusURL is the base URL of the Prometheus that scrapes the
	// services' metrics.
	PrometheusURL() string
	// Reconnect makes the URLs given out since Up reach the stack again if
	// what carries them has stopped (EKS's port-forwards, after a pod
	// restart or a dropped connection), and fails when it cannot. Callers
	// run it before they use a URL they got minutes ago.
	Reconnect(ctx context.Context) error
	// CPUSeconds is the CPU time, in seconds, each of the services has used
	// since it started: its process tree here, its container's cgroup on
	// Kubernetes. A service that cannot be read is left out of the map.
	CPUSeconds(ctx context.Context, services []string) (map[string]float64, error)
	// CPUs is how many CPUs a service may use with the given settings: what
	// its CPU use is judged against (on-CPU or off-CPU).
	CPUs(ctx context.Context, service string, settings map[string]string) float64
	// Exited is nil while everything the last Up left running still runs.
	// Otherwise it is an *ExitError naming the first process or workload
	// that stopped since, so a run can say what died rather than what it
	// did to the load.
	Exited(ctx context.Context) error
	// Status describes the stack's processes or workloads, one per line.
	Status(ctx context.Context) (string, error)
	// Down stops everything the runtime started; it is safe to call twice.
	Down(ctx context.Context) error
	// Running tells whether the runtime's stack is up.
	Running() bool
	// LoadDriver is where this runtime's load runs: beside the caller, or
	// in the cluster the services run in.
	LoadDriver() load.Driver
}

// CPUCounter is a runtime that can tell how busy the machine's CPUs were:
// what else ran where a service may run (the local runtime, from
// /proc/stat).
type CPUCounter interface {
	// BusySeconds is the CPU time, in seconds, every program together has
	// spent on the service's CPUs (its list, else the machine's), and on
	// the other CPUs, with how many those are.
	BusySeconds(settings map[string]string) (own, rest float64, restCPUs int, ok bool)
}

// JITCounter is a runtime that can read how much CPU time a service's JIT
// compiler threads have used (the local runtime, from /proc): a JVM still
// compiling is not yet at its steady state.
type JITCounter interface {
	// JITSeconds is that time, in seconds, since the service started; ok
	// is false when it cannot be read.
	JITSeconds(ctx context.Context, service string) (sec float64, ok bool)
}

// ExitError is a process or workload of the stack that stopped on its own
// while a run needed it.
type ExitError struct {
	Name     string
	Code     int    // its exit code; -1 when a signal killed it, or unknown
	LastLine string // of its log
	Log      string // where the whole log is
}

func (e *ExitError) Error() string {
	how := fmt.Sprintf("exited with code %d", e.Code)
	if e.Code < 0 { // a signal's death has no exit code (Go's ExitCode is -1)
		how = "was killed (by a signal: no exit code)"
	}
	return fmt.Sprintf("%s %s during the run: %s (log: %s)", e.Name, how, e.LastLine, e.Log)
}

// Progress receives a runtime's progress lines (printf-style).
type Progress func(format string, a ...any)

// New returns the runtime called name on the checkout c.
func New(name string, c *lab.Checkout, progress Progress) (Runtime, error) {
	switch name {
	case "", "local":
		return NewLocal(c, progress)
	case "kind", "eks":
		return NewKube(name, c, progress)
	default:
		return nil, fmt.Errorf("unknown runtime %q; known runtimes: local, kind, eks", name)
	}
}
