package scenario

import (
	"os"
	"strings"
	"testing"

	"tracelab/pkg/detect"
)

func loadKafka(t *testing.T) *Scenario {
	t.Helper()
	data, err := os.ReadFile("../../../scenarios/kafka-batching/scenario.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestVariantLoadOverridesTheProfile(t *testing.T) {
	s := loadKafka(t)
	env := s.LoadEnvFor("full", "fixed-2x")
	if env["SHAPE"] != "bursty" || env["RATE_SCALE"] != "2" || env["RATE"] != s.Load.Profiles["full"].Env["RATE"] {
		t.Errorf("fixed-2x env %v", env)
	}
	if env := s.LoadEnvFor("full", "baseline-uniform"); env["SHAPE"] != "uniform" {
		t.Errorf("baseline-uniform env %v", env)
	}
	if got := s.DefaultVariants("full"); len(got) != 4 || got[0] != "baseline-uniform" {
		t.Errorf("full runs %v", got)
	}
	if got := loadNplus1(t).DefaultVariants("full"); strings.Join(got, ",") != "baseline,fixed" {
		t.Errorf("a profile without a list runs %v", got)
	}
}

func TestKafkaScenarioRejectsBadReferences(t *testing.T) {
	data, _ := os.ReadFile("../../../scenarios/kafka-batching/scenario.yaml")
	good := string(data)
	cases := []struct{ name, from, to, field string }{
		{"profile lists an unknown variant", "variants: [baseline, fixed]", "variants: [baseline, fixd]", "field load.profiles.smoke.variants[1]"},
		{"delivery from a service not run", "delivery: {service: ledger", "delivery: {service: ledgr", "field expectations.delivery.service"},
		{"objective word", "objective: broken", "objective: broke", "field expectations.variants.baseline.objective"},
		{"load override of an unknown field", "load:\n      env: {SHAPE: uniform}", "load:\n      envs: {SHAPE: uniform}", "field variants.baseline-uniform.load"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bad := strings.Replace(good, c.from, c.to, 1)
			if bad == good {
				t.Fatalf("test case does not change the document: %q", c.from)
			}
			_, err := Parse([]byte(bad))
			if err == nil || !strings.Contains(err.Error(), c.field) {
				t.Errorf("error %v: want one naming %q", err, c.field)
			}
		})
	}
}

func kafkaVariant(name string, p95 float64, d DeliveryCount, fs ...detect.Finding) VariantResult {
	v := variant(name, p95/2, 0, fs...)
	v.Metrics["p95_ms"] = p95
	v.Metrics["throughput_rps"] = 100
	if name == "fixed-2x" {
		v.Metrics["throughput_rps"] = 200
	}
	v.Delivery = &d
	return v
}

func TestJudgeObjectiveAndDelivery(t *testing.T) {
	s := loadKafka(t)
	contention := detect.Finding{Detector: "kafka-producer-contention", Service: "ingest", ShareOfParent: 0.9}
	all := DeliveryCount{Sent: 500, Accepted: 500, Stored: 500}
	good := []VariantResult{
		kafkaVariant("baseline-uniform", 20, all),
		kafkaVariant("baseline", 800, all, contention),
		kafkaVariant("fixed", 30, all),
		kafkaVariant("fixed-2x", 60, all),
	}
	if f := failed(judge(s, "full", good, emptyBaseline())); len(f) != 0 {
		t.Fatalf("unexpected failures: %v", f)
	}

	lost := append([]VariantResult{}, good...)
	lost[2] = kafkaVariant("fixed", 30, DeliveryCount{Sent: 500, Accepted: 500, Stored: 497})
	f := failed(judge(s, "full", lost, emptyBaseline()))
	if len(f) != 1 || !strings.Contains(f[0], "3 accepted events lost") {
		t.Errorf("a lost event: failures %v", f)
	}

	met := append([]VariantResult{}, good...)
	met[1] = kafkaVariant("baseline", 40, all, contention)
	f = failed(judge(s, "full", met, emptyBaseline()))
	if len(f) == 0 || !strings.Contains(strings.Join(f, ";"), "baseline: objective p95_ms") {
		t.Errorf("a baseline that meets the objective: failures %v", f)
	}

	// A failed request that was delivered anyway is not a loss.
	late := append([]VariantResult{}, good...)
	late[1].Delivery = &DeliveryCount{Sent: 500, Accepted: 498, Stored: 499}
	for _, c := range judge(s, "full", late, emptyBaseline()) {
		if strings.HasPrefix(c.Name, "baseline: nothing lost") && !c.OK {
			t.Errorf("%s: %s", c.Name, c.Detail)
		}
	}
}
