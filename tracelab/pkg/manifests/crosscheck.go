package manifests

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"tracelab/pkg/runtime"
	"tracelab/pkg/scenario"
)

// Services are the lab's services: every folder of services/ with a pom.xml,
// the same list the Makefile builds and the local runtime starts.
func Services(root string) []string {
	poms, _ := filepath.Glob(filepath.Join(root, "services", "*", "pom.xml"))
	var out []string
	for _, p := range poms {
		out = append(out, filepath.Base(filepath.Dir(p)))
	}
	return out
}

// CrossCheck returns one line per disagreement between an overlay's rendered
// objects and the rest of the lab: the services and their images, ports and
// settings; the scenarios' services and variant settings; the local runtime's
// OpenTelemetry settings, collector pipeline, Jaeger and Prometheus
// configuration; the dashboards and load scripts; and the overlay's access
// (kind's port mappings, EKS's storage and port-forward).
func CrossCheck(root, overlay string, objs []Object) []string {
	c := &checker{root: root, overlay: overlay, objs: objs}
	var err error
	if c.ports, err = runtime.ReadEnvFile(filepath.Join(root, "infra", "local", "ports.env")); err != nil {
		return []string{err.Error()}
	}
	if c.versions, err = runtime.ReadEnvFile(filepath.Join(root, "infra", "local", "versions.env")); err != nil {
		return []string{err.Error()}
	}
	c.localJava = readLocalJavaEnv(filepath.Join(root, "infra", "local", "run-java-service.sh"))
	for _, svc := range Services(root) {
		c.service(svc)
	}
	c.otelJava()
	c.networkHops()
	c.scenarios()
	c.collector()
	c.sameFile("jaeger-config", "jaeger.yaml", "infra/local/jaeger.yaml")
	c.prometheus()
	c.generatedFiles("grafana-dashboards", "dashboards", "*.json")
	c.generatedFiles("loadtests", "loadtests", "*.js")
	c.generatedFiles("loadtests-lib", "loadtests/lib", "*.js")
	c.imageVersions()
	c.noCommittedSecrets()
	switch overlay {
	case "kind":
		c.kindAccess()
	case "eks":
		c.eksAccess()
		c.ecrRepositories()
	}
	return c.problems
}

type checker struct {
	root, overlay   string
	objs            []Object
	ports, versions map[string]string
	localJava       map[string]string // OTEL_* exported by run-java-service.sh
	problems        []string
}

func (c *checker) bad(format string, a ...any) {
	c.problems = append(c.problems, fmt.Sprintf("%s: ", c.overlay)+fmt.Sprintf(format, a...))
}

func (c *checker) readFile(rel string) []byte {
	data, err := os.ReadFile(filepath.Join(c.root, rel))
	if err != nil {
		c.bad("%v", err)
	}
	return data
}

func portKey(name string) string {
	return strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "_PORT"
}

// service checks one service end to end: Dockerfile, Deployment, Service.
func (c *checker) service(svc string) {
	port := c.ports[portKey(svc)]
	if port == "" {
		c.bad("service %s: no %s in infra/local/ports.env", svc, portKey(svc))
		return
	}
	c.dockerfile(svc, port)
	dep := Find(c.objs, "Deployment", svc)
	if dep == nil {
		c.bad("service %s: no Deployment %q (k8s/README.md, \"Adding a service\")", svc, svc)
	} else {
		c.deployment(svc, port, dep)
	}
	s := Find(c.objs, "Service", svc)
	if s == nil {
		c.bad("service %s: no Service %q (k8s/README.md, \"Adding a service\")", svc, svc)
		return
	}
	ok := false
	for _, p := range list(get(s, "spec", "ports")) {
		m, _ := p.(map[string]any)
		if str(m["port"]) == port && str(m["targetPort"]) == "http" {
			ok = true
		}
	}
	if !ok {
		c.bad("service %s: Service %s must expose port %s (%s) with targetPort http", svc, svc, port, portKey(svc))
	}
}

