package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func nplus1YAML(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../../scenarios/nplus1/scenario.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestEveryScenarioIsValid(t *testing.T) {
	root, _ := filepath.Abs("../../..")
	names := List(root)
	if len(names) == 0 {
		t.Fatal("no scenarios found")
	}
	for _, n := range names {
		if _, err := Load(root, n); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
}

func TestMalformedScenarioNamesTheField(t *testing.T) {
	good := nplus1YAML(t)
	cases := []struct{ name, from, to, field string }{
		{"wrong type", "min: 25", "min: lots", "field expectations.ratios.0.min"},
		{"unknown field", "warmup: 3", "warmup: 3\n      warmpu: 1", "field load.profiles.smoke"},
		{"bad detector", "absent: [n-plus-one]", "absent: [n-plus-two]", "field expectations.variants.fixed.absent.0"},
		{"missing variant", "  fixed:\n    description", "  fixd:\n    description", "field variants"},
		{"unknown service in settings", "catalog: {CATALOG_FETCH_MODE: batch}", "catalgo: {CATALOG_FETCH_MODE: batch}", "field variants.fixed.settings.catalgo"},
		{"ratio of a missing variant", "denominator: fixed", "denominator: fast", "field expectations.ratios[0]"},
		{"calibration on a missing variant", "warmup: 3", "warmup: 3\n      calibrate: {variant: fast, env: {VUS: \"4\", DURATION: 5s}, rate_factor: 0.9}", "field load.profiles.smoke.calibrate.variant"},
		{"calibration without a probe", "warmup: 3", "warmup: 3\n      calibrate: {variant: baseline, env: {VUS: \"4\"}, rate_factor: 0.9}", "field load.profiles.smoke.calibrate.env"},
		{"not yaml", "name: nplus1", "name: [nplus1", "not valid YAML"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bad := strings.Replace(good, c.from, c.to, 1)
			if bad == good {
				t.Fatalf("test case does not change the document: %q", c.from)
			}
			_, err := Parse([]byte(bad))
			if err == nil {
				t.Fatal("accepted a malformed scenario")
			}
			if !strings.Contains(err.Error(), c.field) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q: want one line naming %q", err, c.field)
			}
		})
	}
}

func TestUnknownScenarioListsKnownOnes(t *testing.T) {
	root, _ := filepath.Abs("../../..")
	_, err := Load(root, "nope")
	if err == nil || !strings.Contains(err.Error(), "known scenarios: ") || !strings.Contains(err.Error(), "nplus1") {
		t.Fatalf("got %v", err)
	}
}

func TestSettingsForLetsTheVariantWin(t *testing.T) {
	s, err := Parse([]byte(nplus1YAML(t)))
	if err != nil {
		t.Fatal(err)
	}
	s.Load.Profiles["smoke"].Settings["catalog"] = map[string]string{"CATALOG_FETCH_MODE": "from-profile", "X": "1"}
	got := s.SettingsFor("smoke", "fixed")
	if got["catalog"]["CATALOG_FETCH_MODE"] != "batch" || got["catalog"]["X"] != "1" || got["pricing"]["PRICING_ITEM_COUNT"] != "200" {
		t.Fatalf("got %v", got)
	}
}

// db_calls_per_request is a metric a ratio may name, weighted over request
// types like calls_per_request.
func TestDBCallsPerRequestMetric(t *testing.T) {
	doc := strings.Replace(nplus1YAML(t), "metric: p50_ms", "metric: db_calls_per_request", 1)
	if _, err := Parse([]byte(doc)); err != nil {
		t.Errorf("db_calls_per_request refused: %v", err)
	}
}
