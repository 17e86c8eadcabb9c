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

	"tracelab/pkg/components"
	"tracelab/pkg/lab"
	"tracelab/pkg/scenario"
)

// CrossCheck returns one line per disagreement between an overlay's rendered
// objects and the hand-written rest of the lab. What make generate writes
// from the service descriptions (the services' Deployments, Services and
// local processes) is not compared here: one description gives both sides.
// What remains compares sources written apart: the infrastructure list with
// its hand-written processes and manifests, the network hops, the image
// recipes with the pinned versions, the collector pipeline, Jaeger and
// Prometheus configuration, the dashboards and load definitions, the load's
// image recipe with the CronJob that runs it, and the
// overlay's access (kind's port mappings, EKS's storage, port-forward and
// ECR repositories).
func CrossCheck(co *lab.Checkout, overlay string, objs []Object) []string {
	c := &checker{co: co, root: co.Root, overlay: overlay, objs: objs, ports: co.Ports}
	var err error
	if c.versions, err = lab.ReadEnvFile(co.Path(lab.VersionsFile)); err != nil {
		return []string{err.Error()}
	}
	if c.lab, err = co.Components(); err != nil {
		return []string{err.Error()}
	}
	c.services()
	c.infrastructure()
	c.imageRecipes()
	c.networkHops()
	c.collector()
	c.postgresPassword()
	c.sameFile("jaeger-config", "jaeger.yaml", "infra/local/jaeger.yaml")
	c.prometheus()
	c.generatedFiles("grafana-dashboards", "dashboards", "*.json")
	c.generatedFiles("loadtests", "loadtests", "*.yaml")
	c.loadImage()
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
	co              *lab.Checkout
	root, overlay   string
	objs            []Object
	ports, versions map[string]string
	lab             *components.Lab
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

// services: an overlay is hand-written and may drop or rename what the base
// generates; every described service must still run in it.
func (c *checker) services() {
	for _, s := range c.lab.Services {
		for _, kind := range []string{"Deployment", "Service"} {
			if Find(c.objs, kind, s.Name) == nil {
				c.bad("service %s: no %s %q (run make generate; README.md, \"Adding a service\")", s.Name, kind, s.Name)
			}
		}
	}
}

// infrastructure checks the one list of infrastructure (infra/components.yaml)
// against what is hand-written for each component: a process of the local
// runtime and a workload of the overlay.
func (c *checker) infrastructure() {
	var local struct {
		Processes map[string]any `yaml:"processes"`
	}
	// process-compose expands ${VAR} before it parses; ports are numbers.
	expanded := envReference.ReplaceAll(c.readFile("infra/local/process-compose.yaml"), []byte("0"))
	if err := yaml.Unmarshal(expanded, &local); err != nil {
		c.bad("infra/local/process-compose.yaml: %v", err)
	}
	for _, infra := range c.lab.Infrastructure {
		if _, ok := local.Processes[infra.Name]; !ok {
			c.bad("infrastructure %s (%s): no process in infra/local/process-compose.yaml", infra.Name, components.InfraFile)
		}
		if Find(c.objs, "Deployment", infra.Name) == nil && Find(c.objs, "StatefulSet", infra.Name) == nil {
			c.bad("infrastructure %s (%s): no Deployment or StatefulSet", infra.Name, components.InfraFile)
		}
	}
}

var envReference = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*\}`)

var (
	dockerFrom  = regexp.MustCompile(`(?m)^FROM\s+(\S+)`)
	dockerUser  = regexp.MustCompile(`(?m)^USER\s+(\d+)`)
	dockerAgent = regexp.MustCompile(`(?m)^ARG OTEL_JAVAAGENT_VERSION=(\S+)`)
	// ARG NAME=default, and a FROM that names one: FROM ${NAME}.
	dockerArgDefault = regexp.MustCompile(`(?m)^ARG ([A-Za-z_][A-Za-z0-9_]*)=(\S+)`)
	dockerArgRef     = regexp.MustCompile(`^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$`)
	// From the build stage's FROM to the line before its first ARG.
	dockerSharedStage = regexp.MustCompile(`(?s)\nFROM \$\{BUILD_IMAGE\} AS build\n.*?\nARG `)
)

// imageRecipes checks the recipe of every framework (make images builds
// each service with its framework's): multi-stage, pinned bases, a non-root
// user, and the Java agent of infra/local/versions.env.
func (c *checker) imageRecipes() {
	// The shared build stage of each recipe and the first recipe that had it.
	var shared, sharedBy string
	for _, fw := range slices.Sorted(maps.Keys(components.Frameworks)) {
		rel := filepath.Join("services", "images", fw+".Dockerfile")
		data, err := os.ReadFile(filepath.Join(c.root, rel))
		if err != nil {
			c.bad("framework %s: no image recipe %s", fw, rel)
			continue
		}
		s := string(data)
		froms := dockerFrom.FindAllStringSubmatch(s, -1)
		if len(froms) < 2 {
			c.bad("%s: want a multi-stage build (a build stage and a runtime stage)", rel)
		}
		// Every recipe's build stage starts with the same lines, up to its
		// first ARG, so that one Maven build of services/ serves them all
		// from the layer cache.
		if m := dockerSharedStage.FindString(s); m == "" {
			c.bad("%s: the build stage must start with FROM ${BUILD_IMAGE} AS build and build services/ before its first ARG", rel)
		} else if shared == "" {
			shared, sharedBy = m, rel
		} else if m != shared {
			c.bad("%s: its build stage differs from %s's before their first ARG; the layer cache would build services/ once per recipe", rel, sharedBy)
		}
		// The bases are build arguments (make images passes JAVA_BUILD_IMAGE
		// and JAVA_RUNTIME_IMAGE); their defaults are what users pull.
		args := map[string]string{}
		for _, a := range dockerArgDefault.FindAllStringSubmatch(s, -1) {
			args[a[1]] = a[2]
		}
		for _, f := range froms {
			base := f[1]
			if m := dockerArgRef.FindStringSubmatch(base); m != nil {
				if args[m[1]] == "" {
					c.bad("%s: FROM %s, but no ARG %s=<image> gives its default", rel, base, m[1])
					continue
				}
				base = args[m[1]]
			}
			if !pinned(base) {
				c.bad("%s: base image %s is not pinned to a version tag", rel, base)
			}
		}
		users := dockerUser.FindAllStringSubmatch(s, -1)
		if len(users) == 0 || users[len(users)-1][1] == "0" {
			c.bad("%s: the runtime stage must run as a numeric non-root USER", rel)
		}
		if !strings.Contains(s, "\nARG SERVICE\n") || !strings.Contains(s, `"$SERVICE/target/`) || !strings.Contains(s, "EXPOSE ${PORT}") {
			c.bad("%s: must build the module named by --build-arg SERVICE and expose PORT (make images passes both)", rel)
		}
		m := dockerAgent.FindStringSubmatch(s)
		if components.Frameworks[fw].JavaAgent && m == nil {
			c.bad("%s: no ARG OTEL_JAVAAGENT_VERSION, but %s services run the Java agent", rel, fw)
		}
		if m != nil && m[1] != c.versions["OTEL_JAVAAGENT_VERSION"] {
			c.bad("%s: OTEL_JAVAAGENT_VERSION %s differs from infra/local/versions.env (%s)", rel, m[1], c.versions["OTEL_JAVAAGENT_VERSION"])
		}
	}
}