var (
	dockerFrom   = regexp.MustCompile(`(?m)^FROM\s+(\S+)`)
	dockerUser   = regexp.MustCompile(`(?m)^USER\s+(\d+)`)
	dockerExpose = regexp.MustCompile(`(?m)^EXPOSE\s+(\d+)`)
	dockerAgent  = regexp.MustCompile(`(?m)^ARG OTEL_JAVAAGENT_VERSION=(\S+)`)
)

func (c *checker) dockerfile(svc, port string) {
	rel := filepath.Join("services", svc, "Dockerfile")
	data, err := os.ReadFile(filepath.Join(c.root, rel))
	if err != nil {
		c.bad("service %s: no image: %s is missing (k8s/README.md, \"Adding a service\")", svc, rel)
		return
	}
	s := string(data)
	froms := dockerFrom.FindAllStringSubmatch(s, -1)
	if len(froms) < 2 {
		c.bad("%s: want a multi-stage build (a build stage and a runtime stage)", rel)
	}
	for _, f := range froms {
		if !pinned(f[1]) {
			c.bad("%s: base image %s is not pinned to a version tag", rel, f[1])
		}
	}
	users := dockerUser.FindAllStringSubmatch(s, -1)
	if len(users) == 0 || users[len(users)-1][1] == "0" {
		c.bad("%s: the runtime stage must run as a numeric non-root USER", rel)
	}
	if m := dockerExpose.FindStringSubmatch(s); m == nil || m[1] != port {
		c.bad("%s: must EXPOSE %s (%s)", rel, port, portKey(svc))
	}
	if !strings.Contains(s, "-pl "+svc+" ") {
		c.bad("%s: must build its own module (mvn -pl %s)", rel, svc)
	}
	if m := dockerAgent.FindStringSubmatch(s); m != nil && m[1] != c.versions["OTEL_JAVAAGENT_VERSION"] {
		c.bad("%s: OTEL_JAVAAGENT_VERSION %s differs from infra/local/versions.env (%s)", rel, m[1], c.versions["OTEL_JAVAAGENT_VERSION"])
	}
}

func (c *checker) deployment(svc, port string, dep Object) {
	spec := dep.PodSpec()
	var ctr map[string]any
	for _, ct := range list(spec["containers"]) {
		if m, _ := ct.(map[string]any); str(m["name"]) == svc {
			ctr = m
		}
	}
	if ctr == nil {
		c.bad("deployment/%s: no container named %s", svc, svc)
		return
	}
	image := str(ctr["image"])
	wantRepo := "tracelab/" + svc
	if c.overlay == "eks" {
		wantRepo = "ECR_REGISTRY/tracelab/" + svc
	}
	if repo, _, _ := strings.Cut(image, ":"); repo != wantRepo {
		c.bad("deployment/%s: image %s, want %s:<tag> (the image make images builds)", svc, image, wantRepo)
	}
	okPort := false
	for _, p := range list(ctr["ports"]) {
		m, _ := p.(map[string]any)
		if str(m["name"]) == "http" && str(m["containerPort"]) == port {
			okPort = true
		}
	}
	if !okPort {
		c.bad("deployment/%s: container port http must be %s (%s in infra/local/ports.env)", svc, port, portKey(svc))
	}
	if ctr["readinessProbe"] == nil {
		c.bad("deployment/%s: no readinessProbe (a rollout would not wait for the service)", svc)
	}
	var envFrom []string
	for _, e := range list(ctr["envFrom"]) {
		envFrom = append(envFrom, str(get(e, "configMapRef", "name")))
	}
	for _, cm := range []string{"lab-ports", "otel-java"} {
		if o := FindGenerated(c.objs, "ConfigMap", cm); o == nil || !slices.Contains(envFrom, o.Name()) {
			c.bad("deployment/%s: envFrom must include ConfigMap %s", svc, cm)
		}
	}
	env := Env(ctr)
	if env["OTEL_SERVICE_NAME"] != svc {
		c.bad("deployment/%s: OTEL_SERVICE_NAME is %q, want %q", svc, env["OTEL_SERVICE_NAME"], svc)
	}
	if got, want := attrKeys(env["OTEL_RESOURCE_ATTRIBUTES"]), attrKeys(c.localJava["OTEL_RESOURCE_ATTRIBUTES"]); !reflect.DeepEqual(got, want) {
		c.bad("deployment/%s: OTEL_RESOURCE_ATTRIBUTES sets %v, the local runtime %v (run-java-service.sh)", svc, got, want)
	}
	// services/<svc>/lab.env is what the local runtime fixes for the service
	// whatever the variant; the Deployment must fix the same.
	labEnv, _ := runtime.ReadEnvFile(filepath.Join(c.root, "services", svc, "lab.env"))
	agentWanted := labEnv["JAVA_AGENT"] != "off"
	if hasAgent := strings.Contains(env["JAVA_TOOL_OPTIONS"], "-javaagent:"); hasAgent != agentWanted {
		c.bad("deployment/%s: the Java agent is attached=%v in JAVA_TOOL_OPTIONS, but services/%s/lab.env says JAVA_AGENT=%v", svc, hasAgent, svc, map[bool]string{true: "on", false: "off"}[agentWanted])
	}
	for _, k := range slices.Sorted(maps.Keys(labEnv)) {
		switch k {
		case "SERVICE_JAR", "JAVA_AGENT", "JAVA_OPTS":
			continue
		}
		if v, ok := env[k]; !ok || v != labEnv[k] {
			c.bad("deployment/%s: %s=%s from services/%s/lab.env is missing or differs (%q)", svc, k, labEnv[k], svc, v)
		}
	}
}

