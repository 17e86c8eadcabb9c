package generate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"tracelab/internal/labtest"
	"tracelab/internal/repotest"
	"tracelab/pkg/components"
)

// The checked-in files are what the descriptions generate, so CI keeps them
// reproducible.
func TestCheckedInFilesAreUpToDate(t *testing.T) {
	root := repotest.Root(t)
	files, err := All(labtest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	if stale := files.Stale(root); len(stale) > 0 {
		t.Fatalf("out of date with services/*/service.yaml: %s; run 'make generate'", strings.Join(stale, ", "))
	}
}

// labCopy copies what the generator reads into a temporary checkout.
func labCopy(t *testing.T) string {
	t.Helper()
	src, dst := repotest.Root(t), t.TempDir()
	rels := []string{components.InfraFile, PortsFile, OtelJavaFile, VersionsFile}
	for _, name := range components.ServiceNames(src) {
		rels = append(rels, components.DescriptionFile(name))
	}
	for _, rel := range rels {
		data, err := os.ReadFile(filepath.Join(src, rel))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dst, rel), string(data))
	}
	return dst
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

// Adding a service takes one description: it appears in the local runtime's
// processes, in the Kubernetes manifests, in ports.env and, for its code, in
// its settings declarations.
func TestAThrowawayServiceAppearsInBothRuntimes(t *testing.T) {
	root := labCopy(t)
	write(t, filepath.Join(root, components.DescriptionFile("billing")), `
port: 18099
framework: quarkus
needs: [postgres, catalog]
env:
  BILLING_DB_URL: jdbc:postgresql://{postgres}/billing
  CATALOG_URL: http://{catalog}
secrets:
  BILLING_DB_PASSWORD: postgres/POSTGRES_PASSWORD
settings:
  BILLING_MODE: {values: [eager, lazy], default: eager}
`)
	files, err := All(labtest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	if err := files.Write(root); err != nil {
		t.Fatal(err)
	}

	var local struct {
		Processes map[string]struct {
			Command     string         `yaml:"command"`
			Environment []string       `yaml:"environment"`
			DependsOn   map[string]any `yaml:"depends_on"`
			Readiness   map[string]any `yaml:"readiness_probe"`
			Extra       map[string]any `yaml:",inline"`
		} `yaml:"processes"`
	}
	if err := yaml.Unmarshal(files[LocalFile], &local); err != nil {
		t.Fatal(err)
	}
	p, ok := local.Processes["billing"]
	if !ok {
		t.Fatalf("no billing process in %s", LocalFile)
	}
	env := strings.Join(p.Environment, "\n")
	for _, want := range []string{"SERVICE_JAR=target/quarkus-app/quarkus-run.jar", "JAVA_AGENT=off",
		"BILLING_DB_URL=jdbc:postgresql://127.0.0.1:15432/billing", "CATALOG_URL=http://127.0.0.1:18080",
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:14318", "OTEL_SERVICE_NAME=billing"} {
		if !strings.Contains(env, want) {
			t.Errorf("local billing environment lacks %s:\n%s", want, env)
		}
	}
	if strings.Contains(env, "BILLING_DB_PASSWORD") {
		t.Error("a Kubernetes secret leaked into the local environment")
	}
	if _, ok := p.DependsOn["postgres"]; !ok || p.DependsOn["catalog"] != nil {
		t.Errorf("billing waits for %v; want its infrastructure (postgres, otelcol), not other services", p.DependsOn)
	}
	if got := p.Readiness["http_get"].(map[string]any); got["port"] != 18099 || got["path"] != "/q/health/ready" {
		t.Errorf("readiness probe %v", got)
	}

	kube := string(files[filepath.Join(KubeDir, "billing.yaml")])
	for _, want := range []string{"name: billing", "image: tracelab/billing:dev", "containerPort: 18099", "port: 18099",
		`value: "jdbc:postgresql://postgres:15432/billing"`, `value: "http://catalog:18080"`, "name: QUARKUS_HTTP_HOST",
		"path: /q/health/ready", "key: POSTGRES_PASSWORD"} {
		if !strings.Contains(kube, want) {
			t.Errorf("k8s/base/services/billing.yaml lacks %q", want)
		}
	}
	if strings.Contains(kube, "-javaagent") {
		t.Error("a Quarkus service got the Java agent")
	}
	if !strings.Contains(string(files[filepath.Join(KubeDir, "kustomization.yaml")]), "  - billing.yaml\n") {
		t.Error("billing.yaml is not in the services' kustomization")
	}
	if !strings.Contains(string(files[PortsFile]), "\nBILLING_PORT=18099\n") {
		t.Errorf("ports.env lacks BILLING_PORT:\n%s", files[PortsFile])
	}
	declared := string(files[filepath.Join("services", "billing", JavaSettingsFile)])
	if !strings.Contains(declared, "\nBILLING_MODE.default=eager\nBILLING_MODE.values=eager,lazy\n") {
		t.Errorf("billing's settings.properties does not declare BILLING_MODE:\n%s", declared)
	}

	// Removing the description removes the manifest it generated.
	os.Remove(filepath.Join(root, components.DescriptionFile("billing")))
	files, err = All(labtest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	if stale := files.Stale(root); !strings.Contains(strings.Join(stale, " "), "billing.yaml") {
		t.Errorf("a removed service's manifest is not reported stale: %v", stale)
	}
	if err := files.RemoveOrphans(root); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, KubeDir, "billing.yaml")); err == nil {
		t.Error("billing.yaml survived its description")
	}
}

func TestPortsMustNotCollide(t *testing.T) {
	root := labCopy(t)
	write(t, filepath.Join(root, components.DescriptionFile("billing")), "port: 19090\nframework: spring\n")
	if _, err := All(labtest.Open(t, root)); err == nil || !strings.Contains(err.Error(), "port 19090 is PROMETHEUS_PORT in infra/local/ports.env too") {
		t.Fatalf("got %v", err)
	}
}

func TestAnUnknownPortKeyIsNamed(t *testing.T) {
	root := labCopy(t)
	write(t, filepath.Join(root, components.DescriptionFile("billing")), "port: 18099\nframework: spring\nneeds: [kafka]\nenv: {X: '{kafka:KAFKA_NOPE_PORT}'}\n")
	if _, err := All(labtest.Open(t, root)); err == nil || !strings.Contains(err.Error(), "no KAFKA_NOPE_PORT in infra/local/ports.env") {
		t.Fatalf("got %v", err)
	}
}
