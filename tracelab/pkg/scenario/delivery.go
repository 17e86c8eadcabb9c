package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"tracelab/pkg/detect"
)

// DeliveryCount is the end-to-end count of one variant: requests sent
// (warm-up included), those the entrypoint accepted (2xx), and the events
// that reached the end of the pipeline meanwhile. Nothing accepted may be
// lost: Accepted <= Stored. A request that failed (e.g. a publish timeout
// answered 503) may still have been delivered later, so Stored may exceed
// Accepted, never Sent.
type DeliveryCount struct {
	Sent     int64 `json:"sent"`
	Accepted int64 `json:"accepted"`
	Stored   int64 `json:"stored"`
}

// storedCount reads the delivery count the scenario names.
func (r *Runner) storedCount(ctx context.Context, d *Delivery) (int64, error) {
	base, err := r.Runtime.Endpoint(d.Service)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+d.Path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("counting delivered events: %v; see .state/logs/%s.log", err, d.Service)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("counting delivered events: GET %s%s answered %s", base, d.Path, resp.Status)
	}
	var doc map[string]json.Number
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return 0, fmt.Errorf("counting delivered events: GET %s%s is not a JSON object of numbers: %v", base, d.Path, err)
	}
	n, ok := doc[d.Field]
	if !ok {
		return 0, fmt.Errorf("counting delivered events: GET %s%s has no field %q", base, d.Path, d.Field)
	}
	return strconv.ParseInt(n.String(), 10, 64)
}

// waitDelivered polls the count until every accepted event has arrived, or
// until it has stopped growing for deliveryQuiet (then the rest is lost).
func (r *Runner) waitDelivered(ctx context.Context, d *Delivery, before int64, c *DeliveryCount) error {
	const deliveryQuiet = 20 * time.Second
	last, since := int64(-1), time.Now()
	for {
		now, err := r.storedCount(ctx, d)
		if err != nil {
			return err
		}
		c.Stored = now - before
		if c.Stored >= c.Accepted && c.Stored == last {
			return nil
		}
		if c.Stored != last {
			last, since = c.Stored, time.Now()
		} else if time.Since(since) > deliveryQuiet {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// clientMetrics evaluates the queries of the metrics-reading detectors
// over the load window on the runtime's Prometheus. A runtime without one
// gives no metrics: the detectors then judge on traces alone.
func (r *Runner) clientMetrics(ctx context.Context, ds []detect.Detector, from, to time.Time) (detect.Metrics, error) {
	pr, ok := r.Runtime.(interface{ PrometheusURL() string })
	if !ok {
		return nil, nil
	}
	var readers []detect.MetricsReader
	for _, d := range ds {
		if mr, ok := d.(detect.MetricsReader); ok {
			readers = append(readers, mr)
		}
	}
	if len(readers) == 0 {
		return nil, nil
	}
	// The services export every 5 s and Prometheus scrapes every 5 s: the
	// window's last numbers are in Prometheus about 11 s after it ends.
	at := to.Add(11 * time.Second)
	if wait := time.Until(at); wait > 0 {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
	window := fmt.Sprintf("%ds", int(at.Sub(from).Seconds())+1)
	out := detect.Metrics{}
	for _, mr := range readers {
		for name, q := range mr.MetricQueries(window) {
			samples, err := promQuery(ctx, pr.PrometheusURL(), q, at)
			if err != nil {
				return nil, err
			}
			for job, v := range samples {
				// The exporter's job label is service.namespace/service.name.
				svc := job[strings.LastIndex(job, "/")+1:]
				if out[svc] == nil {
					out[svc] = map[string]float64{}
				}
				out[svc][name] = v
			}
		}
	}
	return out, nil
}

// promQuery runs an instant query and returns its value per service job;
// NaN values (an average over no samples) are left out.
func promQuery(ctx context.Context, base, q string, at time.Time) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	u := base + "/api/v1/query?" + url.Values{"query": {q}, "time": {strconv.FormatInt(at.Unix(), 10)}}.Encode()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("Prometheus at %s: %v; see .state/logs/prometheus.log", base, err)
	}
	defer resp.Body.Close()
	var doc struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		return nil, fmt.Errorf("Prometheus at %s answered %s, not a query result", base, resp.Status)
	}
	if doc.Status != "success" {
		return nil, fmt.Errorf("Prometheus query %q: %s", q, doc.Error)
	}
	out := map[string]float64{}
	for _, r := range doc.Data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v != v {
			continue
		}
		// Series the collector exports carry their service in exported_job
		// (job is the scrape job).
		job := r.Metric["exported_job"]
		if job == "" {
			job = r.Metric["job"]
		}
		out[job] = v
	}
	return out, nil
}