// readLocalJavaEnv reads the `export OTEL_X=value` lines of the local launcher.
func readLocalJavaEnv(path string) map[string]string {
	out := map[string]string{}
	data, _ := os.ReadFile(path)
	re := regexp.MustCompile(`(?m)^export (OTEL_[A-Z_]+)="?([^"\n]*)"?$`)
	for _, m := range re.FindAllStringSubmatch(string(data), -1) {
		out[m[1]] = m[2]
	}
	return out
}

func attrKeys(attrs string) []string {
	var keys []string
	for _, kv := range strings.Split(attrs, ",") {
		if k, _, ok := strings.Cut(kv, "="); ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// otelJava compares the ConfigMap every Java service reads with the local
// launcher's exports: same variables, same values, except the endpoint.
func (c *checker) otelJava() {
	cm := FindGenerated(c.objs, "ConfigMap", "otel-java")
	if cm == nil {
		c.bad("no ConfigMap otel-java")
		return
	}
	data, _ := cm["data"].(map[string]any)
	if len(c.localJava) == 0 {
		c.bad("no OTEL_* exports found in infra/local/run-java-service.sh")
	}
	for k, v := range c.localJava {
		if k == "OTEL_SERVICE_NAME" || k == "OTEL_RESOURCE_ATTRIBUTES" {
			continue // per service, in each Deployment
		}
		got, ok := data[k]
		switch {
		case !ok:
			c.bad("ConfigMap otel-java lacks %s, which the local runtime sets (run-java-service.sh)", k)
		case k == "OTEL_EXPORTER_OTLP_ENDPOINT":
			if want := "http://otelcol:" + c.ports["OTELCOL_OTLP_HTTP_PORT"]; str(got) != want {
				c.bad("ConfigMap otel-java: OTEL_EXPORTER_OTLP_ENDPOINT is %v, want %s", got, want)
			}
		case str(got) != v:
			c.bad("ConfigMap otel-java: %s=%v, the local runtime sets %s", k, got, v)
		}
	}
	for k := range data {
		if _, ok := c.localJava[k]; !ok {
			c.bad("ConfigMap otel-java sets %s, which the local runtime does not (run-java-service.sh)", k)
		}
	}
}

// networkHops checks toxiproxy's proxies against infra/local/ports.env, as
// the local runtime wires them (run-toxiproxy.sh, kafka.properties): each
// proxy's port is a Service port of toxiproxy, configure-toxiproxy.sh
// forwards it to the right upstream, Kafka's PROXIED listener advertises the
// proxy, and ingest bootstraps through it.
func (c *checker) networkHops() {
	hops := []struct{ name, listenKey, upstream, upstreamKey string }{
		{"postgres", "POSTGRES_PROXY_PORT", "postgres", "POSTGRES_PORT"},
		{"kafka", "KAFKA_PROXY_PORT", "kafka", "KAFKA_PROXIED_PORT"},
	}
	script := string(c.readFile("k8s/base/data/configure-toxiproxy.sh"))
	for _, h := range hops {
		listen, up := c.ports[h.listenKey], c.ports[h.upstreamKey]
		if !servicePort(Find(c.objs, "Service", "toxiproxy"), listen) {
			c.bad("service/toxiproxy must expose %s (%s), its %s proxy", listen, h.listenKey, h.name)
		}
		if !servicePort(Find(c.objs, "Service", h.upstream), up) {
			c.bad("service/%s must expose %s (%s), the upstream of toxiproxy's %s proxy", h.upstream, up, h.upstreamKey, h.name)
		}
		if want := fmt.Sprintf("proxy %s 0.0.0.0:%s %s:%s ", h.name, listen, h.upstream, up); !strings.Contains(script, want) {
			c.bad("k8s/base/data/configure-toxiproxy.sh: no %q (%s -> %s in infra/local/ports.env)", want, h.listenKey, h.upstreamKey)
		}
	}
	if k := Find(c.objs, "StatefulSet", "kafka"); k != nil {
		for _, ct := range Containers(k.PodSpec()) {
			env := Env(ct)
			if !strings.Contains(env["KAFKA_LISTENERS"], "PROXIED://:"+c.ports["KAFKA_PROXIED_PORT"]) ||
				!strings.Contains(env["KAFKA_ADVERTISED_LISTENERS"], "PROXIED://toxiproxy:"+c.ports["KAFKA_PROXY_PORT"]) {
				c.bad("statefulset/kafka: the PROXIED listener must listen on KAFKA_PROXIED_PORT and advertise toxiproxy:KAFKA_PROXY_PORT (infra/local/kafka.properties)")
			}
		}
	}
	if d := Find(c.objs, "Deployment", "ingest"); d != nil {
		for _, ct := range Containers(d.PodSpec()) {
			if want := "toxiproxy:" + c.ports["KAFKA_PROXY_PORT"]; str(ct["name"]) == "ingest" && Env(ct)["KAFKA_BOOTSTRAP_SERVERS"] != want {
				c.bad("deployment/ingest: KAFKA_BOOTSTRAP_SERVERS must be %s, through toxiproxy as on the local runtime", want)
			}
		}
	}
}

func servicePort(svc Object, port string) bool {
	for _, p := range list(get(svc, "spec", "ports")) {
		if m, _ := p.(map[string]any); m != nil && str(m["port"]) == port {
			return true
		}
	}
	return false
}

// scenarios checks that every scenario runs unchanged on this overlay: each
// service it names is a workload here, and each setting it changes is
// declared by the workload or read by the service's code.
func (c *checker) scenarios() {
	for _, name := range scenario.List(c.root) {
		s, err := scenario.Load(c.root, name)
		if err != nil {
			c.bad("%v", err)
			continue
		}
		for _, svc := range s.Services {
			if Find(c.objs, "Deployment", svc) == nil && Find(c.objs, "StatefulSet", svc) == nil {
				c.bad("scenario %s: service %s is neither a Deployment nor a StatefulSet", name, svc)
			}
		}
		check := func(field string, st scenario.Settings) {
			for _, svc := range slices.Sorted(maps.Keys(st)) {
				for _, v := range slices.Sorted(maps.Keys(st[svc])) {
					if !c.settingKnown(svc, v) {
						c.bad("scenario %s: %s sets %s on %s, which neither %s's manifest declares nor its code reads (nor, for infrastructure, infra/local/run-%s.sh)", name, field, v, svc, svc, svc)
					}
				}
			}
		}
		for _, p := range slices.Sorted(maps.Keys(s.Load.Profiles)) {
			check("load.profiles."+p+".settings", s.Load.Profiles[p].Settings)
		}
		for _, v := range slices.Sorted(maps.Keys(s.Variants)) {
			check("variants."+v+".settings", s.Variants[v].Settings)
		}
	}
}

// frameworkPrefixes are the environment forms of the frameworks' own
// properties (relaxed binding), e.g. SPRING_THREADS_VIRTUAL_ENABLED for
// spring.threads.virtual.enabled: set on the service, read by the framework.
var frameworkPrefixes = []string{"SPRING_", "SERVER_", "MANAGEMENT_", "QUARKUS_"}

func (c *checker) settingKnown(svc, variable string) bool {
	// LAB_CPUS pins a local process to CPUs (run-java-service.sh); on
	// Kubernetes the container's CPU limit gives it the same budget, and the
	// security policy already requires every container to have one.
	if variable == "LAB_CPUS" {
		local, _ := os.ReadFile(filepath.Join(c.root, "infra", "local", "run-java-service.sh"))
		return bytes.Contains(local, []byte(variable))
	}
	src := filepath.Join(c.root, "services", svc, "src", "main")
	if _, err := os.Stat(src); err == nil {
		if slices.ContainsFunc(frameworkPrefixes, func(p string) bool { return strings.HasPrefix(variable, p) }) {
			return true
		}
		found := false
		filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || found {
				return nil
			}
			if data, err := os.ReadFile(path); err == nil && bytes.Contains(data, []byte(variable)) {
				found = true
			}
			return nil
		})
		return found
	}
	// Infrastructure (toxiproxy): the manifest must declare the variable and
	// the local runtime's launcher must read it.
	local, err := os.ReadFile(filepath.Join(c.root, "infra", "local", "run-"+svc+".sh"))
	if err != nil || !bytes.Contains(local, []byte(variable)) {
		return false
	}
	for _, kind := range []string{"Deployment", "StatefulSet"} {
		if o := Find(c.objs, kind, svc); o != nil {
			for _, ct := range Containers(o.PodSpec()) {
				if _, ok := Env(ct)[variable]; ok {
					return true
				}
			}
		}
	}
	return false
}