// The base images of tracelab/Dockerfile are build arguments, so that
// another machine can pass its own.
var dockerBaseArg = regexp.MustCompile(`(?m)^ARG (GO_IMAGE|RUNTIME_IMAGE)=(\S+)`)

// loadImage checks the CronJob load (k8s/base/load/load.yaml), which
// pkg/loadjob copies for each run, against tracelab/Dockerfile: the lab's
// own tracelab image, built multi-stage from pinned bases, running as the
// user the pod's securityContext names (a distroless image has no user
// database to look a name up in), over the definitions of ConfigMap
// loadtests.
func (c *checker) loadImage() {
	const rel = "tracelab/Dockerfile"
	s := string(c.readFile(rel))
	if len(dockerFrom.FindAllStringSubmatch(s, -1)) < 2 {
		c.bad("%s: want a multi-stage build (a build stage and a runtime stage)", rel)
	}
	bases := dockerBaseArg.FindAllStringSubmatch(s, -1)
	if len(bases) != 2 {
		c.bad("%s: want the base images as ARG GO_IMAGE=... and ARG RUNTIME_IMAGE=... (make images passes them)", rel)
	}
	for _, b := range bases {
		if !pinned(b[2]) {
			c.bad("%s: base image %s=%s is not pinned to a tag", rel, b[1], b[2])
		}
	}
	users := dockerUser.FindAllStringSubmatch(s, -1)
	user := ""
	if len(users) > 0 {
		user = users[len(users)-1][1]
	}
	if user == "" || user == "0" {
		c.bad("%s: the runtime stage must run as a numeric non-root USER", rel)
	}
	cj := Find(c.objs, "CronJob", "load")
	if cj == nil {
		c.bad("no CronJob load (k8s/base/load/load.yaml): tracelab runs the load on Kubernetes from it")
		return
	}
	spec := cj.PodSpec()
	var load map[string]any
	for _, ct := range Containers(spec) {
		if ct["name"] == "load" {
			load = ct
		}
	}
	if load == nil {
		c.bad("%s: no container load (tracelab/pkg/loadjob sets its args)", cj.ID())
		return
	}
	if repo, _, _ := strings.Cut(str(load["image"]), ":"); repo != "tracelab/tracelab" {
		c.bad("%s: image %s; want tracelab/tracelab, built from %s by make images", cj.ID(), str(load["image"]), rel)
	}
	sc, _ := spec["securityContext"].(map[string]any)
	if str(sc["runAsUser"]) != user {
		c.bad("%s: runAsUser %s, but %s runs as USER %s", cj.ID(), str(sc["runAsUser"]), rel, user)
	}
	mounted, fromConfigMap := false, false
	for _, m := range list(load["volumeMounts"]) {
		mm, _ := m.(map[string]any)
		mounted = mounted || mm["name"] == "loadtests"
	}
	for _, v := range list(spec["volumes"]) {
		vm, _ := v.(map[string]any)
		if cm, _ := vm["configMap"].(map[string]any); vm["name"] == "loadtests" && cm != nil {
			fromConfigMap = str(cm["name"]) == str(FindGenerated(c.objs, "ConfigMap", "loadtests").Name())
		}
	}
	if !mounted || !fromConfigMap {
		c.bad("%s: container load must mount the ConfigMap loadtests as volume loadtests (tracelab/pkg/loadjob reads it there)", cj.ID())
	}
}

