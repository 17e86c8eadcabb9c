// Package prom is the lab's client of Prometheus's HTTP API, as package
// jaeger is of Jaeger's: the scenario runner reads the services' client
// metrics through it, and the dashboard tests prove their PromQL with it.
package prom

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Client queries one Prometheus.
type Client struct {
	URL  string
	HTTP *http.Client
}

// New returns a client of the Prometheus at base (http://host:port).
func New(base string) *Client {
	return &Client{URL: base, HTTP: &http.Client{Timeout: 30 * time.Second}}
}

// Sample is one series of an instant query's answer.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Query runs an instant query at a time. Samples that are not numbers (an
// average over no samples is NaN) are left out: they carry no reading.
func (c *Client) Query(ctx context.Context, query string, at time.Time) ([]Sample, error) {
	var data struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	}
	params := url.Values{"query": {query}, "time": {strconv.FormatInt(at.Unix(), 10)}}
	if err := c.Get(ctx, "/api/v1/query", params, &data); err != nil {
		return nil, fmt.Errorf("query %q: %w", query, err)
	}
	var out []Sample
	for _, r := range data.Result {
		if v, ok := Number(r.Value[1]); ok {
			out = append(out, Sample{Labels: r.Metric, Value: v})
		}
	}
	return out, nil
}

// Series is one series of a range query's answer: its labels and its
// points, [Unix seconds, value]; points that are not numbers are left out.
type Series struct {
	Labels map[string]string `json:"labels"`
	Points [][2]float64      `json:"points"`
}

// QueryRange runs a range query over [start, end] at step.
func (c *Client) QueryRange(ctx context.Context, query string, start, end time.Time, step time.Duration) ([]Series, error) {
	params := url.Values{
		"query": {query},
		"start": {strconv.FormatInt(start.Unix(), 10)},
		"end":   {strconv.FormatInt(end.Unix(), 10)},
		"step":  {strconv.Itoa(max(int(step.Seconds()), 1))},
	}
	var data struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
			Values [][2]any          `json:"values"`
		} `json:"result"`
	}
	if err := c.Get(ctx, "/api/v1/query_range", params, &data); err != nil {
		return nil, err
	}
	out := make([]Series, 0, len(data.Result))
	for _, r := range data.Result {
		s := Series{Labels: r.Metric, Points: [][2]float64{}}
		for _, pt := range r.Values {
			at, _ := pt[0].(float64)
			if v, ok := Number(pt[1]); ok {
				s.Points = append(s.Points, [2]float64{at, v})
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// Number reads a sample's value as Prometheus writes it (a string); NaN and
// infinities are not numbers here.
func Number(v any) (float64, bool) {
	s, _ := v.(string)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// Get calls an API endpoint (e.g. /api/v1/query_range) and decodes the
// "data" of a successful answer into data. An error answer gives
// Prometheus's own message; no answer names the URL.
func (c *Client) Get(ctx context.Context, endpoint string, params url.Values, data any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+endpoint+"?"+params.Encode(), nil)
	if err != nil {
		return err
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("Prometheus at %s is not answering: %v", c.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("Prometheus at %s: %v", c.URL, err)
	}
	var doc struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return fmt.Errorf("Prometheus at %s answered %s, not an API answer: %.200s", c.URL, resp.Status, body)
	}
	if doc.Status != "success" {
		return fmt.Errorf("Prometheus: %s", doc.Error)
	}
	if err := json.Unmarshal(doc.Data, data); err != nil {
		return fmt.Errorf("Prometheus at %s: unexpected %s answer: %v", c.URL, endpoint, err)
	}
	return nil
}