// collector checks that the Kubernetes collector runs the local pipeline:
// the ConfigMap holds infra/local/otelcol.yaml byte for byte, and the
// Kubernetes file merged over it adds the Tempo exporter and nothing else.
func (c *checker) collector() {
	cm := FindGenerated(c.objs, "ConfigMap", "otelcol-config")
	if cm == nil {
		c.bad("no ConfigMap otelcol-config")
		return
	}
	data, _ := cm["data"].(map[string]any)
	local := c.readFile("infra/local/otelcol.yaml")
	if str(data["otelcol.yaml"]) != string(local) {
		c.bad("ConfigMap otelcol-config: otelcol.yaml is not infra/local/otelcol.yaml")
		return
	}
	var base, over map[string]any
	if err := yaml.Unmarshal(local, &base); err != nil {
		c.bad("infra/local/otelcol.yaml: %v", err)
		return
	}
	if err := yaml.Unmarshal([]byte(str(data["otelcol-k8s.yaml"])), &over); err != nil || over == nil {
		c.bad("ConfigMap otelcol-config: otelcol-k8s.yaml is missing or invalid: %v", err)
		return
	}
	merged := mergeConfig(base, over)
	// Take the Tempo exporter out again: what remains must be the local pipeline.
	exporters, _ := merged["exporters"].(map[string]any)
	if exporters["otlp/tempo"] == nil {
		c.bad("collector: no otlp/tempo exporter on Kubernetes")
	}
	delete(exporters, "otlp/tempo")
	traces, _ := get(merged, "service", "pipelines", "traces").(map[string]any)
	traceExporters := list(traces["exporters"])
	if !slices.ContainsFunc(traceExporters, func(v any) bool { return str(v) == "otlp/tempo" }) {
		c.bad("collector: the traces pipeline does not export to otlp/tempo")
	}
	traces["exporters"] = slices.DeleteFunc(slices.Clone(traceExporters), func(v any) bool { return str(v) == "otlp/tempo" })
	if !reflect.DeepEqual(merged, base) {
		c.bad("collector: otelcol-k8s.yaml changes more than the Tempo exporter; the pipeline must stay the local one (infra/local/otelcol.yaml)")
	}
	dep := Find(c.objs, "Deployment", "otelcol")
	if dep == nil {
		c.bad("no Deployment otelcol")
		return
	}
	for _, ct := range Containers(dep.PodSpec()) {
		args := fmt.Sprint(ct["args"])
		if !strings.Contains(args, "/otelcol.yaml") || !strings.Contains(args, "/otelcol-k8s.yaml") {
			c.bad("deployment/otelcol: must load otelcol.yaml, then otelcol-k8s.yaml (args %s)", args)
		}
		if env := Env(ct); env["OTELCOL_LISTEN_HOST"] != "0.0.0.0" || env["JAEGER_HOST"] != "jaeger" {
			c.bad("deployment/otelcol: OTELCOL_LISTEN_HOST must be 0.0.0.0 and JAEGER_HOST jaeger")
		}
	}
}

