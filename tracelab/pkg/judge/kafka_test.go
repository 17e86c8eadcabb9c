package judge

import (
	"fmt"
	"strings"
	"testing"

	"tracelab/internal/labtest"
	"tracelab/pkg/detect"
	"tracelab/pkg/result"
	"tracelab/pkg/scenario"
)

func loadKafka(t *testing.T) *scenario.Scenario {
	t.Helper()
	s, err := scenario.Load(labtest.Open(t, "../../.."), "kafka-batching")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func kafkaVariant(name string, p95 float64, d result.DeliveryCount, fs ...detect.Finding) result.VariantResult {
	v := variant(name, p95/2, 0, fs...)
	v.Metrics["p95_ms"] = p95
	v.Metrics["throughput_rps"] = 100
	if name == "fixed-2x" {
		v.Metrics["throughput_rps"] = 200
	}
	v.Metrics["records_per_request"] = 1
	if strings.HasPrefix(name, "fixed") {
		v.Metrics["records_per_request"] = 1.6
	}
	v.Delivery = &d
	return v
}

func TestJudgeObjectiveAndDelivery(t *testing.T) {
	s := loadKafka(t)
	contention := detect.Finding{Detector: "kafka-producer-contention", Service: "ingest", ShareOfParent: 0.9}
	all := result.DeliveryCount{Sent: 500, Accepted: 500, Stored: 500}
	good := []result.VariantResult{
		kafkaVariant("baseline-uniform", 20, all),
		kafkaVariant("baseline", 800, all, contention),
		kafkaVariant("fixed", 30, all),
		kafkaVariant("fixed-2x", 60, all),
	}
	if f := failed(judge(s, "full", good, emptyBaseline())); len(f) != 0 {
		t.Fatalf("unexpected failures: %v", f)
	}

	lost := append([]result.VariantResult{}, good...)
	lost[2] = kafkaVariant("fixed", 30, result.DeliveryCount{Sent: 500, Accepted: 500, Stored: 497})
	f := failed(judge(s, "full", lost, emptyBaseline()))
	if len(f) != 1 || !strings.Contains(f[0], "3 accepted events lost") {
		t.Errorf("a lost event: failures %v", f)
	}

	met := append([]result.VariantResult{}, good...)
	met[1] = kafkaVariant("baseline", 40, all, contention)
	f = failed(judge(s, "full", met, emptyBaseline()))
	if len(f) == 0 || !strings.Contains(strings.Join(f, ";"), "baseline: objective p95_ms") {
		t.Errorf("a baseline that meets the objective: failures %v", f)
	}

	// A failed request that was delivered anyway is not a loss.
	late := append([]result.VariantResult{}, good...)
	late[1].Delivery = &result.DeliveryCount{Sent: 500, Accepted: 498, Stored: 499}
	for _, c := range judge(s, "full", late, emptyBaseline()) {
		if strings.HasPrefix(c.Name, "baseline: nothing lost") && !c.OK {
			t.Errorf("%s: %s", c.Name, c.Detail)
		}
	}
}

// A variant that must reproduce the case's timeouts: too few failures fail
// it, and its failed requests, delivered after their 503, are no loss.
func TestJudgeMinErrorRate(t *testing.T) {
	s := loadKafka(t)
	exp := s.Expectations.Variants["baseline-timeouts"]
	if exp.MinErrorRate <= 0 {
		t.Fatalf("baseline-timeouts expects no failures: %+v", exp)
	}
	timeouts := func(failedShare float64) result.VariantResult {
		sent := int64(1000)
		accepted := sent - int64(failedShare*float64(sent))
		v := kafkaVariant("baseline-timeouts", 400, result.DeliveryCount{Sent: sent, Accepted: accepted, Stored: sent})
		v.Load.Requests, v.Load.Failed = int(sent), failedShare
		return v
	}
	byName := func(checks []result.Check) map[string]result.Check {
		out := map[string]result.Check{}
		for _, c := range checks {
			out[c.Name] = c
		}
		return out
	}
	atLeast := fmt.Sprintf("baseline-timeouts: at least %g%% of requests failed", 100*exp.MinErrorRate)

	checks := byName(judge(s, "full", []result.VariantResult{timeouts(exp.MinErrorRate + 0.05)}, emptyBaseline()))
	if c, ok := checks[atLeast]; !ok || !c.OK {
		t.Errorf("enough failures: %q is %+v (checks %v)", atLeast, c, checks)
	}
	if _, ok := checks["baseline-timeouts: every request succeeded"]; ok {
		t.Error("a variant that must fail requests is also held to every request succeeding")
	}
	lost := checks["baseline-timeouts: nothing lost (accepted ≤ stored by ledger)"]
	if !lost.OK || !strings.Contains(lost.Detail, "failed requests count as not accepted") {
		t.Errorf("delivered timeouts: %+v", lost)
	}

	checks = byName(judge(s, "full", []result.VariantResult{timeouts(exp.MinErrorRate / 2)}, emptyBaseline()))
	if c := checks[atLeast]; c.OK {
		t.Errorf("too few failures passed: %+v", c)
	}
}