// networkHops checks what the toxiproxy pod cannot read from
// infra/local/ports.env, where the local runtime wires its hops
// (kafka.properties, configure-toxiproxy.sh, which reads its ports from the
// environment): the container and Service ports of the proxies, that the
// upstream hosts the configurer is given serve the upstream ports, that
// Kafka's PROXIED listener advertises the proxy, and that ingest bootstraps
// through it.
func (c *checker) networkHops() {
	dep := Find(c.objs, "Deployment", "toxiproxy")
	if dep == nil {
		c.bad("no Deployment toxiproxy (k8s/base/data/toxiproxy.yaml)")
		return
	}
	containers := map[string]map[string]any{}
	for _, ct := range Containers(dep.PodSpec()) {
		containers[str(ct["name"])] = ct
		var envFrom []string
		for _, e := range list(ct["envFrom"]) {
			envFrom = append(envFrom, str(get(e, "configMapRef", "name")))
		}
		if o := FindGenerated(c.objs, "ConfigMap", "lab-ports"); o == nil || !slices.Contains(envFrom, o.Name()) {
			c.bad("deployment/toxiproxy/%s: envFrom must include ConfigMap lab-ports, where its ports come from", ct["name"])
		}
	}
	ports := map[string]string{}
	for _, p := range list(containers["toxiproxy"]["ports"]) {
		ports[str(get(p, "name"))] = str(get(p, "containerPort"))
	}
	if want := c.ports["TOXIPROXY_PORT"]; ports["api"] != want {
		c.bad("deployment/toxiproxy: container port api must be %s (TOXIPROXY_PORT), got %q", want, ports["api"])
	}
	upstreamHosts := Env(containers["configure"])
	hops := []struct{ name, listenKey, hostKey, upstreamKey string }{
		{"postgres", "POSTGRES_PROXY_PORT", "POSTGRES_HOST", "POSTGRES_PORT"},
		{"kafka", "KAFKA_PROXY_PORT", "KAFKA_HOST", "KAFKA_PROXIED_PORT"},
	}
	for _, h := range hops {
		listen, up := c.ports[h.listenKey], c.ports[h.upstreamKey]
		if ports[h.name] != listen {
			c.bad("deployment/toxiproxy: container port %s must be %s (%s), got %q", h.name, listen, h.listenKey, ports[h.name])
		}
		if !servicePort(Find(c.objs, "Service", "toxiproxy"), listen) {
			c.bad("service/toxiproxy must expose %s (%s), its %s proxy", listen, h.listenKey, h.name)
		}
		if host := upstreamHosts[h.hostKey]; !servicePort(Find(c.objs, "Service", host), up) {
			c.bad("deployment/toxiproxy/configure: %s=%q must name a Service that exposes %s (%s), the upstream of the %s proxy", h.hostKey, host, up, h.upstreamKey, h.name)
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

// postgresPassword checks that PostgreSQL's set-password initContainer sees
// what the postgres container sees: were its PGDATA another folder, it would
// find no cluster there and leave the old password in place without a word.
func (c *checker) postgresPassword() {
	sts := Find(c.objs, "StatefulSet", "postgres")
	if sts == nil {
		c.bad("no StatefulSet postgres")
		return
	}
	byName := map[string]map[string]any{}
	for _, ct := range Containers(sts.PodSpec()) {
		byName[str(ct["name"])] = ct
	}
	initc, main := byName["set-password"], byName["postgres"]
	if initc == nil || main == nil || !strings.Contains(fmt.Sprint(initc["command"]), "set-postgres-password.sh") {
		c.bad("statefulset/postgres: needs the initContainer set-password running set-postgres-password.sh beside the container postgres, or a rotated Secret never reaches the volume")
		return
	}
	envOf := func(ct map[string]any) map[string]any {
		out := map[string]any{}
		for _, e := range list(ct["env"]) {
			m, _ := e.(map[string]any)
			out[str(m["name"])] = m
		}
		return out
	}
	mountOf := func(ct map[string]any, volume string) string {
		for _, v := range list(ct["volumeMounts"]) {
			if m, _ := v.(map[string]any); str(m["name"]) == volume {
				return str(m["mountPath"])
			}
		}
		return ""
	}
	initEnv, mainEnv := envOf(initc), envOf(main)
	for _, key := range []string{"PGDATA", "POSTGRES_USER", "POSTGRES_PASSWORD"} {
		if !reflect.DeepEqual(initEnv[key], mainEnv[key]) || initEnv[key] == nil {
			c.bad("statefulset/postgres/set-password: %s must be the postgres container's", key)
		}
	}
	if mountOf(initc, "data") == "" || mountOf(initc, "data") != mountOf(main, "data") {
		c.bad("statefulset/postgres/set-password: must mount the volume data where the postgres container does")
	}
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

// kindAccess checks that every port of a NodePort Service has its node port
// pinned, that kind maps those meant for the host to the local runtime's
// port of the same component on 127.0.0.1, and that tracelab can reach
// every scenario's entrypoint and Jaeger that way. A node port left to the
// API server is drawn at random, and can take one pinned for another
// Service, which then fails to apply.
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
	if k8s := c.versions["K8S_VERSION"]; !strings.Contains(node.Image, ":v"+k8s+".") {
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
				c.bad("service/%s: port %v has no nodePort; one drawn at random can take a port pinned for another Service", o.Name(), m["port"])
				continue
			}
			hp, ok := hostPort[np]
			if !ok {
				continue // in-cluster only: kind maps no host port to it
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
	for _, name := range scenario.List(c.co) {
		if s, err := scenario.Load(c.co, name); err == nil {
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
	// The EKS cluster runs the Kubernetes minor make test-k8s deploys the
	// manifests on.
	rel := "infra/terraform/variables.tf"
	m := regexp.MustCompile(`(?s)variable "kubernetes_version" \{.*?default\s*=\s*"([^"]*)"`).FindSubmatch(c.readFile(rel))
	if m == nil || string(m[1]) != c.versions["K8S_VERSION"] {
		got := "none"
		if m != nil {
			got = string(m[1])
		}
		c.bad("%s: kubernetes_version defaults to %s, not K8S_VERSION %s (infra/local/versions.env)", rel, got, c.versions["K8S_VERSION"])
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
	for _, svc := range components.ServiceNames(c.root) {
		if !bytes.Contains(m[1], []byte(`"`+svc+`"`)) {
			c.bad("service %s: no ECR repository: add it to variable \"services\" in %s", svc, rel)
		}
	}
}
