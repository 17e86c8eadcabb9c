package detect_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"weak"

	"tracelab/internal/tracegen"
	"tracelab/pkg/detect"
	"tracelab/pkg/trace"
)

// perTraceInput gives each PerTrace detector something to find: lab and
// ORM loops (n-plus-one), the same SELECT again and again (redundant-call)
// seven different statements in a row (chatty-db) and a gateway whose
// route matching outlasts its handlers (dispatch-overhead), a blocking
// client on Vert.x event loops and a blocking call on an asyncio loop
// (event-loop-blocking), sends to Kafka slowed by bursts
// (kafka-producer-contention). It is built afresh on each call so that
// two runs share no trace.
func perTraceInput() []*trace.Trace {
	traces := trace.Group(tracegen.Generate(3_000, 1))
	same := func(int) string { return "SELECT * FROM visits WHERE pet_id = 7" }
	for i := range 3 {
		traces = append(traces, loopTrace(fmt.Sprintf("redundant%d", i), 6, same, noAttrs))
		traces = append(traces, loopTrace(fmt.Sprintf("undecided%d", i), 6, func(int) string { return "SELECT * FROM visits WHERE pet_id = ?" }, noAttrs))
		stmts := make([]string, 7)
		for j := range stmts {
			stmts[j] = fmt.Sprintf("SELECT * FROM t%d WHERE id = ?", j)
		}
		traces = append(traces, dbTrace(fmt.Sprintf("chatty%d", i), stmts, false))
	}
	traces = append(traces, gatewayLoad(gatewayOptions{requests: 200, interval: 2, handler: 0.2,
		dispatch: func(c int) float64 { return 2 * float64(1+c) }})...)
	traces = append(traces, trace.Group(ordersLoad(ordersOptions{VUs: 16, Loops: 2, Requests: 400, Blocking: true, Seed: 1}))...)
	traces = append(traces, trace.Group(processLoad(processOptions{VUs: 20, Requests: 300, Language: "python",
		Scope: "opentelemetry.instrumentation.asgi", HoldMs: 0.5, WaitMs: 6, Blocking: true, TracedWait: true, Seed: 2}))...)
	return append(traces, trace.Group(ingestRequests(arrivals(100, 8, 4, 300), 4, 1, 0))...)
}

func perTraceDetectors(t *testing.T) []detect.PerTrace {
	var out []detect.PerTrace
	for _, d := range detect.All() {
		if p, ok := d.(detect.PerTrace); ok {
			out = append(out, p)
		}
	}
	// Every detector: none needs the traces kept to the end.
	if len(out) != len(detect.All()) {
		t.Fatalf("%d of %d detectors are PerTrace", len(out), len(detect.All()))
	}
	return out
}

// Fed one trace at a time, with each trace forgotten after it was read, a
// PerTrace detector finds exactly what Detect finds over all of them, and
// keeps no trace alive: only the few spans of each finding's example.
func TestPerTraceDetectorsKeepNoTrace(t *testing.T) {
	for _, d := range perTraceDetectors(t) {
		t.Run(d.ID(), func(t *testing.T) {
			want, err := json.Marshal(d.Detect(perTraceInput()))
			if err != nil {
				t.Fatal(err)
			}
			agg := d.Aggregator()
			var refs []weak.Pointer[trace.Trace]
			traces := perTraceInput()
			for i, tr := range traces {
				agg.Add(tr)
				tr.ForgetMemos()
				refs = append(refs, weak.Make(tr))
				traces[i] = nil
			}
			runtime.GC()
			runtime.GC()
			kept := 0
			for _, r := range refs {
				if r.Value() != nil {
					kept++
				}
			}
			if kept > 0 {
				t.Errorf("%d of %d traces still reachable after the aggregator read them", kept, len(refs))
			}
			fs := agg.Findings()
			if len(fs) == 0 {
				t.Fatal("no findings: the input no longer exercises the detector")
			}
			got, err := json.Marshal(fs)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("trace by trace:\n%s\nDetect:\n%s", got, want)
			}
		})
	}
}
