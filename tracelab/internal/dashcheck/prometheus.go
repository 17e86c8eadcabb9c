package dashcheck

import (
	"cmp"
	"context"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"tracelab/pkg/prom"
)

// RangeResult summarizes a range query: how many series came back and how
// many of their samples are numbers (a ratio over an empty rate is NaN).
type RangeResult struct {
	Series, FiniteSamples int
	// Max is the largest number of each series, keyed by its labels' values
	// joined with "/" in label-name order (e.g. "baseline").
	Max map[string]float64
}

// QueryRange runs expr over [start, end] at step.
func QueryRange(ctx context.Context, c *prom.Client, expr string, start, end time.Time, step time.Duration) (RangeResult, error) {
	series, err := c.QueryRange(ctx, expr, start, end, step)
	if err != nil {
		return RangeResult{}, err
	}
	r := RangeResult{Series: len(series), Max: map[string]float64{}}
	for _, s := range series {
		var key []string
		for _, name := range slices.Sorted(maps.Keys(s.Labels)) {
			key = append(key, s.Labels[name])
		}
		k := strings.Join(key, "/")
		for _, pt := range s.Points {
			r.FiniteSamples++
			if m, seen := r.Max[k]; !seen || pt[1] > m {
				r.Max[k] = pt[1]
			}
		}
	}
	return r, nil
}

// ExemplarTraceIDs returns the trace ids of the exemplars Prometheus keeps
// for expr over [start, end], what Grafana links from a latency panel, the
// oldest first. Prometheus groups them by series; a series that saw no
// request lately (a route only a capacity probe hit) ends with an old one,
// whose trace a trace store with a size limit may have dropped since.
func ExemplarTraceIDs(ctx context.Context, c *prom.Client, expr string, start, end time.Time) ([]string, error) {
	params := url.Values{
		"query": {expr},
		"start": {strconv.FormatInt(start.Unix(), 10)},
		"end":   {strconv.FormatInt(end.Unix(), 10)},
	}
	var data []struct {
		Exemplars []struct {
			Labels    map[string]string `json:"labels"`
			Timestamp float64           `json:"timestamp"`
		} `json:"exemplars"`
	}
	if err := c.Get(ctx, "/api/v1/query_exemplars", params, &data); err != nil {
		return nil, err
	}
	type exemplar struct {
		at float64
		id string
	}
	var found []exemplar
	for _, s := range data {
		for _, e := range s.Exemplars {
			if id := e.Labels["trace_id"]; id != "" {
				found = append(found, exemplar{e.Timestamp, id})
			}
		}
	}
	slices.SortStableFunc(found, func(a, b exemplar) int { return cmp.Compare(a.at, b.at) })
	ids := make([]string, len(found))
	for i, e := range found {
		ids[i] = e.id
	}
	return ids, nil
}