// mergeConfig merges like the collector does with several --config files:
// maps merge key by key, anything else is replaced.
func mergeConfig(base, over map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = deepCopy(v)
	}
	for k, v := range over {
		bm, ok1 := out[k].(map[string]any)
		om, ok2 := v.(map[string]any)
		if ok1 && ok2 {
			out[k] = mergeConfig(bm, om)
		} else {
			out[k] = deepCopy(v)
		}
	}
	return out
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return mergeConfig(x, nil)
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = deepCopy(x[i])
		}
		return out
	default:
		return v
	}
}

func (c *checker) sameFile(configMap, key, rel string) {
	cm := FindGenerated(c.objs, "ConfigMap", configMap)
	if cm == nil {
		c.bad("no ConfigMap %s", configMap)
		return
	}
	data, _ := cm["data"].(map[string]any)
	if str(data[key]) != string(c.readFile(rel)) {
		c.bad("ConfigMap %s: %s is not %s", configMap, key, rel)
	}
}

// prometheus checks that Prometheus scrapes the same jobs as locally.
func (c *checker) prometheus() {
	jobs := func(data []byte) []string {
		var cfg struct {
			ScrapeConfigs []struct {
				JobName string `yaml:"job_name"`
			} `yaml:"scrape_configs"`
		}
		yaml.Unmarshal(data, &cfg)
		var out []string
		for _, s := range cfg.ScrapeConfigs {
			out = append(out, s.JobName)
		}
		slices.Sort(out)
		return out
	}
	cm := FindGenerated(c.objs, "ConfigMap", "prometheus-config")
	if cm == nil {
		c.bad("no ConfigMap prometheus-config")
		return
	}
	data, _ := cm["data"].(map[string]any)
	got, want := jobs([]byte(str(data["prometheus.yml"]))), jobs(c.readFile("infra/local/prometheus.yml"))
	if len(want) == 0 || !reflect.DeepEqual(got, want) {
		c.bad("Prometheus scrapes jobs %v, the local runtime %v (infra/local/prometheus.yml)", got, want)
	}
}

