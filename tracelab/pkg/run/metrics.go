package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"tracelab/pkg/detect"
	"tracelab/pkg/prom"
)

// exportLag is how long after a moment the services' client metrics of that
// moment may first be in a Prometheus sample: the services export them
// every 5 s (services/ingest/lab.env), and the collector's exporter has no
// timestamps of its own, so a sample is stamped when Prometheus scrapes it.
// A sample stamped exportLag after the window's end holds an export made
// after it.
const exportLag = 5 * time.Second

// metricsWait bounds the wait for those samples: the export, one scrape
// interval (5 s) and a slow machine's delays fit well within it.
const metricsWait = time.Minute

// clientMetrics evaluates the queries of the metrics-reading detectors
// over the load window on the runtime's Prometheus, once Prometheus holds
// samples from after the window's end.
func (r *Runner) clientMetrics(ctx context.Context, ds []detect.Detector, from, to time.Time) (detect.Metrics, error) {
	var readers []detect.MetricsReader
	var series []string
	for _, d := range ds {
		if mr, ok := d.(detect.MetricsReader); ok {
			readers = append(readers, mr)
			series = append(series, mr.MetricSeries()...)
		}
	}
	if len(readers) == 0 {
		return nil, nil
	}
	if err := r.Runtime.Reconnect(ctx); err != nil {
		return nil, err
	}
	pc := prom.New(r.Runtime.PrometheusURL())
	at, err := waitForSamples(ctx, pc, series, from, to.Add(exportLag), metricsWait, time.Second)
	if err != nil || at.IsZero() {
		return nil, err
	}
	window := fmt.Sprintf("%ds", int(at.Sub(from).Seconds())+1)
	out := detect.Metrics{}
	for _, mr := range readers {
		for name, q := range mr.MetricQueries(window) {
			samples, err := pc.Query(ctx, q, at)
			if err != nil {
				return nil, err
			}
			for _, s := range samples {
				// Series the collector exports carry their service in
				// exported_job (job is the scrape job), as
				// service.namespace/service.name.
				job := s.Labels["exported_job"]
				if job == "" {
					job = s.Labels["job"]
				}
				svc := job[strings.LastIndex(job, "/")+1:]
				if out[svc] == nil {
					out[svc] = map[string]float64{}
				}
				out[svc][name] = s.Value
			}
		}
	}
	return out, nil
}

// waitForSamples polls Prometheus until the newest sample of the series is
// stamped at or after want, and returns that stamp: the time to evaluate
// the queries at. It returns the zero time when Prometheus has scraped
// past want but none of the series has a sample since from: no service of
// this run exports them, and the detectors judge on traces alone. Series
// that stopped short of want are an error once wait has passed.
func waitForSamples(ctx context.Context, pc *prom.Client, series []string, from, want time.Time, wait, every time.Duration) (time.Time, error) {
	// timestamp() drops the metric name, and series that differ only by it
	// would then collide ("vector cannot contain metrics with the same
	// labelset"); label_replace keeps the name as a plain label first.
	newestOf := fmt.Sprintf(`max(timestamp(label_replace({__name__=~"%s"}, "series", "$1", "__name__", "(.+)")))`, strings.Join(series, "|"))
	deadline := time.Now().Add(wait)
	for {
		newest, err := stamp(ctx, pc, newestOf)
		if err != nil {
			return time.Time{}, err
		}
		if !newest.Before(want) {
			return newest, nil
		}
		if newest.Before(from) {
			scraped, err := stamp(ctx, pc, "max(timestamp(up))")
			if err != nil {
				return time.Time{}, err
			}
			if !scraped.Before(want) {
				return time.Time{}, nil
			}
		}
		if time.Now().After(deadline) {
			last := "no sample at all"
			if !newest.IsZero() {
				last = "the newest at " + newest.UTC().Format(time.RFC3339)
			}
			return time.Time{}, fmt.Errorf("Prometheus at %s has no sample of %s from after the run (%s) within %s: %s; see the collector's and Prometheus's logs",
				pc.URL, strings.Join(series, ", "), want.UTC().Format(time.RFC3339), wait, last)
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(every):
		}
	}
}

// stamp evaluates a query that returns one Unix time, now; zero when it
// returns nothing.
func stamp(ctx context.Context, pc *prom.Client, query string) (time.Time, error) {
	samples, err := pc.Query(ctx, query, time.Now())
	if err != nil {
		return time.Time{}, err
	}
	switch len(samples) {
	case 0:
		return time.Time{}, nil
	case 1:
		sec := samples[0].Value
		return time.Unix(int64(sec), int64((sec-float64(int64(sec)))*1e9)), nil
	}
	return time.Time{}, errors.New("Prometheus: " + query + " gave more than one series")
}
