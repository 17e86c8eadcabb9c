package components

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"tracelab/internal/repotest"
)

func TestTheLabsDescriptionsLoad(t *testing.T) {
	lab, err := Load(repotest.Root(t))
	if err != nil {
		t.Fatal(err)
	}
	if s := lab.Service("orders"); s == nil || s.Framework.Name != "quarkus" || s.Health != "/q/health/ready" || s.Jar() != "target/quarkus-app/quarkus-run.jar" {
		t.Errorf("orders: %+v", s)
	}
	if s := lab.Service("catalog"); s == nil || s.Health != "/actuator/health" || s.Jar() != "target/catalog.jar" || s.PortKey() != "CATALOG_PORT" {
		t.Errorf("catalog: %+v", s)
	}
	_, always, err := InfraNames(repotest.Root(t))
	if err != nil || strings.Join(always, ",") != "jaeger,otelcol,prometheus" {
		t.Errorf("always-on infrastructure: %v %v", always, err)
	}
}

func TestCheckSetting(t *testing.T) {
	lab, err := Load(repotest.Root(t))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ component, variable, value, want string }{
		{"catalog", "CATALOG_FETCH_MODE", "batch", ""},
		{"catalog", "CATALOG_FETCH_MODE", "parallel", "must be one of sequential, batch"},
		{"catalog", "CATALOG_FETCHMODE", "batch", "CATALOG_FETCHMODE is not a setting of catalog"},
		{"pricing", "PRICING_ITEM_COUNT", "200", ""},
		{"pricing", "PRICING_ITEM_COUNT", "100001", "from 0 to 100000"},
		{"pricing", "PRICING_ITEM_COUNT", "many", "whole number"},
		{"gateway", "LAB_CPUS", "1", ""},
		{"toxiproxy", "DB_LATENCY_MS", "14", ""},
		{"toxiproxy", "DB_LATENCY_MS", "-1", "from 0 to 10000"},
		{"toxiproxy", "LAB_CPUS", "1", "not a setting of toxiproxy"},
		{"billing", "X", "1", "neither a service"},
	}
	for _, c := range cases {
		err := lab.CheckSetting(c.component, c.variable, c.value)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %s=%s: %v", c.component, c.variable, c.value, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s %s=%s: got %v, want %q", c.component, c.variable, c.value, err, c.want)
		}
	}
}

// Each bad description is refused with one line naming its file.
func TestBadDescriptions(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"unknown key", "port: 18090\nframework: spring\nportt: 1\n", "field portt not found"},
		{"unknown framework", "port: 18090\nframework: micronaut\n", `framework "micronaut": want spring or quarkus`},
		{"no port", "framework: spring\n", "port 0"},
		{"a port taken", "port: 18080\nframework: spring\n", "port 18080 is catalog's too"},
		{"an unknown need", "port: 18090\nframework: spring\nneeds: [redis]\n", "needs redis, which is neither"},
		{"an address not needed", "port: 18090\nframework: spring\nenv: {X_URL: 'http://{pricing}'}\n", "refers to {pricing}, which needs does not list"},
		{"a setting without values", "port: 18090\nframework: spring\nsettings: {BILLING_MODE: {default: a}}\n", "give its allowed values"},
		{"a default not allowed", "port: 18090\nframework: spring\nsettings: {BILLING_MODE: {values: [a, b], default: c}}\n", "the default must be one of a, b"},
		{"a bad range", "port: 18090\nframework: spring\nsettings: {BILLING_N: {min: 5, max: 1, default: '3'}}\n", "min 5 is above max 1"},
		{"a bad secret", "port: 18090\nframework: spring\nsecrets: {BILLING_PASSWORD: postgres}\n", "is not secret/key"},
		{"a relative health path", "port: 18090\nframework: spring\nhealth: health\n", "want a path starting with /"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			copyFile(t, repotest.Root(t), root, InfraFile)
			copyFile(t, repotest.Root(t), root, DescriptionFile("catalog"))
			copyFile(t, repotest.Root(t), root, DescriptionFile("pricing"))
			write(t, filepath.Join(root, DescriptionFile("shipping")), c.yaml)
			_, err := Load(root)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "services/shipping/service.yaml: ") {
				t.Errorf("not one line naming the file: %q", err)
			}
		})
	}
}

// A shared library under services/ has no description and is no service.
func TestServiceNamesSkipsFoldersWithoutADescription(t *testing.T) {
	root := t.TempDir()
	copyFile(t, repotest.Root(t), root, DescriptionFile("catalog"))
	write(t, filepath.Join(root, "services", "lib", "pom.xml"), "<project/>\n")
	if got := ServiceNames(root); strings.Join(got, ",") != "catalog" {
		t.Errorf("got %v", got)
	}
}

func copyFile(t *testing.T, from, to, rel string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(from, rel))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(to, rel), string(data))
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
