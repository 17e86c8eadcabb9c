package trace

import (
	"slices"
	"sort"
)

// Interval is a half-open time range [Start, End) in nanoseconds. Half-open
// matters: a call that starts exactly when the previous one ends did not run
// alongside it.
type Interval struct {
	Start, End int64
}

// Intervals returns the time ranges of spans, in the same order.
func Intervals(spans []*Span) []Interval {
	iv := make([]Interval, len(spans))
	for i, s := range spans {
		iv[i] = Interval{s.Start, s.End}
		if iv[i].End < iv[i].Start {
			iv[i].End = iv[i].Start
		}
	}
	return iv
}

// MaxConcurrency is the largest number of intervals in progress at one
// instant, found with a sweep line over sorted starts and ends. Touching
// intervals (one ends where the next starts) do not overlap. A zero-length
// interval still counts as one call in progress.
func MaxConcurrency(iv []Interval) int {
	if len(iv) == 0 {
		return 0
	}
	starts := make([]int64, len(iv))
	ends := make([]int64, len(iv))
	for i, v := range iv {
		starts[i] = v.Start
		ends[i] = v.End
		if ends[i] <= starts[i] {
			// Give instantaneous calls one nanosecond so each one is seen
			// starting before it ends.
			ends[i] = starts[i] + 1
		}
	}
	slices.Sort(starts)
	slices.Sort(ends)
	active, best, e := 0, 0, 0
	for _, s := range starts {
		for e < len(ends) && ends[e] <= s { // an end at s frees its slot first
			active--
			e++
		}
		active++
		if active > best {
			best = active
		}
	}
	return best
}

// UnionLength is the total time covered by at least one interval.
func UnionLength(iv []Interval) int64 {
	if len(iv) == 0 {
		return 0
	}
	s := make([]Interval, len(iv))
	copy(s, iv)
	sort.Slice(s, func(i, j int) bool { return s[i].Start < s[j].Start })
	var total int64
	cur := s[0]
	for _, v := range s[1:] {
		if v.Start > cur.End {
			total += cur.End - cur.Start
			cur = v
			continue
		}
		if v.End > cur.End {
			cur.End = v.End
		}
	}
	return total + cur.End - cur.Start
}

// ParallelismFactor is sum(durations) / length(union of intervals): 1 when
// the calls ran strictly one after another, k when k of them always ran
// together. When every interval is empty there is nothing to compare and
// the factor is 1.
func ParallelismFactor(iv []Interval) float64 {
	var sum int64
	for _, v := range iv {
		if v.End > v.Start {
			sum += v.End - v.Start
		}
	}
	u := UnionLength(iv)
	if u <= 0 || sum <= 0 {
		if len(iv) == 0 {
			return 0
		}
		return 1
	}
	return float64(sum) / float64(u)
}

// Concurrency returns MaxConcurrency and ParallelismFactor together.
func Concurrency(iv []Interval) (maxConcurrency int, factor float64) {
	return MaxConcurrency(iv), ParallelismFactor(iv)
}