// generatedFiles checks that every file of a folder is in a ConfigMap
// generator: kustomize has no globs, so each new file needs its line.
func (c *checker) generatedFiles(configMap, dir, pattern string) {
	cm := FindGenerated(c.objs, "ConfigMap", configMap)
	if cm == nil {
		c.bad("no ConfigMap %s", configMap)
		return
	}
	data, _ := cm["data"].(map[string]any)
	files, _ := filepath.Glob(filepath.Join(c.root, dir, pattern))
	for _, f := range files {
		if _, ok := data[filepath.Base(f)]; !ok {
			c.bad("%s/%s is not in ConfigMap %s: add it to that configMapGenerator in k8s/base/kustomization.yaml", dir, filepath.Base(f), configMap)
		}
	}
}

// imageVersions checks the images that exist on both runtimes run the
// versions pinned for the local runtime.
// majorMinor is "16.4" of "16.4.0": the postgres image's tags name a
// release without its patch level.
func majorMinor(v string) string {
	parts := strings.SplitN(v, ".", 3)
	return strings.Join(parts[:min(2, len(parts))], ".")
}

func (c *checker) imageVersions() {
	want := map[string]string{
		"otel/opentelemetry-collector-contrib": strings.TrimPrefix(c.versions["OTELCOL_CONTRIB_VERSION"], "v"),
		"ghcr.io/shopify/toxiproxy":            strings.TrimPrefix(c.versions["TOXIPROXY_VERSION"], "v"),
		"grafana/k6":                           strings.TrimPrefix(c.versions["K6_VERSION"], "v"),
		"postgres":                             majorMinor(c.versions["POSTGRESQL_VERSION"]),
	}
	seen := map[string]bool{}
	for _, o := range c.objs {
		for _, ct := range Containers(o.PodSpec()) {
			repo, tag, _ := strings.Cut(str(ct["image"]), ":")
			w, ok := want[repo]
			if !ok {
				continue
			}
			seen[repo] = true
			if tag != w && !strings.HasPrefix(tag, w+".") {
				c.bad("%s: image %s:%s, but infra/local/versions.env pins %s", o.ID(), repo, tag, w)
			}
		}
	}
	for _, repo := range slices.Sorted(maps.Keys(want)) {
		if !seen[repo] {
			c.bad("no workload runs %s", repo)
		}
	}
}

