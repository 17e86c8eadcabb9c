package load

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// The parameters that shape the load rather than its requests; every
// definition takes them (docs/load.md).
var modelParams = []string{"RATE", "RATE_SCALE", "DURATION", "VUS", "MAX_VUS", "ITERATIONS", "MAX_DURATION",
	"SHAPE", "BURST_FACTOR", "BURST_MS", "BURST_GAP_MS", "SEED"}

// IsModelParam tells whether name shapes the load (RATE, VUS, ...).
func IsModelParam(name string) bool { return slices.Contains(modelParams, name) }

// Model is how requests are sent.
//
// Open (RATE set, no ITERATIONS): requests leave at the instants of
// Schedule whether or not earlier ones were answered, and each latency is
// measured from its scheduled instant, so a stalled server cannot hide its
// stall by slowing the sender (coordinated omission).
//
// Closed (ITERATIONS, or no RATE): Users send back to back, each waiting
// for its answer, for Iterations requests in all or for Duration.
type Model struct {
	Open     bool
	Schedule []time.Duration // open: each request's instant from the start
	// Users are the closed model's senders, and the open model's senders
	// allocated up front (more are added up to MaxUsers when all are busy).
	Users, MaxUsers int
	Iterations      int
	Duration        time.Duration
}

func (m Model) String() string {
	switch {
	case m.Open:
		return fmt.Sprintf("open model: %d requests over %s", len(m.Schedule), m.Duration)
	case m.Iterations > 0:
		return fmt.Sprintf("closed model: %d users, %d requests", m.Users, m.Iterations)
	default:
		return fmt.Sprintf("closed model: %d users for %s", m.Users, m.Duration)
	}
}

// pacer is the model's pace for Vegeta's attacker, and the attack's
// duration (0: the pace ends it).
func (m Model) pacer() (vegeta.Pacer, time.Duration) {
	if m.Open {
		return schedulePacer(m.Schedule), 0
	}
	return backToBack{iterations: m.Iterations}, m.Duration
}

// of is " of N" when the model knows how many requests it sends.
func (m Model) of() string {
	switch {
	case m.Open:
		return fmt.Sprintf(" of %d", len(m.Schedule))
	case m.Iterations > 0:
		return fmt.Sprintf(" of %d", m.Iterations)
	}
	return ""
}

// ModelOf reads the model from the parameters (strings, as a scenario's
// profile gives them).
func ModelOf(params map[string]string) (Model, error) {
	p := modelReader{params: params}
	users := p.int("VUS", 1)
	if params["ITERATIONS"] != "" || params["RATE"] == "" {
		m := Model{Users: users, MaxUsers: users, Iterations: p.int("ITERATIONS", 0)}
		if m.Iterations > 0 {
			m.Duration = p.duration("MAX_DURATION", 30*time.Minute)
		} else {
			m.Duration = p.duration("DURATION", 30*time.Second)
		}
		return m, p.check(users >= 1, "VUS must be at least 1")
	}
	rate := p.float("RATE", 0) * p.float("RATE_SCALE", 1)
	m := Model{Open: true, Users: users, MaxUsers: p.int("MAX_VUS", 4*users), Duration: p.duration("DURATION", 30*time.Second)}
	if err := p.check(rate > 0 && users >= 1 && m.MaxUsers >= users, "RATE x RATE_SCALE must be above 0, VUS at least 1, MAX_VUS at least VUS"); err != nil {
		return m, err
	}
	switch shape := or(params["SHAPE"], "uniform"); shape {
	case "uniform":
		m.Schedule = arrivals([]segment{{m.Duration, rate}})
	case "bursty":
		m.Schedule = arrivals(bursts(m.Duration, rate, p.float("BURST_FACTOR", 4), p.duration("BURST_MS", 300*time.Millisecond),
			p.duration("BURST_GAP_MS", 2*time.Second), uint64(p.int("SEED", 1))))
	default:
		p.fail("SHAPE must be uniform or bursty, not %q", shape)
	}
	return m, p.err
}

// segment is a stretch of the schedule at a constant rate (per second).
type segment struct {
	d    time.Duration
	rate float64
}

