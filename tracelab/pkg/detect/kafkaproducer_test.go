package detect_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"tracelab/pkg/detect"
	"tracelab/pkg/trace"
)

// ingestRequests simulates the kafka-batching scenario's service: requests
// arrive at the given times (ms), each sends one event and answers once the
// producer says the broker acknowledged it. roundTripMs is one produce
// request; perRequest is how many queued records one request carries (1:
// the small-batches producer; large: the tuned one, which also lingers).
func ingestRequests(arrivals []float64, roundTripMs float64, perRequest int, lingerMs float64) []*trace.Span {
	t0 := fixtureStart.UnixNano()
	ms := func(v float64) int64 { return t0 + int64(v*1e6) }
	// The sender: one request in flight; it takes up to perRequest of the
	// queued records (FIFO) whenever it is free.
	done := make([]float64, len(arrivals))
	free := 0.0
	for i := 0; i < len(arrivals); {
		start := max(free, arrivals[i]+lingerMs)
		n := 0
		for j := i; j < len(arrivals) && arrivals[j] <= start && n < perRequest; j++ {
			n++
		}
		n = max(n, 1)
		free = start + roundTripMs
		for j := i; j < i+n; j++ {
			done[j] = free
		}
		i += n
	}
	var spans []*trace.Span
	for i, at := range arrivals {
		tid := fmt.Sprintf("%032x", i+1)
		root := &trace.Span{TraceID: tid, SpanID: fmt.Sprintf("%016x", 2*i+1), Name: "POST /events", Kind: trace.KindServer,
			Service: "ingest", Start: ms(at), End: ms(done[i] + 0.3),
			Attrs: trace.AttrsOf(map[string]string{"http.request.method": "POST", "http.route": "/events"})}
		send := &trace.Span{TraceID: tid, SpanID: fmt.Sprintf("%016x", 2*i+2), ParentID: root.SpanID, Name: "events publish",
			Kind: trace.KindProducer, Service: "ingest", Start: ms(at + 0.2), End: ms(done[i]),
			Attrs: trace.AttrsOf(map[string]string{"messaging.system": "kafka", "messaging.destination.name": "events", "messaging.operation": "publish"})}
		spans = append(spans, root, send)
	}
	return spans
}

// arrivals at rate per second for seconds, with spikes of factor × rate
// lasting burstMs every second when factor > 1 (random times, fixed seed).
func arrivals(rate float64, seconds int, factor float64, burstMs float64) []float64 {
	rng := rand.New(rand.NewSource(1))
	var out []float64
	for s := 0; s < seconds; s++ {
		spike := 1000*float64(s) + rng.Float64()*(1000-burstMs)
		for t := 1000 * float64(s); t < 1000*float64(s+1); {
			r := rate
			if factor > 1 && t >= spike && t < spike+burstMs {
				r = rate * factor
			}
			out = append(out, t)
			t += 1000 / r
		}
	}
	return out
}

func kafkaFindings(t *testing.T, spans []*trace.Span, m detect.Metrics) []detect.Finding {
	t.Helper()
	d, _ := detect.ByID("kafka-producer-contention")
	if m != nil {
		d = d.(detect.MetricsReader).WithMetrics(m)
	}
	return d.Detect(throughTheWire(t, spans))
}

// The small-batches producer: one record per 4 ms round trip keeps up with
// 100/s, not with spikes of 4× that.
func TestKafkaContentionUnderBursts(t *testing.T) {
	fs := kafkaFindings(t, ingestRequests(arrivals(100, 8, 4, 300), 4, 1, 0), nil)
	if len(fs) != 1 {
		t.Fatalf("%d findings, want 1", len(fs))
	}
	f := fs[0]
	if f.Service != "ingest" || f.ParentOperation != "POST /events" || f.MaxConcurrency < detect.KafkaBusyConcurrency {
		t.Errorf("finding %s / %s, max concurrency %d", f.Service, f.ParentOperation, f.MaxConcurrency)
	}
	if f.ShareOfParent < 0.9 || f.ShareOfCriticalPath < 0.9 {
		t.Errorf("the send is the request here: share of parent %.2f, of critical path %.2f", f.ShareOfParent, f.ShareOfCriticalPath)
	}
	if f.Evidence["slowdown"].(float64) < detect.KafkaMinSlowdown || f.Evidence["client_metrics_source"] != "none (traces only)" {
		t.Errorf("evidence %v", f.Evidence)
	}
	if !strings.Contains(f.Summary, "cause unconfirmed") {
		t.Errorf("summary %q does not say the cause is unconfirmed without metrics", f.Summary)
	}
}

// The same producer under uniform load of the same mean rate: no queue.
func TestKafkaNoContentionUnderUniformLoad(t *testing.T) {
	mean := 100 * (1 + 3*0.3)
	if fs := kafkaFindings(t, ingestRequests(arrivals(mean, 8, 1, 0), 4, 1, 0), nil); len(fs) != 0 {
		t.Errorf("uniform load: %s", fs[0].Summary)
	}
}

// The tuned producer under the same bursts: a few ms of linger, then one
// request carries everything queued.
func TestKafkaNoContentionWhenBatching(t *testing.T) {
	if fs := kafkaFindings(t, ingestRequests(arrivals(200, 8, 4, 300), 4, 500, 5), nil); len(fs) != 0 {
		t.Errorf("tuned producer: %s", fs[0].Summary)
	}
}

// Client metrics confirm the cause, or overrule the span signal when the
// producer batched well and never waited for memory.
func TestKafkaContentionWeighsClientMetrics(t *testing.T) {
	spans := ingestRequests(arrivals(100, 8, 4, 300), 4, 1, 0)
	small := detect.Metrics{"ingest": {"records_per_request_avg": 1.1, "batch_size_avg_bytes": 380,
		"record_queue_time_avg_ms": 45, "bufferpool_wait_seconds": 3.2, "waiting_threads_max": 37}}
	fs := kafkaFindings(t, spans, small)
	if len(fs) != 1 {
		t.Fatalf("%d findings with small-batch metrics, want 1", len(fs))
	}
	if fs[0].Evidence["client_metrics_source"] != "prometheus" || fs[0].Evidence["waiting_threads_max"] != 37.0 {
		t.Errorf("evidence %v", fs[0].Evidence)
	}
	big := detect.Metrics{"ingest": {"records_per_request_avg": 60, "batch_size_avg_bytes": 21000,
		"record_queue_time_avg_ms": 6, "bufferpool_wait_seconds": 0, "waiting_threads_max": 0}}
	if fs := kafkaFindings(t, spans, big); len(fs) != 0 {
		t.Errorf("large batches and no buffer waits, yet: %s", fs[0].Summary)
	}
}

// A handful of sends says nothing about queueing.
func TestKafkaTooFewSends(t *testing.T) {
	a := arrivals(100, 8, 4, 300)[:detect.KafkaMinSends-1]
	if fs := kafkaFindings(t, ingestRequests(a, 4, 1, 0), nil); len(fs) != 0 {
		t.Errorf("%d sends: %s", len(a), fs[0].Summary)
	}
}
