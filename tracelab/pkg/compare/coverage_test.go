package compare

import (
	"errors"
	"strings"
	"testing"
)

func durations(counts map[string]int) Input {
	in := Input{Durations: map[string][]float64{}}
	for name, n := range counts {
		for range n {
			in.Durations[name] = append(in.Durations[name], 1)
		}
	}
	return in
}

func TestCoverage(t *testing.T) {
	for _, tc := range []struct {
		name       string
		base, cand map[string]int
		refused    string // the side refused, "" if none
	}{
		{"same types", map[string]int{"a": 30, "b": 10}, map[string]int{"a": 25, "b": 12}, ""},
		// A long tail of rare types missing weighs little.
		{"rare types missing", map[string]int{"a": 60, "r1": 2, "r2": 2, "r3": 2, "r4": 2}, map[string]int{"a": 50}, ""},
		{"the busiest type missing", map[string]int{"a": 60, "b": 40}, map[string]int{"b": 40}, "candidate"},
		{"exactly half", map[string]int{"a": 10, "b": 10}, map[string]int{"a": 3}, ""},
		{"near-empty candidate", map[string]int{"a": 300, "b": 20}, map[string]int{"b": 1}, "candidate"},
		{"no request in the candidate", map[string]int{"a": 5}, map[string]int{}, "candidate"},
		{"unrelated services", map[string]int{"petclinic GET /": 2}, map[string]int{"catalog GET /summary": 3}, "candidate"},
		// Symmetric: a baseline that misses most of the candidate's traffic
		// would call its findings new without having looked.
		{"baseline misses the candidate", map[string]int{"b": 5}, map[string]int{"a": 100, "b": 5}, "baseline"},
	} {
		err := CheckCoverage(durations(tc.base), durations(tc.cand))
		var ce *CoverageError
		switch {
		case tc.refused == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.refused != "" && (!errors.As(err, &ce) || ce.Side != tc.refused):
			t.Errorf("%s: %v; want the %s refused", tc.name, err, tc.refused)
		}
	}
	// Neither side serves a request: nothing would be compared, and the
	// verdict would pass on nothing.
	var nc *NothingComparedError
	if err := CheckCoverage(durations(map[string]int{}), durations(map[string]int{})); !errors.As(err, &nc) {
		t.Errorf("background only, both: %v; want a NothingComparedError", err)
	}
	err := CheckCoverage(durations(map[string]int{"a": 300, "b": 20}), durations(map[string]int{"b": 1}))
	if want := "the candidate has 1 of the baseline's 2 request types, 6% of its 320 request traces (at least 50% are needed"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("message %v; want %q…", err, want)
	}
}
