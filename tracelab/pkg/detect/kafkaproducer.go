package detect

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"tracelab/pkg/trace"
)

func init() { Register(KafkaProducerContention{}) }

// Thresholds of kafka-producer-contention. No public detector reads
// producer spans this way, so they come from case study 001
// (scenarios/kafka-batching/README.md tells it) and from what separates its two causes of slow sends
// on the lab's stack:
//
//   - KafkaBusyConcurrency: the case's contention showed "with many
//     threads" waiting on the client; below 8 concurrent sends on one
//     producer a queue is short whatever the settings.
//   - KafkaMinSlowdown: sends made while many others are in flight must be
//     this many times slower (median) than sends made alone. A saturated
//     CPU slows every send alike, by well under 5× on the lab's machine
//     (tuned producer under the same bursts); a producer that makes one
//     small round trip at a time makes the n-th waiting send wait for n
//     round trips.
//   - KafkaMinBusyMs: the slow sends must cost the request something a
//     user sees; the case's latency objective was broken by tens to
//     hundreds of milliseconds, not by microseconds.
//   - KafkaMinShareOfRequest: the request must be mostly waiting on the
//     send, as the case's HTTP service was (it did nothing else before
//     answering).
//   - KafkaMinBusyShare: the slow sends must be at least a twentieth of
//     all sends, or they cannot move the 95th percentile a latency
//     objective is written against; a pause of the JVM or the machine
//     under uniform load piles up a few dozen sends once (about 1% of a
//     run on the lab's machine), and that is not this pathology.
//   - KafkaMinSends / KafkaMinBusySends: fewer sends than this say nothing
//     about queueing.
const (
	KafkaMinBusyShare      = 0.05
	KafkaBusyConcurrency   = 8
	KafkaMinSlowdown       = 5.0
	KafkaMinBusyMs         = 25.0
	KafkaMinShareOfRequest = 0.5
	KafkaMinSends          = 50
	KafkaMinBusySends      = 20
)

// Client-metric thresholds (the metric signal), from the producer's own
// metrics (Kafka's producer-metrics group, exported by the OpenTelemetry
// Java agent): a producer that waited for buffer memory, or that sent
// few records per request while records queued, is batching too little for
// its rate, which is the case's cause ("batch and buffer sizes too small").
//
// Buffer waits count when they are a real part of what sends cost: at
// least a quarter of the sends' total time, or as many threads waiting at
// once as make a send busy. Under uniform load the small-batches producer
// on the lab's machine waited 8% of its send time, with no thread seen
// waiting; under bursts 92%, with 143 threads waiting.
const (
	KafkaSmallBatchRecords  = 4.0  // records per produce request, average
	KafkaMinQueueTimeMs     = 10.0 // record queue time, average
	KafkaMinBufferWaitShare = 0.25
)

// KafkaProducerContention finds a Kafka producer that makes its callers
// queue: sends slow down as more of them are in flight at once, and the
// request spends most of its time waiting for the send. Its first signal
// is the PRODUCER spans (the OpenTelemetry Java agent's kafka-clients
// instrumentation times a send from send() to the broker's
// acknowledgement, so a send's span includes the time it queued for
// buffer memory and for a batch). Its second signal, when the scenario
// runner passes them, is the producer's client metrics in Prometheus:
// small batches, few records per request, buffer-pool waits. With metrics,
// both signals must agree; without (analyze --file), the span signal
// decides and the finding says the cause is unconfirmed.
//
// Why the runner passes metrics in rather than the detector fetching
// them: detectors only read what they are given (Analyze may run them on
// a saved trace file years later), and the runner is the one part that
// knows the run's window and where Prometheus is.
type KafkaProducerContention struct {
	metrics Metrics
}

// ID implements Detector.
func (KafkaProducerContention) ID() string { return "kafka-producer-contention" }

// producerMetrics are what the detector reads of the producer's client
// metrics: its name for each, the series (the agent's Kafka metric reporter
// after the collector's Prometheus exporter; services/ingest/README.md lists
// them), and the PromQL that sums the series up per service over a window
// (%[1]s the series, %[2]s the window, %[3]s the filter liveProducers).
var producerMetrics = []struct{ name, series, query string }{
	{"records_per_request_avg", "kafka_producer_records_per_request_avg", "avg by (exported_job) (avg_over_time(%[1]s[%[2]s])%[3]s)"},
	{"batch_size_avg_bytes", "kafka_producer_batch_size_avg", "avg by (exported_job) (avg_over_time(%[1]s[%[2]s])%[3]s)"},
	{"record_queue_time_avg_ms", "kafka_producer_record_queue_time_avg", "max by (exported_job) (max_over_time(%[1]s[%[2]s])%[3]s)"},
	{"bufferpool_wait_seconds", "kafka_producer_bufferpool_wait_time_ns_total", "sum by (exported_job) (increase(%[1]s[%[2]s])%[3]s) / 1e9"},
	{"waiting_threads_max", "kafka_producer_waiting_threads", "max by (exported_job) (max_over_time(%[1]s[%[2]s])%[3]s)"},
	{"request_rate_avg", "kafka_producer_request_rate", "avg by (exported_job) (avg_over_time(%[1]s[%[2]s])%[3]s)"},
}

