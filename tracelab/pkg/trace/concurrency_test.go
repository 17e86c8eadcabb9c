package trace

import (
	"math"
	"testing"
)

func TestConcurrency(t *testing.T) {
	cases := []struct {
		name    string
		iv      []Interval
		maxConc int
		factor  float64
		union   int64
	}{
		{"empty", nil, 0, 0, 0},
		{"sequential with gaps", []Interval{{0, 10}, {12, 22}, {30, 40}}, 1, 1, 30},
		{"touching is not overlapping", []Interval{{0, 10}, {10, 20}, {20, 30}}, 1, 1, 30},
		{"touching, given out of order", []Interval{{20, 30}, {0, 10}, {10, 20}}, 1, 1, 30},
		{"fully parallel", []Interval{{0, 10}, {0, 10}, {0, 10}, {0, 10}}, 4, 4, 10},
		// A pool of 3 workers over 6 equal calls: two waves of three.
		{"pool of three", []Interval{{0, 10}, {0, 10}, {0, 10}, {10, 20}, {10, 20}, {10, 20}}, 3, 3, 20},
		{"slight overlap", []Interval{{0, 10}, {9, 20}, {19, 30}}, 2, 32.0 / 30, 30},
		{"nested", []Interval{{0, 100}, {10, 20}, {15, 30}}, 3, 125.0 / 100, 100},
		{"zero-length calls", []Interval{{5, 5}, {5, 5}}, 2, 1, 0},
		{"zero-length inside a call", []Interval{{0, 10}, {5, 5}}, 2, 1, 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, f := Concurrency(c.iv)
			if m != c.maxConc {
				t.Errorf("max concurrency = %d, want %d", m, c.maxConc)
			}
			if math.Abs(f-c.factor) > 1e-9 {
				t.Errorf("parallelism factor = %v, want %v", f, c.factor)
			}
			if u := UnionLength(c.iv); u != c.union {
				t.Errorf("union = %d, want %d", u, c.union)
			}
		})
	}
}

func TestIntervalsClampsInvertedSpans(t *testing.T) {
	iv := Intervals([]*Span{{Start: 10, End: 5}, {Start: 1, End: 2}})
	if iv[0] != (Interval{10, 10}) || iv[1] != (Interval{1, 2}) {
		t.Errorf("Intervals = %v", iv)
	}
}
