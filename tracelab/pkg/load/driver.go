package load

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Driver runs a load definition: in this process (Local) on the local
// runtime, or as a Job in the cluster on kind and EKS (pkg/loadjob), so
// that a Kubernetes user needs nothing but kubectl on their machine.
type Driver interface {
	// Target is the base URL at which the load reaches service, or "" when
	// it runs beside the caller and uses the runtime's own endpoint.
	Target(service string) (string, error)
	Run(ctx context.Context, def *Definition, opt Options) (*Run, error)
}

// Local runs the load in this process.
type Local struct{}

func (Local) Target(string) (string, error) { return "", nil }

func (Local) Run(ctx context.Context, def *Definition, opt Options) (*Run, error) {
	return def.Run(ctx, opt)
}

// File is where the definition was read from.
func (d *Definition) File() string { return d.file }

// Source is the definition's text as read.
func (d *Definition) Source() []byte { return d.source }

// The lines around a run's JSON on standard output, where a Job's log
// carries it among progress lines (`tracelab load run --out -`).
const (
	runBegin = "--- tracelab load run ---"
	runEnd   = "--- end of tracelab load run ---"
)

// WriteMarked writes run as one JSON line between the markers.
func WriteMarked(w io.Writer, run *Run) error {
	data, err := json.Marshal(run)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n%s\n%s\n", runBegin, data, runEnd)
	return err
}

// ReadMarked finds the run WriteMarked wrote in log: the JSON object line
// between the markers. A container's log merges its standard output and
// error in the order the runtime copied them, so a line of standard error
// can land between the markers; `load run --out -` writes only to standard
// output, since such a line can also land inside the JSON.
func ReadMarked(log string) (*Run, error) {
	i := strings.Index(log, runBegin+"\n")
	if i < 0 {
		return nil, fmt.Errorf("no %q line", runBegin)
	}
	rest := log[i+len(runBegin)+1:]
	k := strings.Index(rest, "\n"+runEnd)
	if k < 0 {
		return nil, fmt.Errorf("no %q line after the run", runEnd)
	}
	for _, line := range strings.Split(rest[:k], "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var run Run
		if err := json.Unmarshal([]byte(line), &run); err != nil {
			return nil, fmt.Errorf("the run's JSON: %v", err)
		}
		return &run, nil
	}
	return nil, fmt.Errorf("no JSON line between %q and %q", runBegin, runEnd)
}
