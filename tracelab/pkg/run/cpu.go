package run

import (
	"context"
	"math"
	"slices"
	"syscall"
	"time"

	"tracelab/pkg/bootstrap"
	"tracelab/pkg/load"
	"tracelab/pkg/result"
	"tracelab/pkg/runtime"
)

// cpuEvery is how often the services' CPU time is read during a window: a
// fast variant's few seconds then still give enough sub-windows for an
// interval, and a read (/proc, or the cgroup through kubectl exec) costs
// far less. A read that takes longer only drops ticks.
const cpuEvery = 250 * time.Millisecond

// servedBlock is how many consecutive requests make one sub-window of the
// served rate: at least 10, and about 50 sub-windows whatever the run's
// length, so a 3-second variant has as many as a minute-long one.
func servedBlock(n int) int { return max(10, n/50) }

// A service is on-CPU when it uses at least saturatedShare of the CPUs it
// may use (case study 000: the CPU-bound GET at 99% of its allocation, the
// POST whose bottleneck was elsewhere at 37%), or when CPU time is at
// least onCPUShare of a request's mean latency: most of the request is
// spent computing, not waiting. Where the runtime can tell, it is
// contended when it falls short of saturatedShare while other programs
// ran on its CPUs enough to make up the difference, or while the CPUs the
// rest of the stack and the load generator keep to were busy at least
// saturatedShare: either took what it might have used, or what drives
// and serves it could not keep up, and whether it would have been on-CPU
// cannot be told. Otherwise it is off-CPU.
const (
	saturatedShare = 0.8
	onCPUShare     = 0.5
)

type cpuSample struct {
	at      time.Time
	seconds map[string]float64 // CPU time used, by service
	busy    float64            // CPU time of every program on the entrypoint's CPUs
	rest    float64            // and on the other CPUs
	restN   int                // how many those are
	busyOK  bool
	self    float64 // this process's CPU time: the load generator's, when it runs here
}

// sampleCPU reads the services' CPU time now and every cpuEvery until the
// returned stop is called, which reads it once more and returns the reads;
// entry are the entrypoint's settings, which say its CPUs. A failed read is
// skipped: CPU is reported, not required.
func (r *Runner) sampleCPU(ctx context.Context, services []string, entry map[string]string) (stop func() []cpuSample) {
	counter, _ := r.Runtime.(runtime.CPUCounter)
	read := func() (cpuSample, bool) {
		sec, err := r.Runtime.CPUSeconds(ctx, services)
		s := cpuSample{at: time.Now(), seconds: sec, self: selfCPU()}
		if counter != nil {
			s.busy, s.rest, s.restN, s.busyOK = counter.BusySeconds(entry)
		}
		return s, err == nil && len(sec) > 0
	}
	done := make(chan struct{})
	out := make(chan []cpuSample)
	go func() {
		var samples []cpuSample
		if s, ok := read(); ok {
			samples = append(samples, s)
		}
		tick := time.NewTicker(cpuEvery)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				if s, ok := read(); ok {
					samples = append(samples, s)
				}
			case <-done:
				if s, ok := read(); ok {
					samples = append(samples, s)
				}
				out <- samples
				return
			}
		}
	}()
	return func() []cpuSample {
		close(done)
		return <-out
	}
}

// cpuOf is what the samples say of each service over the window, with
// the requests answered then; the entrypoint's CPU per request and the
// served rate also as sub-window blocks, for intervals.
type cpuOf struct {
	use        map[string]result.CPUUse
	self       float64          // this process's cores: the load generator's, when it runs here
	perRequest bootstrap.Blocks // entrypoint CPU ms per request
	served     bootstrap.Blocks // requests per second
}

// answeredAt is when each answered request of a load run got its answer,
// in Unix nanoseconds, in order: the load engine's clock, which is this
// machine's, or on Kubernetes its node's.
func answeredAt(run *load.Run) []int64 {
	ends := make([]int64, 0, len(run.Records))
	for _, rec := range run.Records {
		if rec.Status != 0 {
			ends = append(ends, run.Start.Add(time.Duration((rec.ScheduledMs+rec.LatencyMs)*float64(time.Millisecond))).UnixNano())
		}
	}
	slices.Sort(ends)
	return ends
}

// cpuUse divides the services' CPU over the samples' window by the
// requests answered in it (ends, from answeredAt).
func cpuUse(samples []cpuSample, ends []int64, entrypoint string) cpuOf {
	var c cpuOf
	if len(samples) < 2 {
		return c
	}
	servedIn := func(from, to time.Time) int {
		lo, _ := slices.BinarySearch(ends, from.UnixNano())
		hi, _ := slices.BinarySearch(ends, to.UnixNano())
		return hi - lo
	}
	first, last := samples[0], samples[len(samples)-1]
	requests := servedIn(first.at, last.at)
	window := last.at.Sub(first.at).Seconds()
	c.use = map[string]result.CPUUse{}
	for svc, end := range last.seconds {
		start, ok := first.seconds[svc]
		if !ok || window <= 0 {
			continue
		}
		u := result.CPUUse{Cores: round3((end - start) / window)}
		if svc == entrypoint && first.busyOK && last.busyOK {
			u.OthersCores = round3(max(0, (last.busy-first.busy)-(end-start)) / window)
			if last.restN > 0 {
				u.RestBusy = round3(min(1, (last.rest-first.rest)/window/float64(last.restN)))
			}
		}
		if requests > 0 {
			u.MsPerRequest = round3(1000 * (end - start) / float64(requests))
		}
		c.use[svc] = u
	}
	if window > 0 {
		c.self = round3((last.self - first.self) / window)
	}
	for i := 1; i < len(samples); i++ {
		a, b := samples[i-1], samples[i]
		s0, ok0 := a.seconds[entrypoint]
		s1, ok1 := b.seconds[entrypoint]
		if ok0 && ok1 {
			c.perRequest = append(c.perRequest, bootstrap.Block{Amount: 1000 * (s1 - s0), Per: float64(servedIn(a.at, b.at))})
		}
	}
	// The served rate in blocks of consecutive requests: each is k requests
	// over the time since the previous block's last one.
	lo, _ := slices.BinarySearch(ends, first.at.UnixNano())
	hi, _ := slices.BinarySearch(ends, last.at.UnixNano())
	inWindow := ends[lo:hi]
	k := servedBlock(len(inWindow))
	prev := first.at.UnixNano()
	for i := k - 1; i < len(inWindow); i += k {
		c.served = append(c.served, bootstrap.Block{Amount: float64(k), Per: float64(inWindow[i]-prev) / 1e9})
		prev = inWindow[i]
	}
	return c
}

// bound says whether the entrypoint service was on-CPU or off-CPU (see
// saturatedShare), given the CPUs it may use and its requests' mean
// latency.
func bound(u result.CPUUse, cpus, meanMs float64) string {
	switch {
	case u.Cores >= saturatedShare*cpus || (meanMs > 0 && u.MsPerRequest >= onCPUShare*meanMs):
		return "on-CPU"
	case u.Cores+u.OthersCores >= saturatedShare*cpus || u.RestBusy >= saturatedShare:
		return "contended"
	}
	return "off-CPU"
}

// selfCPU is the CPU time, in seconds, this process has used.
func selfCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
