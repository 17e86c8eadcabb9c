package scenario

import (
	"os"
	"strings"
	"testing"
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
	if got := s.DefaultVariants("full"); len(got) != 5 || got[0] != "baseline-uniform" {
		t.Errorf("full runs %v", got)
	}
	nplus1, err := Parse([]byte(nplus1YAML(t)))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Selected("both", "full"); len(got) != 5 || got[0] != "baseline-uniform" {
		t.Errorf("--variant both with the full profile runs %v; want the profile's five", got)
	}
	if got := s.Selected("all", "smoke"); len(got) != len(s.Variants) || got[0] != "baseline" || got[1] != "fixed" {
		t.Errorf("--variant all runs %v; want every variant, baseline and fixed first", got)
	}
	if got := s.Selected("fixed", "full"); strings.Join(got, ",") != "fixed" {
		t.Errorf("--variant fixed runs %v", got)
	}
	if got := nplus1.DefaultVariants("full"); strings.Join(got, ",") != "baseline,fixed" {
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
		{"error share above 1", "min_error_rate: 0.1", "min_error_rate: 5", "expectations.variants.baseline-timeouts.min_error_rate"},
		{"more errors required than allowed", "min_error_rate: 0.1", "min_error_rate: 0.1\n      max_error_rate: 0.01", "field expectations.variants.baseline-timeouts.min_error_rate: 0.1 is above max_error_rate 0.01"},
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
