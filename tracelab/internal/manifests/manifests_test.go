package manifests

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"tracelab/internal/repotest"

	"tracelab/pkg/runtime"
)

// The checks run the pinned kustomize and kubernetes-validate, which
// `make tools-k8s` installs. They run in `make test-k8s`, which sets
// TRACELAB_K8S_CHECKS=1 (missing tools then fail); `go test ./...` (and so
// make test-go) skips them, so they run once per make test.
func checkTools(t *testing.T) Tools {
	t.Helper()
	if os.Getenv("TRACELAB_K8S_CHECKS") != "1" {
		t.Skip("make test-k8s runs the manifest checks (with TRACELAB_K8S_CHECKS=1)")
	}
	env, err := runtime.ReadEnvFile(filepath.Join(repotest.Root(t), ".state", "tools-k8s.env"))
	if err != nil {
		t.Fatalf("the Kubernetes check tools are not installed (.state/tools-k8s.env): run 'make tools-k8s'")
	}
	return Tools{Kustomize: env["KUSTOMIZE_BIN"], KubernetesValidate: env["KUBERNETES_VALIDATE_BIN"], K8sVersion: env["K8S_VERSION"]}
}

// labCopy copies what the manifests and checks read into a temporary folder,
// with test-only secrets, so a test can break a file without touching the
// checkout.
func labCopy(t *testing.T) string {
	t.Helper()
	src, dst := repotest.Root(t), t.TempDir()
	for _, dir := range []string{"k8s", "infra", "services", "scenarios", "dashboards", "loadtests"} {
		err := filepath.WalkDir(filepath.Join(src, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, path)
			if d.IsDir() {
				if d.Name() == "target" || d.Name() == ".terraform" || rel == filepath.Join("k8s", "base", "secrets") {
					return filepath.SkipDir
				}
				return os.MkdirAll(filepath.Join(dst, rel), 0o755)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	secrets := filepath.Join(dst, "k8s", "base", "secrets")
	os.MkdirAll(secrets, 0o700)
	os.WriteFile(filepath.Join(secrets, "postgres.env"), []byte("POSTGRES_PASSWORD=test-only\n"), 0o600)
	os.WriteFile(filepath.Join(secrets, "grafana.env"), []byte("GF_SECURITY_ADMIN_PASSWORD=test-only\n"), 0o600)
	return dst
}

// checkAll runs the checks on one overlay and returns all problems. The
// schema validation (a Python process, the slow part) runs only when asked.
func checkAll(t *testing.T, tools Tools, root, overlay string, validate bool) []string {
	t.Helper()
	rendered, objs, err := Render(tools, root, overlay)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	if validate {
		if err := Validate(tools, rendered); err != nil {
			problems = append(problems, err.Error())
		}
	}
	problems = append(problems, Policy(objs)...)
	return append(problems, CrossCheck(root, overlay, objs)...)
}

func TestOverlaysPassEveryCheck(t *testing.T) {
	tools := checkTools(t)
	root := labCopy(t)
	for _, overlay := range Overlays {
		t.Run(overlay, func(t *testing.T) {
			if problems := checkAll(t, tools, root, overlay, true); len(problems) > 0 {
				t.Errorf("%d problem(s):\n  %s", len(problems), strings.Join(problems, "\n  "))
			}
		})
	}
}

// Each case breaks one file of a copy of the lab the way a real mistake
// would, and names the problem the checks must report.
func TestBrokenManifestsFail(t *testing.T) {
	tools := checkTools(t)
	type edit struct{ file, old, new string }
	// Each case checks the kind overlay, except where named here.
	overlayFor := map[string]string{"service missing from the overlay": "eks", "a new service without an ECR repository": "eks"}
	cases := []struct {
		name  string
		edits []edit
		want  string
	}{
		{"unknown field", []edit{{"k8s/base/services/catalog.yaml", "  replicas: 1\n", "  replicas: 1\n  replica: 1\n"}},
			"replica"},
		{"a custom resource without a schema", []edit{
			{"k8s/base/instrumentation.yaml", "", "apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\nmetadata:\n  name: java\nspec: {}\n"},
			{"k8s/base/kustomization.yaml", "  - namespace.yaml\n", "  - namespace.yaml\n  - instrumentation.yaml\n"}},
			"Couldn't find schema for kind Instrumentation"},
		{"missing limits", []edit{{"k8s/base/services/pricing.yaml", "            limits: {cpu: \"1\", memory: 800Mi}\n", ""}},
			"deployment/pricing/pricing: resources.limits.cpu is missing"},
		{"privileged container", []edit{{"k8s/base/services/gateway.yaml", "            allowPrivilegeEscalation: false\n", "            allowPrivilegeEscalation: false\n            privileged: true\n"}},
			"deployment/gateway/gateway: privileged containers are not allowed"},
		// On kind, kustomize itself already fails: the NodePort patch has no target.
		{"service missing from the overlay", []edit{{"k8s/base/services/kustomization.yaml", "  - customers.yaml\n", ""}},
			`service customers: no Deployment "customers"`},
		{"a new service whose manifests were not generated", []edit{{"services/billing/service.yaml", "", "port: 18099\nframework: spring\n"}},
			`service billing: no Deployment "billing" (run make generate`},
		{"a new service without an ECR repository", []edit{{"services/billing/service.yaml", "", "port: 18099\nframework: spring\n"}},
			"service billing: no ECR repository"},
		{"a password as a literal", []edit{{"k8s/base/services/orders.yaml",
			"            - name: ORDERS_DB_PASSWORD\n              valueFrom:\n                secretKeyRef:\n                  name: postgres\n                  key: POSTGRES_PASSWORD\n",
			"            - name: ORDERS_DB_PASSWORD\n              value: hunter2\n"}},
			"deployment/orders/orders: ORDERS_DB_PASSWORD is a literal value"},
		{"a committed Secret", []edit{{"k8s/base/secret.yaml", "", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: x\n"}},
			"k8s/base/secret.yaml holds a Secret"},
		{"a collector pipeline that drifts from the local one", []edit{{"k8s/base/telemetry/config/otelcol-k8s.yaml",
			"      exporters: [otlp/jaeger, otlp/tempo, spanmetrics]\n", "      processors: [batch]\n      exporters: [otlp/jaeger, otlp/tempo, spanmetrics]\n"}},
			"otelcol-k8s.yaml changes more than the Tempo exporter"},
		{"infrastructure listed but not deployed", []edit{{"infra/components.yaml", "kafka: {}\n", "kafka: {}\nredis: {}\n"}},
			"infrastructure redis (infra/components.yaml): no process in infra/local/process-compose.yaml"},
		{"an infrastructure setting its workload lacks", []edit{{"infra/components.yaml", "    KAFKA_LATENCY_MS:\n", "    JITTER_MS: {min: 0, max: 10, default: \"0\"}\n    KAFKA_LATENCY_MS:\n"}},
			"deployment/toxiproxy: no variable JITTER_MS"},
		{"an image recipe on an unpinned base", []edit{{"services/images/spring.Dockerfile", "FROM eclipse-temurin:21.0.8_9-jre", "FROM eclipse-temurin"}},
			"services/images/spring.Dockerfile: base image eclipse-temurin is not pinned"},
		{"a Java agent that is not the pinned one", []edit{{"services/images/spring.Dockerfile", "ARG OTEL_JAVAAGENT_VERSION=2.33.1", "ARG OTEL_JAVAAGENT_VERSION=2.20.0"}},
			"OTEL_JAVAAGENT_VERSION 2.20.0 differs from infra/local/versions.env"},
		{"a dashboard that is not provisioned", []edit{{"dashboards/latency.json", "", "{}\n"}},
			"dashboards/latency.json is not in ConfigMap grafana-dashboards"},
		{"a kind port mapping to another port", []edit{{"k8s/kind/cluster.yaml", "hostPort: 18080", "hostPort: 8080"}},
			"service/catalog: kind maps it to host port 8080"},
		{"ingest straight to the broker, not through toxiproxy", []edit{{"k8s/base/services/ingest.yaml", `value: "toxiproxy:19095"`, `value: "kafka:19092"`}},
			"deployment/ingest: KAFKA_BOOTSTRAP_SERVERS must be toxiproxy:19095"},
		{"a proxy port that disagrees with ports.env", []edit{{"infra/local/ports.env", "KAFKA_PROXY_PORT=19095", "KAFKA_PROXY_PORT=19096"}},
			"service/toxiproxy must expose 19096 (KAFKA_PROXY_PORT)"},
		{"a hop to a host that is not the broker", []edit{{"k8s/base/data/toxiproxy.yaml", "value: kafka\n", "value: kafka-broker\n"}},
			`KAFKA_HOST="kafka-broker" must name a Service that exposes 19094`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := labCopy(t)
			for _, e := range tc.edits {
				path := filepath.Join(root, e.file)
				if e.old == "" { // a new file
					os.MkdirAll(filepath.Dir(path), 0o755)
					if err := os.WriteFile(path, []byte(e.new), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				data, err := os.ReadFile(path)
				if err != nil || !strings.Contains(string(data), e.old) {
					t.Fatalf("%s no longer contains %q: update this test", e.file, e.old)
				}
				os.WriteFile(path, []byte(strings.Replace(string(data), e.old, e.new, 1)), 0o644)
			}
			overlay := overlayFor[tc.name]
			if overlay == "" {
				overlay = "kind"
			}
			problems := checkAll(t, tools, root, overlay, tc.name == "unknown field" || tc.name == "a custom resource without a schema")
			for _, p := range problems {
				if strings.Contains(p, tc.want) {
					t.Logf("reported: %s", p)
					return
				}
			}
			t.Errorf("no problem mentions %q; got:\n  %s", tc.want, strings.Join(problems, "\n  "))
		})
	}
}

// The policy check on its own, without the tools: a compliant pod passes,
// and each breach is named.
func TestPolicy(t *testing.T) {
	good := `
apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  template:
    spec:
      enableServiceLinks: false
      securityContext: {runAsNonRoot: true, runAsUser: 10001, seccompProfile: {type: RuntimeDefault}}
      containers:
        - name: app
          image: example/app:1.0
          resources: {requests: {cpu: 10m, memory: 1Mi}, limits: {cpu: 10m, memory: 1Mi}}
          securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
`
	objs, err := Decode([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if p := Policy(objs); len(p) > 0 {
		t.Fatalf("a compliant pod fails: %v", p)
	}
	bad := strings.NewReplacer(
		"runAsNonRoot: true", "runAsNonRoot: false",
		"type: RuntimeDefault", "type: Unconfined",
		"example/app:1.0", "example/app",
		"drop: [ALL]", "add: [NET_ADMIN]",
		"readOnlyRootFilesystem: true", "readOnlyRootFilesystem: false",
		"limits: {cpu: 10m, memory: 1Mi}", "limits: {}",
	).Replace(good)
	objs, _ = Decode([]byte(bad))
	got := strings.Join(Policy(objs), "\n")
	for _, want := range []string{"runAsNonRoot", "seccompProfile", "not pinned", "capabilities.drop", "capabilities.add", "readOnlyRootFilesystem", "resources.limits.cpu", "resources.limits.memory"} {
		if !strings.Contains(got, want) {
			t.Errorf("no breach mentions %s; got:\n%s", want, got)
		}
	}
}

// A pod that leaves service links on (the default) or turns them on fails,
// wherever its pod template is (a CronJob's too).
func TestPolicyRequiresNoServiceLinks(t *testing.T) {
	pod := `
      securityContext: {runAsNonRoot: true, runAsUser: 10001, seccompProfile: {type: RuntimeDefault}}
      containers:
        - name: app
          image: example/app:1.0
          resources: {requests: {cpu: 10m, memory: 1Mi}, limits: {cpu: 10m, memory: 1Mi}}
          securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
`
	for _, tc := range []struct{ name, yaml string }{
		{"deployment/app", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app}\nspec:\n  template:\n    spec:" + pod},
		{"deployment/app", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app}\nspec:\n  template:\n    spec:\n      enableServiceLinks: true" + pod},
		{"cronjob/app", "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: app}\nspec:\n  jobTemplate:\n    spec:\n      template:\n        spec:" + strings.ReplaceAll(pod, "\n      ", "\n          ")},
	} {
		objs, err := Decode([]byte(tc.yaml))
		if err != nil {
			t.Fatal(err)
		}
		want := tc.name + ": enableServiceLinks must be false"
		if got := Policy(objs); len(got) != 1 || got[0] != want {
			t.Errorf("got %q, want only %q", got, want)
		}
	}
}
