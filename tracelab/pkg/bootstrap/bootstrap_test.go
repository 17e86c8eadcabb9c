package bootstrap

import (
	"math/rand/v2"
	"testing"
)

func TestQuantile(t *testing.T) {
	s := []float64{10, 20, 30, 40, 50}
	for q, want := range map[float64]float64{0: 10, 0.5: 30, 0.95: 48, 1: 50} {
		if got := Quantile(s, q); got != want {
			t.Errorf("Quantile(%v) = %v, want %v", q, got, want)
		}
	}
}

// noisy draws n values around mean, uniformly ±spread.
func noisy(rng *rand.Rand, n int, mean, spread float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = mean + spread*(2*rng.Float64()-1)
	}
	return out
}

func TestRatioOfMeansCoversTheTrueRatioAndNarrowsWithData(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	small := Ratio(MeanOf(noisy(rng, 100, 30, 10)), MeanOf(noisy(rng, 100, 10, 5)), Resamples, Seed)
	large := Ratio(MeanOf(noisy(rng, 2000, 30, 10)), MeanOf(noisy(rng, 2000, 10, 5)), Resamples, Seed)
	for _, iv := range []*Interval{small, large} {
		if !(iv.Low <= 3 && 3 <= iv.High) {
			t.Errorf("interval %+v misses the true ratio 3", *iv)
		}
	}
	if large.High-large.Low >= small.High-small.Low {
		t.Errorf("100× the data did not narrow the interval: %+v vs %+v", *large, *small)
	}
}

func TestBlocksRateIsTotalOverTotal(t *testing.T) {
	b := Blocks{{Amount: 10, Per: 1}, {Amount: 30, Per: 3}, {Amount: 0, Per: 0}}
	if got := b.Estimate(); got != 10 {
		t.Fatalf("rate = %v, want 40/4 = 10", got)
	}
	// Every block at the same rate: any resample has it, so the interval is a point.
	iv := Ratio(Blocks{{20, 2}, {40, 4}}, b, Resamples, Seed)
	if iv.Value != 1 || iv.Low != 1 || iv.High != 1 {
		t.Fatalf("interval = %+v, want exactly 1", *iv)
	}
}

func TestFixedSideLeavesOnlyTheOtherSidesNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	both := Ratio(MeanOf(noisy(rng, 50, 20, 10)), MeanOf(noisy(rng, 50, 10, 5)), Resamples, Seed)
	one := Ratio(MeanOf(noisy(rng, 50, 20, 10)), Fixed(10), Resamples, Seed)
	if one.High-one.Low >= both.High-both.Low {
		t.Errorf("a fixed denominator did not narrow the interval: %+v vs %+v", *one, *both)
	}
}

func TestNoRatioWithoutData(t *testing.T) {
	if Ratio(NewQuantile(nil, 0.5), Fixed(1), 10, 1) != nil {
		t.Error("an empty side gave a ratio")
	}
	if Ratio(Fixed(1), Fixed(0), 10, 1) != nil {
		t.Error("a zero denominator gave a ratio")
	}
}
