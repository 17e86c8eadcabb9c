// Package bootstrap puts 95% confidence intervals on the ratio of two
// measurements, by the percentile bootstrap: each side is resampled with
// replacement on its own, the ratio recomputed, and the interval is the
// 2.5th to 97.5th percentile of the resampled ratios. A side is a Sample:
// a quantile or mean of per-request values, or a rate over sub-windows of
// a run (batch means, for counters such as CPU time that have no
// per-request value).
package bootstrap

import (
	"math"
	"math/rand/v2"
	"sort"
)

// Resamples is what a 95% interval needs for stable 2.5th and 97.5th
// percentiles (Efron & Tibshirani suggest at least 1,000).
const Resamples = 2000

// Seed makes intervals reproducible: the same data gives the same interval.
const Seed = 1

// Interval is an estimate with its 95% confidence interval.
type Interval struct {
	Value float64 `json:"value"`
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
}

// Sample is one side of a ratio: its estimate, and the estimate on a
// resample drawn with rng.
type Sample interface {
	Estimate() float64
	Resample(rng *rand.Rand) float64
}

// Ratio is num/den with its interval; nil when either side has no data or
// den's estimate is not positive.
func Ratio(num, den Sample, resamples int, seed uint64) *Interval {
	if num == nil || den == nil {
		return nil
	}
	n0, d0 := num.Estimate(), den.Estimate()
	if math.IsNaN(n0) || math.IsNaN(d0) || d0 <= 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(seed, 0x7472616365))
	ratios := make([]float64, 0, resamples)
	for range resamples {
		d := den.Resample(rng)
		if d <= 0 || math.IsNaN(d) {
			continue // a resample of zeros has no ratio
		}
		ratios = append(ratios, num.Resample(rng)/d)
	}
	value := round(n0 / d0)
	if len(ratios) == 0 {
		return &Interval{Value: value, Low: value, High: value}
	}
	sort.Float64s(ratios)
	return &Interval{Value: value, Low: round(Quantile(ratios, 0.025)), High: round(Quantile(ratios, 0.975))}
}

// Quantile is the q-quantile of sorted values, interpolating linearly
// between the closest ranks (R's type 7, numpy's default); NaN when empty.
func Quantile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	h := q * float64(n-1)
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return sorted[n-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// QuantileOf is the q-quantile of per-request values (e.g. durations).
type QuantileOf struct {
	Values []float64
	Q      float64
	sorted []float64
	buf    []float64
}

// NewQuantile is the q-quantile of values; nil when there are none.
func NewQuantile(values []float64, q float64) *QuantileOf {
	if len(values) == 0 {
		return nil
	}
	s := append([]float64(nil), values...)
	sort.Float64s(s)
	return &QuantileOf{Values: values, Q: q, sorted: s, buf: make([]float64, len(values))}
}

func (s *QuantileOf) Estimate() float64 {
	if s == nil {
		return math.NaN()
	}
	return Quantile(s.sorted, s.Q)
}

func (s *QuantileOf) Resample(rng *rand.Rand) float64 {
	for i := range s.buf {
		s.buf[i] = s.Values[rng.IntN(len(s.Values))]
	}
	sort.Float64s(s.buf)
	return Quantile(s.buf, s.Q)
}

// MeanOf is the mean of per-request values (e.g. database calls per
// request).
type MeanOf []float64

func (s MeanOf) Estimate() float64 { return mean(s, func(i int) float64 { return s[i] }) }

func (s MeanOf) Resample(rng *rand.Rand) float64 {
	return mean(s, func(int) float64 { return s[rng.IntN(len(s))] })
}

func mean(s []float64, at func(int) float64) float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	var sum float64
	for i := range s {
		sum += at(i)
	}
	return sum / float64(len(s))
}

// Block is one sub-window of a run: an amount accrued in it (CPU
// milliseconds, requests served) and what it is counted per (requests,
// seconds).
type Block struct {
	Amount float64 `json:"amount"`
	Per    float64 `json:"per"`
}

// Blocks is a rate over a run's sub-windows, sum(Amount)/sum(Per): CPU ms
// per request, or requests per second. Resampling whole sub-windows (batch
// means) keeps what happens within one together, as a per-request value
// cannot for a counter read once a second.
type Blocks []Block

func (s Blocks) Estimate() float64 { return s.rate(func(i int) Block { return s[i] }) }

func (s Blocks) Resample(rng *rand.Rand) float64 {
	return s.rate(func(int) Block { return s[rng.IntN(len(s))] })
}

func (s Blocks) rate(at func(int) Block) float64 {
	var amount, per float64
	for i := range s {
		b := at(i)
		amount += b.Amount
		per += b.Per
	}
	if per <= 0 {
		return math.NaN()
	}
	return amount / per
}

// Fixed is a value with no sample behind it, such as a figure recorded in
// an earlier run: the interval then reflects only the other side's noise.
type Fixed float64

func (f Fixed) Estimate() float64           { return float64(f) }
func (f Fixed) Resample(*rand.Rand) float64 { return float64(f) }

func round(x float64) float64 { return math.Round(x*1e4) / 1e4 }
