package stackbench

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// The peak is read only after the sampler has stopped; `go test -race`
// reports the race if stop returns it any earlier.
func TestSamplePeakKeepsTheLargestReading(t *testing.T) {
	readings := []int64{3, 9, 4}
	var calls atomic.Int32
	read := func(context.Context) (int64, error) {
		n := int(calls.Add(1)) - 1
		if n == 1 {
			return 100, errors.New("a failed reading does not count")
		}
		return readings[n%len(readings)], nil
	}
	stop := samplePeak(context.Background(), time.Millisecond, read)
	for calls.Load() < 5 {
		time.Sleep(time.Millisecond)
	}
	if peak := stop(); peak != 9 {
		t.Errorf("peak %d, want 9", peak)
	}
}
