package run

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"tracelab/pkg/runtime"
)

// dyingStack is a runtime whose process postgres dies at a given time.
type dyingStack struct {
	runtime.Runtime // only Exited is called
	diesAt          time.Time
	looks           atomic.Int32
}

func (d *dyingStack) Exited(context.Context) error {
	d.looks.Add(1)
	if !d.diesAt.IsZero() && time.Now().After(d.diesAt) {
		return &runtime.ExitError{Name: "postgres", Code: 137, LastLine: "LOG:  database system is ready", Log: ".state/logs/postgres.log"}
	}
	return nil
}

// A process dying while the run waits (for the load, for traces) ends the
// step at once, and the error names the process, not what the step saw.
func TestADeadProcessEndsTheStepAndIsNamed(t *testing.T) {
	rt := &dyingStack{diesAt: time.Now().Add(time.Second)}
	r := &Runner{Runtime: rt}
	start := time.Now()
	err := r.whileStackRuns(context.Background(), func(ctx context.Context) error {
		<-ctx.Done() // a step that would wait for minutes
		return ctx.Err()
	})
	var exited *runtime.ExitError
	if !errors.As(err, &exited) || exited.Name != "postgres" || exited.Code != 137 {
		t.Fatalf("err = %v; want postgres's ExitError", err)
	}
	if took := time.Since(start); took > time.Second+2*stackPoll {
		t.Errorf("the step ended %s after it started; the process died after 1s and is looked for every %s", took, stackPoll)
	}
	if want := "postgres exited with code 137 during the run: LOG:  database system is ready (log: .state/logs/postgres.log)"; err.Error() != want {
		t.Errorf("message %q\nwant      %q", err, want)
	}
}

// A step that failed because its process died just before (a refused
// connection) reports the death, even before the watcher's next look.
func TestAFailureCausedByADeathNamesTheDeath(t *testing.T) {
	rt := &dyingStack{diesAt: time.Now()}
	r := &Runner{Runtime: rt}
	err := r.whileStackRuns(context.Background(), func(context.Context) error {
		return errors.New("connection refused")
	})
	var exited *runtime.ExitError
	if !errors.As(err, &exited) {
		t.Fatalf("err = %v; want the ExitError", err)
	}
}

// While everything runs, the step's own result stands, success or failure.
func TestAHealthyStackLeavesTheStepsResult(t *testing.T) {
	r := &Runner{Runtime: &dyingStack{}}
	if err := r.whileStackRuns(context.Background(), func(context.Context) error { return nil }); err != nil {
		t.Errorf("err = %v", err)
	}
	boom := errors.New("boom")
	if err := r.whileStackRuns(context.Background(), func(context.Context) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("err = %v; want boom", err)
	}
}

// A process killed by a signal has no exit code: the message says so.
func TestAKilledProcessIsSaidKilled(t *testing.T) {
	err := &runtime.ExitError{Name: "jaeger", Code: -1, LastLine: "ready", Log: ".state/logs/jaeger.log"}
	if want := "jaeger was killed (by a signal: no exit code) during the run: ready (log: .state/logs/jaeger.log)"; err.Error() != want {
		t.Errorf("%q\nwant %q", err, want)
	}
}
