// Package result is the record of a scenario run, result.json: what the
// runner measured, the judge's checks and the verdict. The runner writes
// it; the report, the training rounds and the tests read it back through
// Read and ReadTraces, so it is decoded in one place.
//
// A run hands its traces on in memory (VariantResult.Traces), parsed once
// from Jaeger's answer; the traces file is for users, and for reading a
// finished run back (ReadTraces).
package result

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	"tracelab/pkg/analyze"
	"tracelab/pkg/bootstrap"
	"tracelab/pkg/compare"
	"tracelab/pkg/detect"
	"tracelab/pkg/lab"
	"tracelab/pkg/load"
	"tracelab/pkg/otlp"
	"tracelab/pkg/trace"
)

// Result is the full record of a run, written as JSON under .state/results.
type Result struct {
	Scenario  string    `json:"scenario"`
	Profile   string    `json:"profile"`
	Runtime   string    `json:"runtime"`
	StartedAt time.Time `json:"started_at"`
	// Entrypoint is the service the load drives: whose CPU decides bound.
	Entrypoint string `json:"entrypoint"`
	// Capacity is what each probed variant served flat out, before the
	// variants ran; Calibrated, the open-model rate sized from it.
	Capacity   []Capacity      `json:"capacity,omitempty"`
	Calibrated *Calibrated     `json:"calibrated,omitempty"`
	Variants   []VariantResult `json:"variants"`
	// Compared is each fix against the baseline, as `tracelab compare
	// --format json` prints it; the judge's checks use it.
	Compared map[string]compare.Result `json:"compared"`
	Checks   []Check                   `json:"checks"`
	Verdict  string                    `json:"verdict"` // "pass" or "fail"
	// Where the run left result.json and report.html; not in the file.
	ResultFile string `json:"-"`
	ReportFile string `json:"-"`
}

// VariantResult is everything measured for one variant.
type VariantResult struct {
	Variant  string       `json:"variant"`
	Settings lab.Settings `json:"settings"`
	Window   struct {
		Start time.Time `json:"start"`
		End   time.Time `json:"end"`
	} `json:"window"`
	Load load.Summary `json:"load"`
	// Requests are the load's requests, each joined to its trace.
	Requests []Request          `json:"requests,omitempty"`
	Metrics  map[string]float64 `json:"metrics"`
	// CPU is each service's CPU over the load window.
	CPU map[string]CPUUse `json:"cpu,omitempty"`
	// Bound says whether the entrypoint's service was on-CPU or off-CPU.
	Bound string `json:"bound,omitempty"`
	// GeneratorCores is the load generator's own CPU, when it ran in
	// tracelab's process: what it took from the machine the services share.
	GeneratorCores float64 `json:"generator_cores,omitempty"`
	// Samples are what the intervals of ratios between variants resample,
	// by metric name; Metrics holds their estimates.
	Samples map[string]bootstrap.Sample `json:"-"`
	// ClientMetrics are what metrics-reading detectors got from
	// Prometheus for this variant's window (service -> name -> value).
	ClientMetrics detect.Metrics `json:"client_metrics,omitempty"`
	// Delivery is the end-to-end count, when the scenario has one.
	Delivery *DeliveryCount `json:"delivery,omitempty"`
	Analysis analyze.Report `json:"analysis"`
	// Durations are the traced requests' durations (ms) by request type,
	// for comparisons; the traces file has them too.
	Durations map[string][]float64 `json:"-"`
	// Traces are the traces the variant was analyzed on, as the run
	// collected them, or as ReadTraces read them back from TracesFile.
	Traces     []*trace.Trace `json:"-"`
	TracesFile string         `json:"traces_file"`
}

// Request is one request of the load, as the client saw it, and its
// trace's root span as the server did: ServerMs is the root span's
// duration, OutsideMs what the client waited, from the send, beyond it.
// Both are absent when the request has no trace (it never reached the
// service, or its spans were not collected).
type Request struct {
	load.Record
	ServerMs  *float64 `json:"server_ms,omitempty"`
	OutsideMs *float64 `json:"outside_ms,omitempty"`
}

// Check is one judged expectation; the run passes when all are OK.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	// Ratio is a ratio check's value with its 95% interval; the check
	// holds only when the interval's lower bound clears the minimum.
	Ratio *bootstrap.Interval `json:"ratio,omitempty"`
}

// CPUUse is one service's CPU over a window: the cores it kept busy on
// average, and its CPU milliseconds per request served.
type CPUUse struct {
	Cores        float64 `json:"cores"`
	MsPerRequest float64 `json:"ms_per_request"`
	// OthersCores is the CPU other programs used on its CPUs meanwhile,
	// for the entrypoint on the local runtime: what it might have used.
	OthersCores float64 `json:"others_cores,omitempty"`
	// RestBusy is the busy share of the machine's other CPUs meanwhile,
	// where the rest of the stack and the load generator ran.
	RestBusy float64 `json:"rest_busy,omitempty"`
}

// Capacity is a variant probed flat out (closed model): what it served,
// how fast, and what CPU it took.
type Capacity struct {
	Variant       string            `json:"variant"`
	Requests      int               `json:"requests"`
	ThroughputRPS float64           `json:"throughput_rps"`
	MeanMs        float64           `json:"mean_ms"`
	CPU           map[string]CPUUse `json:"cpu,omitempty"`
	Bound         string            `json:"bound,omitempty"`
	// GeneratorCores: as in VariantResult.
	GeneratorCores float64 `json:"generator_cores,omitempty"`
	// SettleS is how long the probe ran flat out, before it measured,
	// waiting for the entrypoint's JIT to settle; JITCores is the share
	// of a CPU its JIT compiler used while it measured (nil where the
	// runtime cannot read it).
	SettleS  float64  `json:"settle_s,omitempty"`
	JITCores *float64 `json:"jit_cores,omitempty"`
	// Metrics and Samples are merged into the variant's own when it also
	// runs, as capacity_rps and capacity_cpu_ms_per_request.
	Metrics map[string]float64          `json:"metrics"`
	Samples map[string]bootstrap.Sample `json:"-"`
}

// Calibrated records how a run sized its open-model load from a capacity.
type Calibrated struct {
	Variant       string  `json:"variant"`
	ThroughputRPS float64 `json:"throughput_rps"` // what Variant served flat out
	RateFactor    float64 `json:"rate_factor"`
	Rate          int     `json:"rate"` // the RATE every variant was offered
}

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

// Read decodes a run's result.json.
func Read(path string) (*Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var res Result
	if err := json.Unmarshal(data, &res); err != nil || res.Scenario == "" {
		return nil, fmt.Errorf("%s is not a tracelab result.json", path)
	}
	res.ResultFile = path
	return &res, nil
}

// ReadTraces reads back, into each variant's Traces, the traces it was
// analyzed on, for a result Read from disk (a run's are still in memory).
func (r *Result) ReadTraces() error {
	for i := range r.Variants {
		v := &r.Variants[i]
		traces, err := otlp.ReadFile(v.TracesFile)
		if err != nil {
			return fmt.Errorf("variant %s: %v", v.Variant, err)
		}
		v.Traces = traces
	}
	return nil
}

// FindingIDs are the detectors that found something, each once, sorted.
func FindingIDs(fs []detect.Finding) []string {
	ids := []string{}
	for _, f := range fs {
		ids = append(ids, f.Detector)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}
