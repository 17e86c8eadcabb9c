package manifests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tracelab/internal/kubecluster"
	"tracelab/internal/labtest"
	"tracelab/internal/repotest"
	"tracelab/pkg/lab"
)

// The telemetry stack's configurations, checked by the real programs: the
// collector and Jaeger of the tool cache (make tools) and promtool (make
// tools-k8s); Tempo's by CheckTempoConfig. `make test-k8s-configs` sets
// TRACELAB_K8S_CONFIG_CHECKS=1; missing programs then fail.
func configTools(t *testing.T) (string, ConfigTools) {
	t.Helper()
	if os.Getenv("TRACELAB_K8S_CONFIG_CHECKS") != "1" {
		t.Skip("make test-k8s-configs runs the configuration checks (with TRACELAB_K8S_CONFIG_CHECKS=1)")
	}
	t.Setenv("TRACELAB_K8S_CHECKS", "1")
	kustomize := kubecluster.ToolsForTest(t).Kustomize
	main := labtest.Tools(t)
	k8s, _ := lab.ReadEnvFile(filepath.Join(repotest.Root(t), lab.StateDir, "tools-k8s.env"))
	ct := ConfigTools{Otelcol: main["OTELCOL_BIN"], Jaeger: main["JAEGER_BIN"], Promtool: k8s["PROMTOOL_BIN"]}
	for name, path := range map[string]string{
		"OTELCOL_BIN (.state/tools.env; make tools)":          ct.Otelcol,
		"JAEGER_BIN (.state/tools.env; make tools)":           ct.Jaeger,
		"PROMTOOL_BIN (.state/tools-k8s.env; make tools-k8s)": ct.Promtool,
	} {
		if _, err := os.Stat(path); path == "" || err != nil {
			t.Fatalf("%s is missing", name)
		}
	}
	return kustomize, ct
}

func TestConfigsPassTheirPrograms(t *testing.T) {
	kustomize, ct := configTools(t)
	root := repotest.LabCopy(t)
	for _, overlay := range Overlays {
		_, objs, err := Render(kustomize, root, overlay)
		if err != nil {
			t.Fatal(err)
		}
		if problems := CheckConfigs(ct, objs, t.TempDir()); len(problems) > 0 {
			t.Errorf("%s:\n%s", overlay, strings.Join(problems, "\n"))
		}
	}
}

// Each program rejects a configuration broken the way a hand edit breaks
// it, and the check names the workload.
func TestBrokenConfigsFail(t *testing.T) {
	kustomize, ct := configTools(t)
	cases := []struct {
		name, file, old, new, want string
	}{
		{"collector: a misspelt key in the Kubernetes part", "k8s/base/telemetry/config/otelcol-k8s.yaml",
			"queue_size: 5000", "queue_sise: 5000", "deployment/otelcol: otelcol-tracelab validate"},
		{"collector: a pipeline exporting to an undefined exporter", "k8s/base/telemetry/config/otelcol-k8s.yaml",
			"[otlp/jaeger, otlp/tempo, spanmetrics]", "[otlp/jaeger, otlp/tmepo, spanmetrics]", "deployment/otelcol: otelcol-tracelab validate"},
		{"Jaeger: a misspelt key", "infra/local/jaeger.yaml",
			"max_traces: 50000", "max_trace: 50000", "deployment/jaeger: jaeger validate"},
		{"Prometheus: a duration that is not one", "k8s/base/telemetry/config/prometheus.yml",
			"scrape_interval: 5s", "scrape_interval: 5 seconds", "deployment/prometheus: promtool check config"},
		{"Tempo: a misspelt key", "k8s/base/telemetry/config/tempo.yaml",
			"max_block_duration: 5m", "max_block_durration: 5m", "deployment/tempo: the lab's Tempo"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := repotest.LabCopy(t)
			path := filepath.Join(root, tc.file)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), tc.old) {
				t.Fatalf("%s no longer holds %q; update this test", tc.file, tc.old)
			}
			os.WriteFile(path, []byte(strings.Replace(string(data), tc.old, tc.new, 1)), 0o644)
			_, objs, err := Render(kustomize, root, "kind")
			if err != nil {
				t.Fatal(err)
			}
			problems := CheckConfigs(ct, objs, t.TempDir())
			if len(problems) != 1 || !strings.HasPrefix(problems[0], tc.want) {
				t.Fatalf("want one problem starting %q, got:\n%s", tc.want, strings.Join(problems, "\n"))
			}
			t.Logf("%s", problems[0])
		})
	}
}
