package run

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"tracelab/pkg/analyze"
	"tracelab/pkg/load"
	"tracelab/pkg/prom"
)

// db_calls_per_request is weighted over request types like
// calls_per_request.
func TestDBCallsPerRequestMetric(t *testing.T) {
	rep := analyze.Report{Requests: []analyze.RequestStats{
		{Traces: 3, CallsPerTrace: 8, DBCallsPerTrace: 7},
		{Traces: 1, CallsPerTrace: 1, DBCallsPerTrace: 1},
	}}
	m := metricsOf(&load.Summary{}, rep)
	if m["db_calls_per_request"] != 5.5 || m["calls_per_request"] != 6.25 {
		t.Errorf("db_calls_per_request %v, calls_per_request %v; want 5.5, 6.25", m["db_calls_per_request"], m["calls_per_request"])
	}
}

// fakePrometheus answers the two questions waitForSamples asks, the
// newest sample of the series and the newest scrape, from what the test
// says Prometheus holds at each call.
type fakePrometheus struct {
	mu              sync.Mutex
	series, scraped []time.Time // per call; the last one repeats
	calls           int
}

func (f *fakePrometheus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := r.URL.Query().Get("query")
	pick := func(ts []time.Time) time.Time { return ts[min(f.calls, len(ts)-1)] }
	var at time.Time
	switch {
	case strings.Contains(q, "kafka_producer_"):
		at = pick(f.series)
		f.calls++
	case q == "max(timestamp(up))":
		at = pick(f.scraped)
	default:
		http.Error(w, `{"status":"error","error":"unexpected query"}`, http.StatusBadRequest)
		return
	}
	result := "[]"
	if !at.IsZero() {
		result = fmt.Sprintf(`[{"metric":{},"value":[%d,"%d"]}]`, time.Now().Unix(), at.Unix())
	}
	fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":%s}}`, result)
}

func TestWaitForSamples(t *testing.T) {
	from := time.Unix(1_700_000_000, 0)
	want := from.Add(60 * time.Second)
	series := []string{"kafka_producer_batch_size_avg"}
	none := time.Time{}
	cases := []struct {
		name            string
		series, scraped []time.Time
		at              time.Time
		err             string
	}{
		{"samples arrive past the window's end", []time.Time{from.Add(50 * time.Second), from.Add(55 * time.Second), want.Add(2 * time.Second)}, []time.Time{want}, want.Add(2 * time.Second), ""},
		{"no service of the run exports them", []time.Time{none}, []time.Time{from.Add(30 * time.Second), want.Add(time.Second)}, none, ""},
		{"only samples from before the run", []time.Time{from.Add(-time.Hour)}, []time.Time{want.Add(time.Second)}, none, ""},
		{"they stop inside the window", []time.Time{from.Add(40 * time.Second)}, []time.Time{want.Add(time.Second)}, none, "no sample of kafka_producer_batch_size_avg from after the run"},
		{"Prometheus scrapes nothing", []time.Time{none}, []time.Time{none}, none, "no sample at all"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(&fakePrometheus{series: c.series, scraped: c.scraped})
			defer srv.Close()
			at, err := waitForSamples(context.Background(), prom.New(srv.URL), series, from, want, 50*time.Millisecond, time.Millisecond)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %v, %v; want an error with %q", at, err, c.err)
				}
				return
			}
			if err != nil || !at.Equal(c.at) {
				t.Fatalf("got %v, %v; want %v", at, err, c.at)
			}
		})
	}
}
