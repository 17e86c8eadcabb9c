package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tracelab/internal/labtest"
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
	lab := labtest.Open(t, root)
	names := List(lab)
	if len(names) == 0 {
		t.Fatal("no scenarios found")
	}
	for _, n := range names {
		if _, err := Load(lab, n); err != nil {
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
		{"capacity of a missing variant", "warmup: 3", "warmup: 3\n      capacity: {variants: [fast], env: {VUS: \"4\", DURATION: 5s}}", "field load.profiles.smoke.capacity.variants"},
		{"capacity without a probe", "warmup: 3", "warmup: 3\n      capacity: {variants: [baseline], env: {VUS: \"4\"}}", "field load.profiles.smoke.capacity.env"},
		{"rate from a variant not probed", "warmup: 3", "warmup: 3\n      capacity: {variants: [baseline], env: {VUS: \"4\", DURATION: 5s}, rate_from: fixed, rate_factor: 1.2}", "field load.profiles.smoke.capacity.rate_from"},
		{"rate factor without its variant", "warmup: 3", "warmup: 3\n      capacity: {variants: [baseline], env: {VUS: \"4\", DURATION: 5s}, rate_factor: 1.2}", "rate_from"},
		{"settle not in seconds", "warmup: 3", "warmup: 3\n      capacity: {variants: [baseline], env: {VUS: \"4\", DURATION: 5s}, settle: 1m}", "field load.profiles.smoke.capacity.settle"},
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

// A variant may set only what its service's description declares, to a
// value it allows (services/*/service.yaml, infra/components.yaml).
func TestSettingsMustBeDeclaredByTheirComponent(t *testing.T) {
	cases := []struct{ name, from, to, want string }{
		{"a setting no description declares", "catalog: {CATALOG_FETCH_MODE: batch}", "catalog: {CATALOG_FETCHMODE: batch}",
			"field variants.fixed.settings.catalog.CATALOG_FETCHMODE: CATALOG_FETCHMODE is not a setting of catalog"},
		{"a value the description does not allow", "catalog: {CATALOG_FETCH_MODE: batch}", "catalog: {CATALOG_FETCH_MODE: parallel}",
			"must be one of sequential, batch"},
		{"a number out of range", `PRICING_ITEM_COUNT: "200"`, `PRICING_ITEM_COUNT: "200000"`, "from 0 to 100000"},
		// Not a setting but a load parameter: the load definition names them.
		{"a load parameter the definition does not take", `ITERATIONS: "5"`, `ITERATONS: "5"`,
			"field load.profiles.smoke.env: loadtests/nplus1.yaml: unknown parameter ITERATONS"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			src, _ := filepath.Abs("../../..")
			for _, rel := range []string{"infra/components.yaml", "services/catalog/service.yaml", "services/pricing/service.yaml", "loadtests/nplus1.yaml", "infra/local/ports.env"} {
				data, err := os.ReadFile(filepath.Join(src, rel))
				if err != nil {
					t.Fatal(err)
				}
				os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755)
				os.WriteFile(filepath.Join(root, rel), data, 0o644)
			}
			good := nplus1YAML(t)
			bad := strings.Replace(good, c.from, c.to, 1)
			if bad == good {
				t.Fatalf("test case does not change the document: %q", c.from)
			}
			os.MkdirAll(filepath.Join(root, "scenarios", "nplus1"), 0o755)
			os.WriteFile(filepath.Join(root, "scenarios", "nplus1", "scenario.yaml"), []byte(bad), 0o644)
			if _, err := Load(labtest.Open(t, root), "nplus1"); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("got %v, want one line with %q", err, c.want)
			}
		})
	}
}

func TestUnknownScenarioListsKnownOnes(t *testing.T) {
	root, _ := filepath.Abs("../../..")
	_, err := Load(labtest.Open(t, root), "nope")
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

// A runtime's or a profile's own minimum replaces min for it only, the
// lowest where both apply.
func TestJudgedOn(t *testing.T) {
	s := &Scenario{Expectations: Expectations{Ratios: []Ratio{{Metric: "p50_ms", Min: 25, MinOn: map[string]float64{"kind": 15, "smoke": 20}}, {Metric: "x", Min: 3}}}}
	for _, c := range []struct {
		runtime, profile string
		want             float64
	}{{"kind", "full", 15}, {"kind", "smoke", 15}, {"local", "smoke", 20}, {"local", "full", 25}} {
		if got := s.JudgedOn(c.runtime, c.profile).Expectations.Ratios; got[0].Min != c.want || got[1].Min != 3 {
			t.Errorf("%s, %s: %+v; want min %v", c.runtime, c.profile, got, c.want)
		}
	}
	if s.Expectations.Ratios[0].Min != 25 {
		t.Error("JudgedOn changed the scenario it was given")
	}
}

// The figures of the request join (the root span's time, and the time
// outside any span) are metrics a ratio may name, as the README lists them.
func TestJoinedMetricsMayBeJudged(t *testing.T) {
	for _, m := range []string{"server_p50_ms", "server_p95_ms", "server_mean_ms", "outside_p50_ms", "outside_p95_ms", "outside_mean_ms"} {
		doc := strings.Replace(nplus1YAML(t), "metric: p50_ms", "metric: "+m, 1)
		if _, err := Parse([]byte(doc)); err != nil {
			t.Errorf("%s refused: %v", m, err)
		}
	}
}

// A profile is resolved once, by name; an unknown one is refused with the
// scenario's profiles, before anything would start.
func TestProfileNamed(t *testing.T) {
	s := &Scenario{Name: "x", Load: LoadSpec{Profiles: map[string]Profile{"smoke": {Warmup: 3}, "full": {}}}}
	p, err := s.ProfileNamed("smoke")
	if err != nil || p.Name != "smoke" || p.Warmup != 3 {
		t.Errorf("ProfileNamed(smoke) = %+v, %v", p, err)
	}
	if _, err := s.ProfileNamed("huge"); err == nil || !strings.Contains(err.Error(), "profiles: full, smoke") {
		t.Errorf("ProfileNamed(huge): %v, want the profiles listed", err)
	}
}
