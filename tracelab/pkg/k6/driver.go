package k6

import (
	"context"
	"os"
)

// Driver runs a load script: k6 on this machine (Local) for the local
// runtime, or k6 as a Job in the cluster (Job) for kind and EKS, so that a
// Kubernetes user needs no k6 and the lab's tool cache on their machine.
type Driver interface {
	// Target is the base URL at which k6 reaches service, or "" when k6
	// runs beside the caller and uses the runtime's own endpoint.
	Target(service string) (string, error)
	// Run runs script with env and returns its summary; the summary is also
	// written to summaryFile and k6's output to log.
	Run(ctx context.Context, script string, env map[string]string, summaryFile string, log *os.File, progress func(string, ...any)) (*Summary, error)
}

// Local runs the k6 binary Bin on this machine.
type Local struct{ Bin string }

func (Local) Target(string) (string, error) { return "", nil }

func (l Local) Run(ctx context.Context, script string, env map[string]string, summaryFile string, log *os.File, progress func(string, ...any)) (*Summary, error) {
	return Run(ctx, l.Bin, script, env, summaryFile, log, progress)
}