// noCommittedSecrets: Secrets come only from secretGenerator, never from a
// committed manifest.
func (c *checker) noCommittedSecrets() {
	re := regexp.MustCompile(`(?m)^kind:\s*Secret\s*$`)
	filepath.WalkDir(filepath.Join(c.root, "k8s"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return nil
		}
		if data, _ := os.ReadFile(path); re.Match(data) {
			rel, _ := filepath.Rel(c.root, path)
			c.bad("%s holds a Secret; generate it instead (secretGenerator and k8s/gen-secrets.sh)", rel)
		}
		return nil
	})
	for _, o := range c.objs {
		// A generator's name ends in a content hash: -<10 characters>.
		if n := o.Name(); o.Kind() == "Secret" && (len(n) < 12 || n[len(n)-11] != '-') {
			c.bad("%s is not generated by kustomize's secretGenerator", o.ID())
		}
	}
}

// kindAccess checks that kind maps each NodePort to the local runtime's port
// of the same component on 127.0.0.1, and that tracelab can reach every
// scenario's entrypoint and Jaeger that way.
func (c *checker) kindAccess() {
	var cluster struct {
		Nodes []struct {
			Image             string `yaml:"image"`
			ExtraPortMappings []struct {
				ContainerPort int    `yaml:"containerPort"`
				HostPort      int    `yaml:"hostPort"`
				ListenAddress string `yaml:"listenAddress"`
			} `yaml:"extraPortMappings"`
		} `yaml:"nodes"`
	}
	if err := yaml.Unmarshal(c.readFile("k8s/kind/cluster.yaml"), &cluster); err != nil || len(cluster.Nodes) == 0 {
		c.bad("k8s/kind/cluster.yaml: no nodes (%v)", err)
		return
	}
	node := cluster.Nodes[0]
	k8s := strings.Join(strings.Split(c.versions["K8S_VERSION"], ".")[:2], ".")
	if !strings.Contains(node.Image, ":v"+k8s+".") {
		c.bad("k8s/kind/cluster.yaml: node image %s is not Kubernetes %s (K8S_VERSION)", node.Image, k8s)
	}
	hostPort := map[int]int{}
	for _, m := range node.ExtraPortMappings {
		hostPort[m.ContainerPort] = m.HostPort
		if m.ListenAddress != "127.0.0.1" {
			c.bad("k8s/kind/cluster.yaml: port %d must listen on 127.0.0.1 only", m.HostPort)
		}
	}
	exposed := map[string]bool{}
	for _, o := range c.objs {
		if o.Kind() != "Service" || str(get(o, "spec", "type")) != "NodePort" {
			continue
		}
		for _, p := range list(get(o, "spec", "ports")) {
			m, _ := p.(map[string]any)
			np, _ := m["nodePort"].(int)
			if np == 0 {
				continue // not meant for the host: kind maps no port to it
			}
			hp, ok := hostPort[np]
			if !ok {
				c.bad("service/%s: nodePort %d has no extraPortMapping in k8s/kind/cluster.yaml", o.Name(), np)
				continue
			}
			delete(hostPort, np)
			key := ""
			for k, v := range c.ports {
				if v == strconv.Itoa(hp) {
					key = k
				}
			}
			if !strings.HasPrefix(key, strings.ToUpper(o.Name())+"_") {
				c.bad("service/%s: kind maps it to host port %d, which is not %s's in infra/local/ports.env", o.Name(), hp, o.Name())
			}
			exposed[o.Name()] = true
		}
	}
	for np, hp := range hostPort {
		c.bad("k8s/kind/cluster.yaml: mapping %d -> %d belongs to no NodePort", np, hp)
	}
	need := []string{"jaeger"}
	for _, name := range scenario.List(c.root) {
		if s, err := scenario.Load(c.root, name); err == nil {
			need = append(need, s.Entrypoint.Service)
		}
	}
	for _, svc := range need {
		if !exposed[svc] {
			c.bad("service/%s: tracelab reaches it from the host, so kind must expose it as a NodePort (k8s/overlays/kind/nodeports.yaml)", svc)
		}
	}
}