// liveProducers keeps the series of producers that sent records in the
// window. The collector's exporter goes on exporting a stopped process's
// last values for minutes, so without it a variant's numbers were averaged
// with those of the previous variant's producer (the same service, another
// instance), e.g. a tuned producer's records per request with the small
// batches' 1.0.
const liveProducers = " and on (exported_instance, instance) (increase(kafka_producer_record_send_total[%s]) > 0)"

// MetricQueries implements MetricsReader.
func (KafkaProducerContention) MetricQueries(w string) map[string]string {
	out := map[string]string{}
	for _, m := range producerMetrics {
		out[m.name] = fmt.Sprintf(m.query, m.series, w, fmt.Sprintf(liveProducers, w))
	}
	return out
}

// MetricSeries implements MetricsReader.
func (KafkaProducerContention) MetricSeries() []string {
	var out []string
	for _, m := range producerMetrics {
		out = append(out, m.series)
	}
	return out
}

// WithMetrics implements MetricsReader.
func (d KafkaProducerContention) WithMetrics(m Metrics) Detector {
	return KafkaProducerContention{metrics: m}
}

type producerKey struct{ service, destination string }

// send is one send to Kafka: what the judgment and a finding read of its
// span and its trace, and no span, since every send of the input is kept
// until the end.
type send struct {
	span        callSpan
	t           *sendTrace
	seq         int32 // the span's place in its trace's Spans
	parentDur   int64 // the parent span's duration, -1 without a parent
	critical    int64 // the critical-path time under the send
	op, parent  string
	concurrency int // sends of the same producer in flight when it started, itself included
}

// sendTrace is what a finding reads of a trace with sends.
type sendTrace struct {
	ID        string
	rootStart int64
	dur       int64
	request   string // requestOf the trace
}

// before is Group's order of traces, then the order of spans in a trace:
// the order Detect once read sends in.
func (s *send) before(o *send) bool {
	return spanBefore(s.t.rootStart, s.t.ID, s.seq, o.t.rootStart, o.t.ID, o.seq)
}

// Aggregator implements PerTrace. A producer is judged by all its sends,
// whichever trace they are in: Add keeps each send (send) and lets the
// trace go, and Findings judges.
func (d KafkaProducerContention) Aggregator() Aggregator {
	return &kafkaCollector{d: d, groups: map[producerKey][]send{}, strs: map[string]string{}}
}

type kafkaCollector struct {
	d      KafkaProducerContention
	groups map[producerKey][]send
	strs   map[string]string // names shared by sends, held once (see eventLoopCollector.str)
}

func (a *kafkaCollector) str(s string) string {
	if v, ok := a.strs[s]; ok {
		return v
	}
	v := strings.Clone(s)
	a.strs[v] = v
	return v
}

// Add implements Aggregator.
func (a *kafkaCollector) Add(t *trace.Trace) {
	var st *sendTrace
	for i, s := range t.Spans {
		if !isKafkaSend(s) {
			continue
		}
		if st == nil {
			st = &sendTrace{ID: strings.Clone(t.ID), rootStart: t.Root.Start, dur: t.Duration(), request: a.str(requestOf(t))}
		}
		k := producerKey{a.str(s.Service), a.str(s.Attr("messaging.destination.name"))}
		sd := send{span: callSpan{s.Start, s.End}, t: st, seq: int32(i), parentDur: -1,
			critical: t.CriticalTimeUnder([]*trace.Span{s}), op: a.str(t.Operation(s))}
		if p := t.Parent(s); p != nil {
			sd.parentDur, sd.parent = p.Duration(), a.str(t.Operation(p))
		}
		a.groups[k] = append(a.groups[k], sd)
	}
}

// Findings implements Aggregator.
func (a *kafkaCollector) Findings() []Finding {
	var out []Finding
	for k, sends := range a.groups {
		sort.Slice(sends, func(i, j int) bool { return sends[i].before(&sends[j]) })
		if f, ok := a.d.judge(k, sends); ok {
			out = append(out, f)
		}
	}
	return out
}

func isKafkaSend(s *trace.Span) bool {
	return s.Kind == trace.KindProducer && s.Attr("messaging.system") == "kafka"
}

// Detect implements Detector.
func (d KafkaProducerContention) Detect(traces []*trace.Trace) []Finding {
	return detectEach(d, traces)
}

