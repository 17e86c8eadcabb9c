package compare

import (
	"fmt"
	"math"
)

// MinCoverage is the share of one side's request traces whose request type
// the other side must also have. Below it, a comparison would call the
// missing types' findings resolved (or new) because they were not looked
// at, and a gate would pass on a window or query that caught something
// else. Half, weighed by traces rather than by types: a type's weight in
// what was measured is its traffic, so a long tail of rare routes (an
// antpath run has 1,895 routes of 2 to 5 traces) missing from a 20-trace
// window does not refuse it, while a window that misses the routes that
// carry most of the traffic does.
const MinCoverage = 0.5

// CoverageError is a side that misses too much of the other (see
// MinCoverage).
type CoverageError struct {
	Side, Other string // "candidate", "baseline"
	// Covered of the Other's Total request traces are of a type the Side
	// has; Types of its OtherTypes request types.
	Covered, Total    int
	Types, OtherTypes int
}

func (e *CoverageError) Error() string {
	return fmt.Sprintf("the %s has %d of the %s's %d request types, %d%% of its %d request traces (at least %.0f%% are needed, or everything else would read as resolved or new); fetch both sides from the same service, operation or query, over windows of comparable traffic",
		e.Side, e.Types, e.Other, e.OtherTypes, int(math.Floor(100*float64(e.Covered)/float64(e.Total))), e.Total, 100*MinCoverage)
}

// NothingComparedError is a comparison in which neither side has a request
// trace: findings and latency are only computed for requests, so a verdict
// would pass having compared nothing (start-up traces only, or a window or
// query that caught no request).
type NothingComparedError struct {
	BaselineTraces, CandidateTraces int // read, all serving no request
}

func (e *NothingComparedError) Error() string {
	return fmt.Sprintf("no request to compare: neither side has a trace whose root is a SERVER or CONSUMER span (the baseline's %d and the candidate's %d traces are all start-up or background work); check that both sources catch the service's requests (its service, operation, window or query, or the file's contents)",
		e.BaselineTraces, e.CandidateTraces)
}

// CheckCoverage refuses a comparison in which neither side serves a
// request (*NothingComparedError), or in which either side's request types
// carry less than MinCoverage of the other side's request traces
// (*CoverageError).
func CheckCoverage(base, cand Input) error {
	if len(base.Durations) == 0 && len(cand.Durations) == 0 {
		return &NothingComparedError{base.Report.Traces, cand.Report.Traces}
	}
	if err := covers("candidate", cand.Durations, "baseline", base.Durations); err != nil {
		return err
	}
	return covers("baseline", base.Durations, "candidate", cand.Durations)
}

func covers(side string, has map[string][]float64, other string, of map[string][]float64) error {
	e := &CoverageError{Side: side, Other: other, OtherTypes: len(of)}
	for name, d := range of {
		e.Total += len(d)
		if len(has[name]) > 0 {
			e.Covered += len(d)
			e.Types++
		}
	}
	if e.Total == 0 || float64(e.Covered) >= MinCoverage*float64(e.Total) {
		return nil
	}
	return e
}
