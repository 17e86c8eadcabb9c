package detect

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strconv"
	"testing"
)

// freeLoopThread simulates one free event-loop thread: k client
// connections, each in a closed loop of a call (callMs, ±15%), a little
// work, and an exponential think time; nothing holds the thread, so the
// calls of different connections overlap whenever they happen to. It
// returns the first n calls in start order.
func freeLoopThread(rng *rand.Rand, k, n int, callMs, thinkMs float64) []loopCall {
	var calls []loopCall
	for c := 0; c < k; c++ {
		conn := "10.0.0.1:" + strconv.Itoa(40000+c) // the handler's clientConnection
		at := int64(rng.ExpFloat64() * thinkMs * 1e6)
		for i := 0; i < n; i++ {
			d := int64(callMs * (0.85 + 0.3*rng.Float64()) * 1e6)
			calls = append(calls, loopCall{call: callSpan{Start: at, End: at + d}, handled: true, conn: conn})
			at += d + 500_000 + int64(rng.ExpFloat64()*thinkMs*1e6)
		}
	}
	sort.Slice(calls, func(i, j int) bool { return calls[i].call.Start < calls[j].call.Start })
	return calls[:n]
}

func overlapFree(calls []loopCall) bool {
	for i := 1; i < len(calls); i++ {
		if calls[i].call.Start < calls[i-1].call.End {
			return false
		}
	}
	return true
}

// freeLoopLogProbability is a p-value: on free loops, the share of threads
// whose calls did not overlap and scored at most ln(a) must be at most a,
// for any a. Checked at a = 10% and 1% (a rate as strict as 1e-3 would need
// millions of threads to measure) over connections, occupancies and run
// lengths, with three standard errors of room for the sampling.
func TestFreeLoopLogProbabilityIsCalibrated(t *testing.T) {
	const trials = 1500
	rng := rand.New(rand.NewSource(5))
	for _, k := range []int{2, 4, 8} {
		for _, thinkMs := range []float64{8, 40, 200} {
			for _, n := range []int{8, 20, 60} {
				hits := map[float64]int{}
				noOverlap := 0
				for range trials {
					calls := freeLoopThread(rng, k, n, 4, thinkMs)
					if !overlapFree(calls) {
						continue
					}
					noOverlap++
					lp := freeLoopLogProbability(calls)
					for _, a := range []float64{0.1, 0.01} {
						if lp <= math.Log(a) {
							hits[a]++
						}
					}
				}
				for a, h := range hits {
					rate := float64(h) / trials
					if limit := a + 3*math.Sqrt(a*(1-a)/trials); rate > limit {
						t.Errorf("%s: %.4f of free threads scored <= ln(%g), above %.4f",
							fmt.Sprintf("%d connections, think %g ms, %d calls (%d without overlap)", k, thinkMs, n, noOverlap), rate, a, limit)
					}
				}
			}
		}
	}
}