// arrivals are the instants at which the cumulative expected count crosses
// 0, 1, 2, ...: evenly spaced within a segment, and seamless across them.
func arrivals(segs []segment) []time.Duration {
	var out []time.Duration
	var start time.Duration
	next := 0.0 // the count the next arrival is due at
	count := 0.0
	for _, s := range segs {
		end := count + s.rate*s.d.Seconds()
		for ; next < end; next++ {
			out = append(out, start+time.Duration((next-count)/s.rate*float64(time.Second)))
		}
		count, start = end, start+s.d
	}
	return out
}

// bursts is case study 001's arrival pattern: spikes of factor x the base
// rate lasting burst, at random times (gaps drawn from an exponential
// distribution of mean gap, at least 200 ms, seeded so that every run of a
// profile sees the same spikes). The base rate is lowered to make up for
// the spikes, so the run sends as many requests as a uniform one of the
// same mean rate: only the pattern differs.
func bursts(total time.Duration, mean, factor float64, burst, gap time.Duration, seed uint64) []segment {
	rng := rand.New(rand.NewPCG(seed, seed))
	var segs []segment
	var at time.Duration
	weighted := 0.0 // the sum of duration x level, in seconds
	add := func(d time.Duration, level float64) {
		d = min(d, total-at)
		if d > 0 {
			segs = append(segs, segment{d, level})
			weighted += d.Seconds() * level
			at += d
		}
	}
	for at < total {
		add(max(200*time.Millisecond, time.Duration(rng.ExpFloat64()*float64(gap))), 1)
		add(burst, factor)
	}
	base := mean * total.Seconds() / weighted
	for i := range segs {
		segs[i].rate *= base
	}
	return segs
}

// modelReader reads numbers from the parameters and keeps the first error.
type modelReader struct {
	params map[string]string
	err    error
}

func (p *modelReader) fail(format string, a ...any) {
	if p.err == nil {
		p.err = fmt.Errorf(format, a...)
	}
}

func (p *modelReader) check(ok bool, msg string) error {
	if !ok {
		p.fail("%s", msg)
	}
	return p.err
}

func (p *modelReader) float(name string, def float64) float64 {
	v, ok := p.params[name]
	if !ok || v == "" {
		return def
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		p.fail("%s=%q is not a number", name, v)
	}
	return x
}

func (p *modelReader) int(name string, def int) int {
	v, ok := p.params[name]
	if !ok || v == "" {
		return def
	}
	x, err := strconv.Atoi(v)
	if err != nil || x < 0 {
		p.fail("%s=%q is not a whole number", name, v)
	}
	return x
}

// duration reads 500ms, 60s or 2m; a bare number counts in the unit of the
// name's suffix (BURST_MS in milliseconds), else in seconds.
func (p *modelReader) duration(name string, def time.Duration) time.Duration {
	v, ok := p.params[name]
	if !ok || v == "" {
		return def
	}
	if x, err := strconv.ParseFloat(v, 64); err == nil {
		unit := time.Second
		if strings.HasSuffix(name, "_MS") {
			unit = time.Millisecond
		}
		return time.Duration(x * float64(unit))
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		p.fail("%s=%q is not a duration such as 500ms, 60s or 2m", name, v)
	}
	return d
}

// schedulePacer sends request n at its instant after the start, and stops
// after the last.
type schedulePacer []time.Duration

func (p schedulePacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if hits >= uint64(len(p)) {
		return 0, true
	}
	sleep(p[hits] - elapsed)
	return 0, false
}

// Rate is Vegeta's view of the pace; the attacker itself does not read it.
func (p schedulePacer) Rate(time.Duration) float64 { return 0 }

// backToBack is the closed model's pace: a request as soon as a user is
// free (Vegeta's attacker blocks while all MaxWorkers are busy), up to
// iterations requests when set.
type backToBack struct{ iterations int }

func (p backToBack) Pace(_ time.Duration, hits uint64) (time.Duration, bool) {
	return 0, p.iterations > 0 && hits >= uint64(p.iterations)
}

func (p backToBack) Rate(time.Duration) float64 { return 0 }
