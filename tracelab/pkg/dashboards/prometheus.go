package dashboards

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Prometheus is a client of the HTTP query API, enough to prove that a
// dashboard's queries return data.
type Prometheus struct {
	URL    string
	Client *http.Client
}

// RangeResult summarizes a range query: how many series came back and how
// many of their samples are numbers (a ratio over an empty rate is NaN).
type RangeResult struct {
	Series, FiniteSamples int
	// Max is the largest number of each series, keyed by its labels' values
	// joined with "/" in label-name order (e.g. "baseline").
	Max map[string]float64
}

// QueryRange runs expr over [start, end] at step.
func (p *Prometheus) QueryRange(ctx context.Context, expr string, start, end time.Time, step time.Duration) (RangeResult, error) {
	v := url.Values{}
	v.Set("query", expr)
	v.Set("start", strconv.FormatInt(start.Unix(), 10))
	v.Set("end", strconv.FormatInt(end.Unix(), 10))
	v.Set("step", strconv.Itoa(int(step.Seconds())))
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Values [][2]any          `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := p.get(ctx, "/api/v1/query_range?"+v.Encode(), &body); err != nil {
		return RangeResult{}, err
	}
	if body.Status != "success" {
		return RangeResult{}, fmt.Errorf("prometheus: %s", body.Error)
	}
	r := RangeResult{Series: len(body.Data.Result), Max: map[string]float64{}}
	for _, s := range body.Data.Result {
		names := make([]string, 0, len(s.Metric))
		for k := range s.Metric {
			names = append(names, k)
		}
		sort.Strings(names)
		key := make([]string, len(names))
		for i, k := range names {
			key[i] = s.Metric[k]
		}
		for _, pt := range s.Values {
			str, _ := pt[1].(string)
			if f, err := strconv.ParseFloat(str, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
				r.FiniteSamples++
				k := strings.Join(key, "/")
				if m, ok := r.Max[k]; !ok || f > m {
					r.Max[k] = f
				}
			}
		}
	}
	return r, nil
}

// ExemplarTraceIDs returns the trace ids of the exemplars Prometheus keeps
// for expr over [start, end]: what Grafana links from a latency panel.
func (p *Prometheus) ExemplarTraceIDs(ctx context.Context, expr string, start, end time.Time) ([]string, error) {
	v := url.Values{}
	v.Set("query", expr)
	v.Set("start", strconv.FormatInt(start.Unix(), 10))
	v.Set("end", strconv.FormatInt(end.Unix(), 10))
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   []struct {
			Exemplars []struct {
				Labels map[string]string `json:"labels"`
			} `json:"exemplars"`
		} `json:"data"`
	}
	if err := p.get(ctx, "/api/v1/query_exemplars?"+v.Encode(), &body); err != nil {
		return nil, err
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("prometheus: %s", body.Error)
	}
	var ids []string
	for _, s := range body.Data {
		for _, e := range s.Exemplars {
			if id := e.Labels["trace_id"]; id != "" {
				ids = append(ids, id)
			}
		}
	}
	return ids, nil
}

func (p *Prometheus) get(ctx context.Context, path string, out any) error {
	c := p.Client
	if c == nil {
		c = &http.Client{Timeout: 30 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("prometheus at %s is not answering: %v", p.URL, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("prometheus %s: HTTP %d: %.200s", path, resp.StatusCode, data)
	}
	return nil
}