func (d KafkaProducerContention) judge(k producerKey, sends []send) (Finding, bool) {
	if len(sends) < KafkaMinSends {
		return Finding{}, false
	}
	inFlightAtStarts(sends)
	var quiet, busy []float64
	var busySends []send
	maxConc := 0
	concs := make([]float64, len(sends))
	for i, s := range sends {
		ms := float64(s.span.Duration()) / 1e6
		concs[i] = float64(s.concurrency)
		maxConc = max(maxConc, s.concurrency)
		switch {
		case s.concurrency <= 2:
			quiet = append(quiet, ms)
		case s.concurrency >= KafkaBusyConcurrency:
			busy = append(busy, ms)
			busySends = append(busySends, s)
		}
	}
	if len(busy) < KafkaMinBusySends || len(quiet) == 0 || float64(len(busy)) < KafkaMinBusyShare*float64(len(sends)) {
		return Finding{}, false
	}
	quietMs, busyMs := quantile(quiet, 0.5), quantile(busy, 0.5)
	slowdown := busyMs / math.Max(quietMs, 0.001)
	if slowdown < KafkaMinSlowdown || busyMs < KafkaMinBusyMs {
		return Finding{}, false
	}

	// What the busy sends cost their requests.
	var shareParent, shareCP float64
	traces := map[*sendTrace]bool{}
	var example send
	requests := map[string]bool{}
	for _, s := range busySends {
		requests[s.t.request] = true
		if s.parentDur > 0 {
			shareParent += math.Min(1, float64(s.span.Duration())/float64(s.parentDur))
		}
		if !traces[s.t] {
			traces[s.t] = true
			if dur := s.t.dur; dur > 0 {
				shareCP += float64(s.critical) / float64(dur)
			}
		}
		if example.t == nil || s.span.Duration() > example.span.Duration() ||
			s.span.Duration() == example.span.Duration() && s.t.ID < example.t.ID {
			example = s
		}
	}
	shareParent /= float64(len(busySends))
	var sendSeconds float64
	for _, s := range sends {
		sendSeconds += float64(s.span.Duration()) / 1e9
	}
	if shareParent < KafkaMinShareOfRequest {
		return Finding{}, false
	}

	ev := map[string]any{
		"example_trace_id":      example.t.ID,
		"sends":                 len(sends),
		"busy_sends":            len(busySends),
		"busy_concurrency":      KafkaBusyConcurrency,
		"quiet_send_median_ms":  round(quietMs, 2),
		"busy_send_median_ms":   round(busyMs, 2),
		"slowdown":              round(slowdown, 1),
		"concurrency_p50":       quantile(concs, 0.5),
		"concurrency_p90":       quantile(concs, 0.9),
		"concurrency_max":       maxConc,
		"busy_send_p95_ms":      round(quantile(busy, 0.95), 2),
		"client_metrics_source": "none (traces only)",
	}
	cause := "cause unconfirmed: no client metrics (run it as a scenario to read them from Prometheus)"
	if m, ok := d.metrics[k.service]; ok && len(m) > 0 {
		ev["client_metrics_source"] = "prometheus"
		for name, v := range m {
			ev[name] = round(v, 3)
		}
		waits := m["bufferpool_wait_seconds"] >= KafkaMinBufferWaitShare*sendSeconds || m["waiting_threads_max"] >= KafkaBusyConcurrency
		small := m["records_per_request_avg"] > 0 && m["records_per_request_avg"] <= KafkaSmallBatchRecords &&
			m["record_queue_time_avg_ms"] >= KafkaMinQueueTimeMs
		if !waits && !small {
			// Slow under concurrency, but the producer batches well and
			// never waited for memory: the time went elsewhere (CPU).
			return Finding{}, false
		}
		cause = fmt.Sprintf("client metrics: %.1f records per request, batches of %.0f bytes, records queued up to %.0f ms, %.2f s waiting for buffer memory (up to %.0f threads)",
			m["records_per_request_avg"], m["batch_size_avg_bytes"], m["record_queue_time_avg_ms"], m["bufferpool_wait_seconds"], m["waiting_threads_max"])
	}
	op := example.op
	f := Finding{
		Detector:            d.ID(),
		Service:             k.service,
		Operation:           op,
		CallsPerTrace:       1,
		MaxConcurrency:      maxConc,
		ShareOfParent:       round(shareParent, 4),
		ShareOfCriticalPath: round(shareCP/float64(len(traces)), 4),
		TracesAffected:      len(traces),
		Evidence:            ev,
	}
	if len(requests) == 1 {
		f.Request = example.t.request // one request type paid for the waits
	}
	if example.parentDur >= 0 {
		f.ParentOperation = example.parent
	}
	f.Summary = fmt.Sprintf("%s's Kafka sends to %s slow down under concurrency: median %.0f ms with ≥%d sends in flight (%d sends) against %.1f ms alone (%.0f×), %.0f%% of their requests; %s",
		k.service, k.destination, busyMs, KafkaBusyConcurrency, len(busySends), quietMs, slowdown, 100*shareParent, cause)
	return f, true
}

// inFlightAtStarts sets each send's concurrency: how many sends of the
// group had started and not yet ended when it started (itself included).
func inFlightAtStarts(sends []send) {
	starts := make([]int64, len(sends))
	ends := make([]int64, len(sends))
	for i, s := range sends {
		starts[i], ends[i] = s.span.Start, max(s.span.End, s.span.Start+1)
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	sort.Slice(ends, func(i, j int) bool { return ends[i] < ends[j] })
	for i := range sends {
		at := sends[i].span.Start
		started := sort.Search(len(starts), func(j int) bool { return starts[j] > at })
		ended := sort.Search(len(ends), func(j int) bool { return ends[j] > at })
		sends[i].concurrency = started - ended
	}
}
