package manifests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tracelab/internal/kubecluster"
	"tracelab/internal/repotest"
	"tracelab/pkg/lab"
)

// checkAll renders one overlay and returns every problem of the checks that
// need no cluster: the lab's own policy and the cross-checks.
func checkAll(t *testing.T, kustomize, root, overlay string) []string {
	t.Helper()
	_, objs, err := Render(kustomize, root, overlay)
	if err != nil {
		return []string{err.Error()}
	}
	co, err := lab.Open(root)
	if err != nil {
		return []string{err.Error()}
	}
	return append(Policy(objs), CrossCheck(co, overlay, objs)...)
}

func TestOverlaysPassEveryCheck(t *testing.T) {
	kustomize := kubecluster.ToolsForTest(t).Kustomize
	root := repotest.LabCopy(t)
	for _, overlay := range Overlays {
		t.Run(overlay, func(t *testing.T) {
			if problems := checkAll(t, kustomize, root, overlay); len(problems) > 0 {
				t.Errorf("%d problem(s):\n  %s", len(problems), strings.Join(problems, "\n  "))
			}
		})
	}
}

// Each case breaks one file of a copy of the lab the way a real mistake
// would, and names the problem the checks must report. What the API server
// refuses (an unknown field, a privileged container, a kind it does not
// know) is server_test.go's.
func TestBrokenManifestsFail(t *testing.T) {
	kustomize := kubecluster.ToolsForTest(t).Kustomize
	type edit struct{ file, old, new string }
	// Each case checks the kind overlay, except where named here.
	overlayFor := map[string]string{"service missing from the overlay": "eks", "a new service without an ECR repository": "eks",
		"an EKS cluster on another Kubernetes": "eks"}
	cases := []struct {
		name  string
		edits []edit
		want  string
	}{
		{"missing limits", []edit{{"k8s/base/services/pricing.yaml", "            limits: {cpu: \"1\", memory: 800Mi}\n", ""}},
			"deployment/pricing/pricing: resources.limits.cpu is missing"},
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
		{"an image recipe on an unpinned base", []edit{{"services/images/spring.Dockerfile", "ARG RUNTIME_IMAGE=eclipse-temurin:21.0.8_9-jre", "ARG RUNTIME_IMAGE=eclipse-temurin"}},
			"services/images/spring.Dockerfile: base image eclipse-temurin is not pinned"},
		{"image recipes whose builds the layer cache cannot share", []edit{{"services/images/quarkus.Dockerfile", "RUN mvn -B -q package -DskipTests", "RUN mvn -B -q package -DskipTests -T 2"}},
			"services/images/spring.Dockerfile: its build stage differs from services/images/quarkus.Dockerfile's"},
		{"a Java agent that is not the pinned one", []edit{{"services/images/spring.Dockerfile", "ARG OTEL_JAVAAGENT_VERSION=2.33.1", "ARG OTEL_JAVAAGENT_VERSION=2.20.0"}},
			"OTEL_JAVAAGENT_VERSION 2.20.0 differs from infra/local/versions.env"},
		{"a load definition that is not deployed", []edit{{"loadtests/checkout.yaml", "", "requests: [{path: /}]\n"}},
			"loadtests/checkout.yaml is not in ConfigMap loadtests"},
		{"a load image that runs as another user", []edit{{"tracelab/Dockerfile", "USER 12345:12345", "USER 65532:65532"}},
			"cronjob/load: runAsUser 12345, but tracelab/Dockerfile runs as USER 65532"},
		{"a load image on an unpinned base", []edit{{"tracelab/Dockerfile", "ARG GO_IMAGE=golang:1.26-bookworm", "ARG GO_IMAGE=golang"}},
			"base image GO_IMAGE=golang is not pinned"},
		{"a load from another image", []edit{{"k8s/base/load/load.yaml", "image: tracelab/tracelab:dev", "image: grafana/k6:1.8.1"}},
			"cronjob/load: image grafana/k6:1.8.1; want tracelab/tracelab"},
		{"a dashboard that is not provisioned", []edit{{"dashboards/latency.json", "", "{}\n"}},
			"dashboards/latency.json is not in ConfigMap grafana-dashboards"},
		{"a kind port mapping to another port", []edit{{"k8s/kind/cluster.yaml", "hostPort: 18080", "hostPort: 8080"}},
			"service/catalog: kind maps it to host port 8080"},
		{"a node port left to the API server's draw", []edit{{"k8s/overlays/kind/nodeports.yaml", "      nodePort: 30317\n", ""}},
			"service/jaeger: port 24317 has no nodePort"},
		{"a kind node of another Kubernetes", []edit{{"k8s/kind/cluster.yaml", "kindest/node:v1.35.", "kindest/node:v1.33."}},
			"is not Kubernetes 1.35 (K8S_VERSION)"},
		{"an EKS cluster on another Kubernetes", []edit{{"infra/terraform/variables.tf", `default     = "1.35"`, `default     = "1.33"`}},
			"kubernetes_version defaults to 1.33, not K8S_VERSION 1.35"},
		{"ingest straight to the broker, not through toxiproxy", []edit{{"k8s/base/services/ingest.yaml", `value: "toxiproxy:19095"`, `value: "kafka:19092"`}},
			"deployment/ingest: KAFKA_BOOTSTRAP_SERVERS must be toxiproxy:19095"},
		{"a proxy port that disagrees with ports.env", []edit{{"infra/local/ports.env", "KAFKA_PROXY_PORT=19095", "KAFKA_PROXY_PORT=19096"}},
			"service/toxiproxy must expose 19096 (KAFKA_PROXY_PORT)"},
		{"a hop to a host that is not the broker", []edit{{"k8s/base/data/toxiproxy.yaml", "value: kafka\n", "value: kafka-broker\n"}},
			`KAFKA_HOST="kafka-broker" must name a Service that exposes 19094`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := repotest.LabCopy(t)
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
			problems := checkAll(t, kustomize, root, overlay)
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
      containers:
        - name: app
          image: example/app:1.0
          resources: {requests: {cpu: 10m, memory: 1Mi}, limits: {cpu: 10m, memory: 1Mi}}
          securityContext: {readOnlyRootFilesystem: true}
          env: [{name: APP_PASSWORD, valueFrom: {secretKeyRef: {name: app, key: password}}}]
`
	objs, err := Decode([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if p := Policy(objs); len(p) > 0 {
		t.Fatalf("a compliant pod fails: %v", p)
	}
	bad := strings.NewReplacer(
		"example/app:1.0", "example/app",
		"readOnlyRootFilesystem: true", "readOnlyRootFilesystem: false",
		"limits: {cpu: 10m, memory: 1Mi}", "limits: {}",
		"valueFrom: {secretKeyRef: {name: app, key: password}}", "value: hunter2",
	).Replace(good)
	objs, _ = Decode([]byte(bad))
	got := strings.Join(Policy(objs), "\n")
	for _, want := range []string{"not pinned", "readOnlyRootFilesystem", "resources.limits.cpu", "resources.limits.memory", "APP_PASSWORD is a literal"} {
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
