//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"

	"tracelab/pkg/detect"
	"tracelab/pkg/result"
)

func findings(v result.VariantResult, detector string) []detect.Finding {
	var out []detect.Finding
	for _, f := range v.Analysis.Findings {
		if f.Detector == detector {
			out = append(out, f)
		}
	}
	return out
}

func TestEventloopSmoke(t *testing.T) {
	res := runSmoke(t, "eventloop")
	for _, v := range res.Variants {
		found := findings(v, "event-loop-blocking")
		switch v.Variant {
		case "baseline":
			if len(found) != 1 {
				t.Fatalf("baseline: %d event-loop-blocking findings, want 1", len(found))
			}
			f := found[0]
			if f.Service != "orders" || f.ParentOperation != "POST /orders" || !strings.Contains(f.Operation, "/customers/") {
				t.Errorf("baseline finding names %s / %s / %s; want orders blocking on customers in POST /orders", f.Service, f.ParentOperation, f.Operation)
			}
			threads, _ := f.Evidence["threads"].([]any)
			for _, th := range threads {
				if s, _ := th.(string); !strings.HasPrefix(s, "vert.x-eventloop-thread-") {
					t.Errorf("blocked thread %v is not an event loop", th)
				}
			}
			if len(threads) == 0 {
				t.Error("finding names no thread")
			}
		default:
			if len(found) != 0 {
				t.Errorf("%s: unexpected event-loop-blocking: %s", v.Variant, found[0].Summary)
			}
		}
	}
	assertNothingLeft(t)
}

func TestChattyDBSmoke(t *testing.T) {
	res := runSmoke(t, "chatty-db")
	for _, v := range res.Variants {
		found := findings(v, "chatty-db")
		switch v.Variant {
		case "baseline":
			if len(found) != 1 {
				t.Fatalf("baseline: %d chatty-db findings, want 1", len(found))
			}
			f := found[0]
			// 3 product reads, the order, its lines, the stock, the audit row.
			if f.Service != "orders" || f.CallsPerTrace != 7 || f.MaxConcurrency != 1 {
				t.Errorf("baseline finding: %s, %v calls per trace, concurrency %d; want orders, 7 sequential", f.Service, f.CallsPerTrace, f.MaxConcurrency)
			}
			if got := v.Metrics["db_calls_per_request"]; got != 7 {
				t.Errorf("baseline: %v database calls per POST, want 7", got)
			}
		case "fixed":
			if len(found) != 0 {
				t.Errorf("fixed: unexpected chatty-db: %s", found[0].Summary)
			}
			if got := v.Metrics["db_calls_per_request"]; got < 1 || got > 2 {
				t.Errorf("fixed: %v database calls per POST, want 1 or 2", got)
			}
		}
	}
	// Case study 000's GET/POST table: flat out, the GET is CPU-bound and
	// the chatty POST waits off-CPU, serving far fewer. The scenario's
	// verdict judges the fix against the baseline, not this contrast, so
	// the test is stricter than the verdict on purpose: the contrast is the
	// case's own evidence, which the report's capacity table teaches. It
	// reads the lab's own classification (bound, the rule the report
	// prints, which counts the JIT compiler as a neighbour), never a figure
	// of its own, on probes that waited for orders' JIT (the profile's
	// settle).
	probes := map[string]result.Capacity{}
	for _, p := range res.Capacity {
		probes[p.Variant] = p
	}
	get, post := probes["get"], probes["baseline"]
	seen := fmt.Sprintf("GET %s, POST %s; load average %s", describeProbe(get, "orders"), describeProbe(post, "orders"), loadAverage())
	for _, p := range []result.Capacity{get, post} {
		if p.SettleS <= 0 || p.JITCores == nil {
			t.Errorf("probe %s did not wait for the JIT or read it: %s", p.Variant, seen)
		}
	}
	// The contrast must never flip: the POST never on-CPU, the GET never
	// off-CPU, and the GET keeping orders busier. "contended" is allowed to
	// the GET: on a busy machine other programs take the CPU it would
	// have used, which says nothing about the GET.
	if post.Bound == "on-CPU" || get.Bound == "off-CPU" || get.CPU["orders"].Cores <= post.CPU["orders"].Cores {
		t.Errorf("flat out: want the POST not on-CPU, the GET not off-CPU and keeping orders busier: %s", seen)
	}
	// The case's GET served 3.2 times its POST (287 and 90 req/s); twice
	// is the margin.
	if get.ThroughputRPS < 2*post.ThroughputRPS {
		t.Errorf("flat out: want the GET to serve at least twice the POST: %s", seen)
	}
	t.Logf("flat out: %s", seen)
	assertNothingLeft(t)
}
