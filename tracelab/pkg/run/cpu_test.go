package run

import (
	"testing"
	"time"

	"tracelab/pkg/load"
	"tracelab/pkg/result"
)

func servedAt(ends ...time.Time) []int64 {
	var out []int64
	for _, e := range ends {
		out = append(out, e.UnixNano())
	}
	return out
}

func TestCPUUseDividesCPUByTheRequestsServedInTheWindow(t *testing.T) {
	t0 := time.Unix(1000, 0)
	samples := []cpuSample{
		{at: t0, seconds: map[string]float64{"gw": 10, "db": 1}},
		{at: t0.Add(time.Second), seconds: map[string]float64{"gw": 10.5, "db": 1.1}},
		{at: t0.Add(2 * time.Second), seconds: map[string]float64{"gw": 10.8, "db": 1.2}},
	}
	// Two requests in the first second, three in the second, one after the window.
	traces := servedAt(t0.Add(100*time.Millisecond), t0.Add(900*time.Millisecond),
		t0.Add(1100*time.Millisecond), t0.Add(1500*time.Millisecond), t0.Add(1900*time.Millisecond), t0.Add(3*time.Second))
	c := cpuUse(samples, traces, "gw")
	if got := c.use["gw"]; got != (result.CPUUse{Cores: 0.4, MsPerRequest: 160}) {
		t.Errorf("gw: %+v, want 0.8 s over 2 s (0.4 cores) and 800 ms / 5 requests", got)
	}
	if got := c.use["db"].MsPerRequest; got != 40 {
		t.Errorf("db: %v ms per request, want 200 ms / 5", got)
	}
	if len(c.perRequest) != 2 || c.perRequest[0].Amount != 500 || c.perRequest[0].Per != 2 || c.perRequest[1].Per != 3 {
		t.Errorf("per-request blocks %+v, want 500 ms over 2 requests, then 300 over 3", c.perRequest)
	}
	if len(cpuUse(samples[:1], traces, "gw").use) != 0 {
		t.Error("one sample gave a CPU figure")
	}
}

// The served rate comes in blocks of consecutive requests, so a short run
// has as many sub-windows as a long one.
func TestServedRateInBlocksOfRequests(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var ends []time.Time
	for i := 1; i <= 40; i++ { // 20 requests per second for 2 s
		ends = append(ends, t0.Add(time.Duration(i)*50*time.Millisecond))
	}
	samples := []cpuSample{{at: t0, seconds: map[string]float64{"gw": 0}}, {at: t0.Add(2*time.Second + time.Millisecond), seconds: map[string]float64{"gw": 1}}}
	c := cpuUse(samples, servedAt(ends...), "gw")
	if len(c.served) != 4 || c.served[0].Amount != 10 || c.served[0].Per != 0.5 {
		t.Fatalf("blocks %+v, want 4 of 10 requests in 0.5 s", c.served)
	}
	if got := c.served.Estimate(); got != 20 {
		t.Errorf("served %v req/s, want 20", got)
	}
}

func TestBound(t *testing.T) {
	cases := []struct {
		use    result.CPUUse
		cpus   float64
		meanMs float64
		want   string
	}{
		{result.CPUUse{Cores: 0.99, MsPerRequest: 3}, 1, 400, "on-CPU"},  // saturated: requests queue for the CPU
		{result.CPUUse{Cores: 0.37, MsPerRequest: 4}, 1, 110, "off-CPU"}, // case 000's POST: waiting elsewhere
		{result.CPUUse{Cores: 0.30, MsPerRequest: 2.5}, 1, 3, "on-CPU"},  // unsaturated, but requests compute
		{result.CPUUse{Cores: 0.95, MsPerRequest: 3}, 2, 400, "off-CPU"}, // half of two CPUs
		// Sharing its CPU with a neighbour, who took 0.4 of it: on a CPU of
		// its own it might have been either.
		{result.CPUUse{Cores: 0.55, OthersCores: 0.4, MsPerRequest: 2}, 1, 400, "contended"},
		// With its CPU alone, while the CPUs of the rest of the stack (its
		// database, the generator) were full: they could not keep it busy.
		{result.CPUUse{Cores: 0.74, OthersCores: 0.02, RestBusy: 0.95, MsPerRequest: 1.6}, 1, 22, "contended"},
		// Beside a neighbour that left its CPU partly idle: it waited for
		// its database.
		{result.CPUUse{Cores: 0.3, OthersCores: 0.15, MsPerRequest: 4}, 1, 110, "off-CPU"},
	}
	for _, c := range cases {
		if got := bound(c.use, c.cpus, c.meanMs); got != c.want {
			t.Errorf("bound(%+v, %v CPUs, %v ms) = %s, want %s", c.use, c.cpus, c.meanMs, got, c.want)
		}
	}
}

// A request's answer comes at its scheduled instant plus its latency;
// requests that got no answer are not served.
func TestAnsweredAtIsScheduledPlusLatency(t *testing.T) {
	start := time.Unix(1000, 0)
	run := &load.Run{Start: start, Records: []load.Record{
		{ScheduledMs: 500, LatencyMs: 20, Status: 200},
		{ScheduledMs: 100, LatencyMs: 5.5, Status: 503},
		{ScheduledMs: 200, LatencyMs: 1, Status: 0, Error: "connection refused"},
	}}
	got := answeredAt(run)
	want := []int64{start.Add(105500 * time.Microsecond).UnixNano(), start.Add(520 * time.Millisecond).UnixNano()}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("answeredAt = %v, want %v", got, want)
	}
}
