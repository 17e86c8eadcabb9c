// Package loadbench measures the load engine's own cost: the CPU it spends
// per request and how punctually it sends, at the rates the lab's open-model
// scenarios offer, against a stub that answers at once, so that what is
// measured is the engine and not a service.
package loadbench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"time"

	"tracelab/pkg/load"
)

// Case is one load at one rate.
type Case struct {
	Name       string
	Definition string // relative to the checkout
	Params     map[string]string
	// Why this rate: which recorded run it stands for.
	Why string
}

// Cases are antpath's and kafka-batching's loads at the highest rates
// their recorded runs offered (docs/load.md, "The load engine's own cost").
var Cases = []Case{
	{"antpath", "loadtests/antpath.yaml", map[string]string{"RATE": "680", "DURATION": "20s", "VUS": "300"},
		"the most k6 offered the gateway here (scenarios/antpath/README.md: about 680 requests/s)"},
	{"kafka-batching", "loadtests/events.yaml", map[string]string{"RATE": "60", "DURATION": "20s", "VUS": "300", "SHAPE": "bursty",
		"BURST_FACTOR": "4", "BURST_MS": "300", "BURST_GAP_MS": "2000"},
		"fixed-2x's bursts: a mean of 60 requests/s, spikes near 200/s"},
}

// Measurement is one run of a case.
type Measurement struct {
	Requests     int
	CPUPerReqUs  float64 // the engine's CPU (user + system) per request
	LateSends    float64 // share of sends over load.LateSendMs late
	MaxRSSMiB    float64 // the process's peak resident set so far
	OfferedRPS   float64
	ThroughputRP float64
}

// Measure runs c against target once, in this process, and reads the
// process's CPU around it: the stub must run in another process.
func Measure(ctx context.Context, root string, c Case, target string) (Measurement, error) {
	def, err := load.ReadDefinition(root + "/" + c.Definition)
	if err != nil {
		return Measurement{}, err
	}
	before := cpu()
	run, err := def.Run(ctx, load.Options{Target: target, Params: c.Params})
	if err != nil {
		return Measurement{}, err
	}
	used := cpu() - before
	if run.Summary.Failed > 0 {
		return Measurement{}, fmt.Errorf("%s: %.1f%% of the requests to the stub failed", c.Name, 100*run.Summary.Failed)
	}
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	m := Measurement{Requests: run.Summary.Requests, LateSends: run.Summary.LateSends, MaxRSSMiB: float64(ru.Maxrss) / 1024,
		ThroughputRP: run.Summary.ThroughputRPS}
	if m.Requests > 0 {
		m.CPUPerReqUs = float64(used.Microseconds()) / float64(m.Requests)
	}
	return m, nil
}

func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Serve answers as the gateway and ingest do, with their statuses only:
// the route list antpath's setup reads (routes as many as the gateway's
// table), 202 to an event, 200 to anything else.
func Serve(l net.Listener) error {
	var routes strings.Builder
	routes.WriteString(`{"routes": [`)
	for i := range 1925 {
		if i > 0 {
			routes.WriteString(",")
		}
		fmt.Fprintf(&routes, `{"method": "GET", "pattern": "/api/r%d/{id}", "sample": "/api/r%d/%d", "status": 200}`, i, i, i)
	}
	routes.WriteString("]}")
	list := []byte(routes.String())
	return http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/routes":
			w.Write(list)
		case r.Method == "POST" && r.URL.Path == "/events":
			w.WriteHeader(http.StatusAccepted)
		}
	}))
}

// Spread is a figure's minimum, median and maximum over runs.
type Spread struct{ Min, Median, Max float64 }

func SpreadOf(xs []float64) Spread {
	s := slices.Sorted(slices.Values(xs))
	return Spread{s[0], s[len(s)/2], s[len(s)-1]}
}