// eksAccess: nothing is exposed outside the cluster (tracelab port-forwards),
// and every volume is an encrypted gp3 one.
func (c *checker) eksAccess() {
	for _, o := range c.objs {
		switch o.Kind() {
		case "Service":
			if t := str(get(o, "spec", "type")); t == "NodePort" || t == "LoadBalancer" {
				c.bad("%s: type %s exposes the lab outside the cluster; EKS access is by port-forward", o.ID(), t)
			}
		case "StatefulSet":
			for _, v := range list(get(o, "spec", "volumeClaimTemplates")) {
				if sc := str(get(v, "spec", "storageClassName")); sc != "gp3" {
					c.bad("%s: volume claim storageClassName %q, want gp3", o.ID(), sc)
				}
			}
		}
	}
	if sc := Find(c.objs, "StorageClass", "gp3"); sc == nil || str(get(sc, "parameters", "encrypted")) != "true" {
		c.bad("no encrypted StorageClass gp3")
	}
}

// ecrRepositories checks that Terraform creates an ECR repository for every
// service: the default of variable "services" in infra/terraform/variables.tf.
func (c *checker) ecrRepositories() {
	rel := "infra/terraform/variables.tf"
	m := regexp.MustCompile(`(?s)variable "services" \{.*?default\s*=\s*\[([^\]]*)\]`).FindSubmatch(c.readFile(rel))
	if m == nil {
		c.bad("%s: no default list in variable \"services\"", rel)
		return
	}
	for _, svc := range Services(c.root) {
		if !bytes.Contains(m[1], []byte(`"`+svc+`"`)) {
			c.bad("service %s: no ECR repository: add it to variable \"services\" in %s", svc, rel)
		}
	}
}
