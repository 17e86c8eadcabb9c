package run

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"tracelab/pkg/load"
	"tracelab/pkg/result"
	"tracelab/pkg/runtime"
	"tracelab/pkg/scenario"
)

// compilingJVM is a runtime whose service's JIT compiler uses the given
// shares of a CPU, one per step of load, then stays at the last.
type compilingJVM struct {
	runtime.Runtime // only JITSeconds is called
	shares          []float64
	steps           int
	seconds         float64
}

func (c *compilingJVM) JITSeconds(context.Context, string) (float64, bool) { return c.seconds, true }

// Run is the load: each step runs settleStep, during which the compiler
// uses its share.
func (c *compilingJVM) Run(_ context.Context, _ *load.Definition, opt load.Options) (*load.Run, error) {
	if opt.Params["DURATION"] != settleStep.String() {
		return nil, fmt.Errorf("a step ran for %q", opt.Params["DURATION"])
	}
	share := c.shares[min(c.steps, len(c.shares)-1)]
	c.steps++
	c.seconds += share * settleStep.Seconds()
	return &load.Run{Summary: load.Summary{Requests: 100, ThroughputRPS: 20, DurationS: settleStep.Seconds()}}, nil
}

func (c *compilingJVM) Target(string) (string, error) { return "", nil }

func settleWith(rt runtime.Runtime, drv load.Driver, upTo time.Duration) (time.Duration, string, error) {
	var said []string
	r := &Runner{Runtime: rt, Load: drv, Progress: func(f string, a ...any) { said = append(said, fmt.Sprintf(f, a...)) }}
	s := &scenario.Scenario{Entrypoint: scenario.Entrypoint{Service: "gateway"}}
	took, err := r.settle(context.Background(), s, upTo, map[string]string{"VUS": "8", "DURATION": "15s"}, "capacity fixed", "", "")
	return took, strings.Join(said, "\n"), err
}

// The probe waits while the compiler is busy and starts once a step finds
// it quiet, as in the antpath gateway's probes.
func TestSettleWaitsForTheCompilerToGoQuiet(t *testing.T) {
	jvm := &compilingJVM{shares: []float64{0.3, 0.17, 0.11, 0.03}}
	took, said, err := settleWith(jvm, jvm, 4*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if jvm.steps != 4 || took != 4*settleStep {
		t.Errorf("settled after %d steps (%s); want 4 (%s)", jvm.steps, took, 4*settleStep)
	}
	if !strings.Contains(said, "the JIT has settled after 20s flat out (its compiler: 3% of a CPU") {
		t.Errorf("progress:\n%s", said)
	}
}

// A compiler that never goes quiet is waited for until upTo, then the
// probe measures anyway and says so.
func TestSettleGivesUpAtItsLimit(t *testing.T) {
	jvm := &compilingJVM{shares: []float64{0.2}}
	took, said, err := settleWith(jvm, jvm, 12*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if jvm.steps != 3 || took != 15*time.Second {
		t.Errorf("gave up after %d steps (%s); want 3 (15s)", jvm.steps, took)
	}
	if !strings.Contains(said, "the JIT still compiles after 15s flat out (20% of a CPU): probing anyway") {
		t.Errorf("progress:\n%s", said)
	}
}

// blindRuntime cannot see threads (kind, EKS).
type blindRuntime struct{ runtime.Runtime }

// Where the compiler cannot be seen, nothing is waited for, and the
// progress says the probe did not wait.
func TestSettleWithoutAJITCounterDoesNotWait(t *testing.T) {
	drv := &compilingJVM{shares: []float64{0.3}}
	took, said, err := settleWith(blindRuntime{}, drv, 4*time.Minute)
	if err != nil || took != 0 || drv.steps != 0 {
		t.Errorf("took %s, %d steps, err %v; want no wait", took, drv.steps, err)
	}
	if !strings.Contains(said, "cannot see gateway's JIT compiler here: probing without waiting for it") {
		t.Errorf("progress:\n%s", said)
	}
}

// A probe of a JVM caught compiling judges the compiler's CPU as a
// neighbour's: chatty-db's POST in the cold CI run of issue 34 (0.39 of
// the 0.83 cores it read were the compiler's) filled its CPU only with the
// compiler, so it is contended, not on-CPU; its GET in a later cold run
// (0.92 cores, 0.06 the compiler's) stays on-CPU; a compiler that did not
// fill the CPU with the service leaves it off-CPU; and where the compiler
// cannot be read the figures are judged as they are.
func TestAProbeJudgesTheJITCompilerAsANeighbour(t *testing.T) {
	post := result.CPUUse{Cores: 0.827, MsPerRequest: 16.043, OthersCores: 0.12, RestBusy: 0.669}
	get := result.CPUUse{Cores: 0.92, MsPerRequest: 6.044, OthersCores: 0.022, RestBusy: 0.186}
	quiet := result.CPUUse{Cores: 0.5, MsPerRequest: 5, OthersCores: 0.02, RestBusy: 0.2}
	cases := []struct {
		name   string
		use    result.CPUUse
		meanMs float64
		jit    *float64
		want   string
	}{
		{"the POST, its compiler at 39%", post, 132, ptr(0.386), "contended"},
		{"the POST, its compiler unread", post, 132, nil, "on-CPU"},
		{"the GET, its compiler at 6%", get, 66, ptr(0.06), "on-CPU"},
		{"half a CPU, a third of it the compiler's", quiet, 100, ptr(0.17), "off-CPU"},
		// A request that computes: its share of the latency is read
		// without the compiler's part.
		{"computing, but half of it the compiler", result.CPUUse{Cores: 0.4, MsPerRequest: 3}, 5, ptr(0.2), "off-CPU"},
	}
	for _, c := range cases {
		if got := probeBound(c.use, 1, c.meanMs, c.jit); got != c.want {
			t.Errorf("%s: bound %q, want %q", c.name, got, c.want)
		}
	}
}

func ptr(x float64) *float64 { return &x }
