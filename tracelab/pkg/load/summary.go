package load

import (
	"slices"

	"tracelab/pkg/bootstrap"
)

// LateSendMs is how late after its scheduled instant a request may leave
// before it counts as late: the engine's own precision, which the
// benchmark holds under 1% of sends (docs/load.md, "The load engine's own cost").
const LateSendMs = 1.0

// Summary is what the runner and the judge read of a run.
type Summary struct {
	Requests      int     `json:"requests"`
	Failed        float64 `json:"error_rate"` // share of failed requests, 0..1
	ThroughputRPS float64 `json:"throughput_rps"`
	// Latencies of every request, failed or not, from its scheduled instant.
	P50Ms     float64 `json:"p50_ms"`
	P95Ms     float64 `json:"p95_ms"`
	MeanMs    float64 `json:"mean_ms"`
	MaxMs     float64 `json:"max_ms"`
	DurationS float64 `json:"duration_s"`
	// LateSends is the share of an open model's requests that left more
	// than LateSendMs after their instant: a sender that falls behind.
	LateSends float64 `json:"late_sends,omitempty"`
}

// Summarize sums up records. Throughput is answered requests per second
// from the start to the last answer.
func Summarize(records []Record, m Model) Summary {
	s := Summary{Requests: len(records)}
	if len(records) == 0 {
		return s
	}
	lat := make([]float64, len(records))
	var failed, late int
	var end, sum float64
	for i, r := range records {
		lat[i] = r.LatencyMs
		sum += r.LatencyMs
		end = max(end, r.ScheduledMs+r.LatencyMs)
		if r.Failed() {
			failed++
		}
		if r.WaitMs() > LateSendMs {
			late++
		}
	}
	slices.Sort(lat)
	s.Failed = float64(failed) / float64(len(records))
	s.P50Ms = bootstrap.Quantile(lat, 0.50)
	s.P95Ms = bootstrap.Quantile(lat, 0.95)
	s.MeanMs = sum / float64(len(records))
	s.MaxMs = lat[len(lat)-1]
	s.DurationS = end / 1000
	if end > 0 {
		s.ThroughputRPS = float64(len(records)) / s.DurationS
	}
	if m.Open {
		s.LateSends = float64(late) / float64(len(records))
	}
	return s
}
