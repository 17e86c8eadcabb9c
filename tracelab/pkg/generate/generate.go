// Package generate writes, from the service descriptions (pkg/components),
// what both runtimes run: the services' processes of the local runtime, their
// Kubernetes Deployments and Services, their lines of infra/local/ports.env,
// and the settings declarations that the services and the toxiproxy
// configurer take their ranges and defaults from. The output is checked in,
// so a reader sees plain files; `tracelab generate --check` (and its Go
// test) fails when they differ.
package generate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"tracelab/pkg/components"
	"tracelab/pkg/lab"
)

// The generated files, relative to the checkout.
const (
	LocalFile    = "infra/local/services.process-compose.yaml"
	PortsFile    = lab.PortsFile
	KubeDir      = "k8s/base/services"
	OtelJavaFile = "services/otel-java.env"
	// JavaSettingsFile is, in a service's folder, where its settings reader
	// (services/lib/settings) takes each setting's allowed values and
	// default from.
	JavaSettingsFile = "src/main/resources/settings.properties"
	// InfraSettingsDir holds <component>-settings.properties, the same for an
	// infrastructure component, beside the script that applies its settings
	// on both runtimes (k8s/base/data/configure-toxiproxy.sh).
	InfraSettingsDir = "k8s/base/data"
	portsBoundary    = "# Service ports: written by `make generate` from services/*/service.yaml; edit those, not these lines."
)

// What every Java service gets, whatever its description says.
const (
	// jvmOptions keep seven JVMs within the lab's memory.
	jvmOptions = "-Xms128m -Xmx" + heapMaxMiB + "m -XX:+UseSerialGC"
	// otlpEndpoint is where every service sends its telemetry: the collector.
	otlpEndpoint = "http://{otelcol:OTELCOL_OTLP_HTTP_PORT}"
	// agentJar is where the Spring recipe puts the agent in the image.
	agentJar = "/opt/otel/opentelemetry-javaagent.jar"
	// imageTag is what make images tags (IMAGE_TAG's default).
	imageTag = "dev"
)

// A Java service's memory on Kubernetes, from the peak resident memory of
// each service measured under every scenario's full profile on the local
// runtime (k8s/README.md, "Memory"): at most 349 MiB (gateway under
// antpath, 218 threads). The heap stayed at its -Xms 128 MiB in every
// service; the rest, up to 220 MiB, is the JVM's own (classes with the
// agent's, code cache, thread stacks). The limit holds a heap grown to
// -Xmx too, so that a busy JVM collects rather than being killed by the
// kernel: -Xmx plus the measured non-heap peak with 25% margin (787 MiB),
// rounded up. The request is the measured peak with 10% margin.
const (
	heapMaxMiB       = "512"
	memoryLimitMiB   = "800"
	memoryRequestMiB = "384"
)

// Files maps each generated file (relative path) to its content.
type Files map[string][]byte

// All renders every generated file of the checkout c.
func All(c *lab.Checkout) (Files, error) {
	comps, err := c.Components()
	if err != nil {
		return nil, err
	}
	otel, err := lab.ReadEnvFile(c.Path(OtelJavaFile))
	if err != nil {
		return nil, err
	}
	// A copy: portsEnv adds the services' ports as it writes their lines.
	g := &generator{lab: comps, ports: maps.Clone(c.Ports), otel: otel}
	files := Files{}
	if files[PortsFile], err = g.portsEnv(c.PortsText()); err != nil {
		return nil, err
	}
	if files[LocalFile], err = g.local(); err != nil {
		return nil, err
	}
	var names []string
	for _, s := range comps.Services {
		if files[filepath.Join(KubeDir, s.Name+".yaml")], err = g.kube(s); err != nil {
			return nil, err
		}
		names = append(names, s.Name)
	}
	files[filepath.Join(KubeDir, "kustomization.yaml")] = render(kustomizationTemplate, names)
	// The programs that apply the settings read their allowed values and
	// defaults from these files, so the descriptions stay their one source.
	for _, s := range comps.Services {
		if len(s.Settings) > 0 {
			files[filepath.Join("services", s.Name, JavaSettingsFile)] = settingsProperties(components.DescriptionFile(s.Name), s.Settings)
		}
	}
	for _, in := range comps.Infrastructure {
		if len(in.Settings) > 0 {
			files[filepath.Join(InfraSettingsDir, in.Name+"-settings.properties")] = settingsProperties(components.InfraFile, in.Settings)
		}
	}
	// tracelab version prints the pins; the binary embeds this copy, as
	// go:embed cannot reach outside its module, and generate --check keeps
	// it equal to versions.env, their one source.
	pins, err := os.ReadFile(c.Path(VersionsFile))
	if err != nil {
		return nil, err
	}
	files[VersionsCopy] = pinLines(pins)
	return files, nil
}

// VersionsFile holds the lab's pins; VersionsCopy is the copy tracelab
// embeds, its KEY=VALUE lines only.
const (
	VersionsFile = "infra/local/versions.env"
	VersionsCopy = "tracelab/cli/versions.env"
)

// pinLines keeps the KEY=VALUE lines of an env file, under a header that
// names the source.
func pinLines(env []byte) []byte {
	var b strings.Builder
	b.WriteString("# Generated by tracelab generate from " + VersionsFile + ": do not edit.\n")
	for _, l := range strings.Split(string(env), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") && strings.Contains(l, "=") {
			b.WriteString(l + "\n")
		}
	}
	return []byte(b.String())
}

// settingsProperties writes settings as java.util.Properties lines, which
// a shell reads with sed as well: NAME.default, and NAME.values
// (comma-separated) or NAME.min and NAME.max.
func settingsProperties(source string, settings map[string]components.Setting) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# Generated by `make generate` from %s; edit that file, not this one.\n", source)
	for _, name := range slices.Sorted(maps.Keys(settings)) {
		st := settings[name]
		fmt.Fprintf(&b, "%s.default=%s\n", name, st.Default)
		if st.Values != nil {
			fmt.Fprintf(&b, "%s.values=%s\n", name, strings.Join(st.Values, ","))
		} else {
			fmt.Fprintf(&b, "%s.min=%d\n%s.max=%d\n", name, *st.Min, name, *st.Max)
		}
	}
	return []byte(b.String())
}

// Write writes the files under root.
func (f Files) Write(root string) error {
	for _, rel := range slices.Sorted(maps.Keys(f)) {
		path := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, f[rel], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Stale lists the files under root that differ from f, and the generated
// Kubernetes manifests of services that no longer exist.
func (f Files) Stale(root string) []string {
	var out []string
	for _, rel := range slices.Sorted(maps.Keys(f)) {
		if have, err := os.ReadFile(filepath.Join(root, rel)); err != nil || !bytes.Equal(have, f[rel]) {
			out = append(out, rel)
		}
	}
	for _, path := range f.orphans(root) {
		out = append(out, path)
	}
	return out
}

// RemoveOrphans deletes generated manifests whose service is gone.
func (f Files) RemoveOrphans(root string) error {
	for _, rel := range f.orphans(root) {
		if err := os.Remove(filepath.Join(root, rel)); err != nil {
			return err
		}
	}
	return nil
}

func (f Files) orphans(root string) []string {
	var out []string
	existing, _ := filepath.Glob(filepath.Join(root, KubeDir, "*.yaml"))
	for _, path := range existing {
		rel, _ := filepath.Rel(root, path)
		if _, ok := f[rel]; !ok {
			out = append(out, rel)
		}
	}
	return out
}

type generator struct {
	lab         *components.Lab
	ports, otel map[string]string
}

// address resolves {name} and {name:PORT_KEY} in a value for a runtime
// where a component's host is host(name).
func (g *generator) address(s *components.Service, value string, host func(string) string) (string, error) {
	var err error
	out := components.Address.ReplaceAllStringFunc(value, func(ref string) string {
		m := components.Address.FindStringSubmatch(ref)
		name, key := m[1], m[2]
		port := ""
		if other := g.lab.Service(name); other != nil && key == "" {
			port = strconv.Itoa(other.Port)
		} else {
			if key == "" {
				key = strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "_PORT"
			}
			if port = g.ports[key]; port == "" {
				err = fmt.Errorf("%s: %s: no %s in %s", components.DescriptionFile(s.Name), ref, key, PortsFile)
			}
		}
		return host(name) + ":" + port
	})
	return out, err
}

type envVar struct{ Name, Value string }

// env is the service's fixed environment on a runtime: the OTLP endpoint,
// then its description's env, each address resolved.
func (g *generator) env(s *components.Service, host func(string) string) ([]envVar, error) {
	fixed := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": otlpEndpoint}
	for k, v := range s.Env {
		fixed[k] = v
	}
	var out []envVar
	for _, k := range slices.Sorted(maps.Keys(fixed)) {
		v, err := g.address(s, fixed[k], host)
		if err != nil {
			return nil, err
		}
		out = append(out, envVar{k, v})
	}
	return out, nil
}

func localHost(string) string     { return "127.0.0.1" }
func kubeHost(name string) string { return name }

// portsEnv keeps ports.env's hand-written part (the infrastructure's ports)
// and rewrites the services' lines after the boundary.
func (g *generator) portsEnv(current []byte) ([]byte, error) {
	head, _, _ := strings.Cut(string(current), portsBoundary)
	if strings.TrimSpace(head) == "" {
		return nil, fmt.Errorf("%s is empty", PortsFile)
	}
	hand, err := lab.ParseEnv([]byte(head), PortsFile)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(head, "\n") + "\n" + portsBoundary + "\n")
	for _, s := range g.lab.Services {
		if _, dup := hand[s.PortKey()]; dup {
			return nil, fmt.Errorf("%s: %s is written above the generated lines; a service's port belongs in %s", PortsFile, s.PortKey(), components.DescriptionFile(s.Name))
		}
		for k, v := range hand {
			if v == strconv.Itoa(s.Port) {
				return nil, fmt.Errorf("%s: port %d is %s in %s too", components.DescriptionFile(s.Name), s.Port, k, PortsFile)
			}
		}
		fmt.Fprintf(&b, "%s=%d\n", s.PortKey(), s.Port)
		g.ports[s.PortKey()] = strconv.Itoa(s.Port)
	}
	return []byte(b.String()), nil
}

type localService struct {
	*components.Service
	Env   []envVar
	Needs []string // infrastructure to wait for
}

func (g *generator) local() ([]byte, error) {
	var services []localService
	for _, s := range g.lab.Services {
		env, err := g.env(s, localHost)
		if err != nil {
			return nil, err
		}
		agent := "off"
		if s.Framework.JavaAgent {
			agent = "on"
		}
		opts := strings.TrimSpace(jvmOptions + " " + s.JavaOpts)
		env = append([]envVar{{"SERVICE_JAR", s.Jar()}, {"JAVA_AGENT", agent}, {"JAVA_OPTS", opts},
			{"OTEL_SERVICE_NAME", s.Name}}, append(g.otelEnv(), env...)...)
		// Services do not wait for each other: a variant switch restarts one,
		// and process-compose would abort its dependents.
		needs := []string{"otelcol"}
		for _, n := range s.Needs {
			if g.lab.Infra(n) != nil && !slices.Contains(needs, n) {
				needs = append(needs, n)
			}
		}
		services = append(services, localService{s, dedupe(env), needs})
	}
	return render(localTemplate, services), nil
}

// otelEnv is services/otel-java.env, which Kubernetes mounts as a ConfigMap.
func (g *generator) otelEnv() []envVar {
	var out []envVar
	for _, k := range slices.Sorted(maps.Keys(g.otel)) {
		out = append(out, envVar{k, g.otel[k]})
	}
	return out
}

// dedupe keeps the last value of each variable, where the first was.
func dedupe(env []envVar) []envVar {
	last := map[string]string{}
	for _, e := range env {
		last[e.Name] = e.Value
	}
	var out []envVar
	for _, e := range env {
		if v, ok := last[e.Name]; ok {
			out = append(out, envVar{e.Name, v})
			delete(last, e.Name)
		}
	}
	return out
}

type kubeService struct {
	*components.Service
	Env       []envVar
	Secrets   []envVar // variable, then secret/key
	JavaTool  string
	ListenAll string
	Image     string
}

func (g *generator) kube(s *components.Service) ([]byte, error) {
	env, err := g.env(s, kubeHost)
	if err != nil {
		return nil, err
	}
	opts := strings.TrimSpace(jvmOptions + " " + s.JavaOpts)
	if s.Framework.JavaAgent {
		opts = "-javaagent:" + agentJar + " " + opts
	}
	var secrets []envVar
	for _, k := range slices.Sorted(maps.Keys(s.Secrets)) {
		secrets = append(secrets, envVar{k, s.Secrets[k]})
	}
	return render(kubeTemplate, kubeService{Service: s, Env: env, Secrets: secrets, JavaTool: opts,
		ListenAll: s.Framework.ListenAllEnv, Image: "tracelab/" + s.Name + ":" + imageTag}), nil
}

var funcs = template.FuncMap{
	// q quotes a string for YAML (a JSON string is a YAML string).
	"q":          func(s string) string { b, _ := json.Marshal(s); return string(b) },
	"secretName": func(ref string) string { name, _, _ := strings.Cut(ref, "/"); return name },
	"secretKey":  func(ref string) string { _, key, _ := strings.Cut(ref, "/"); return key },
}

func render(t *template.Template, data any) []byte {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		panic(err) // the templates are fixed; a failure is a bug here
	}
	return b.Bytes()
}

var localTemplate = template.Must(template.New("local").Funcs(funcs).Parse(`# Generated by ` + "`make generate`" + ` (tracelab generate) from services/*/service.yaml;
# edit those, not this file. The lab's Java services as processes of the local
# runtime: tracelab passes this file to process-compose after
# process-compose.yaml, which defines the infrastructure they wait for.
# infra/local/run-java-service.sh adds the variant's settings and starts the JVM.
version: "0.5"

processes:
{{- range .}}
  {{.Name}}:
    command: exec "${LAB_ROOT}/infra/local/run-java-service.sh" {{.Name}}
    environment:
{{- range .Env}}
      - {{q (print .Name "=" .Value)}}
{{- end}}
    log_location: ${LAB_STATE}/logs/{{.Name}}.log
    # Each line as the service wrote it (infra/local/process-compose.yaml says why).
    log_configuration: {disable_json: true, no_metadata: true, no_color: true, fields_order: [message], flush_each_line: true}
    depends_on:
{{- range .Needs}}
      {{.}}: {condition: process_healthy}
{{- end}}
    readiness_probe:
      http_get: {host: 127.0.0.1, port: {{.Port}}, path: {{.Health}}}
      period_seconds: 1
      failure_threshold: 1500
    availability: {restart: "no"}
{{- end}}
`))

var kustomizationTemplate = template.Must(template.New("kustomization").Parse(`# Generated by ` + "`make generate`" + ` (tracelab generate): one manifest per
# services/*/service.yaml. k8s/base/kustomization.yaml includes this folder.
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
{{- range .}}
  - {{.}}.yaml
{{- end}}
`))

var kubeTemplate = template.Must(template.New("kube").Funcs(funcs).Parse(`# Generated by ` + "`make generate`" + ` (tracelab generate) from
# services/{{.Name}}/service.yaml and infra/local/ports.env; edit those, not
# this file. Scenario variants change its environment (tracelab's Kubernetes
# runtime runs kubectl set env and waits for the rollout).
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{.Name}}
  labels:
    app.kubernetes.io/name: {{.Name}}
    app.kubernetes.io/component: service
spec:
  replicas: 1
  selector:
    matchLabels:
      app.kubernetes.io/name: {{.Name}}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: {{.Name}}
        app.kubernetes.io/component: service
    spec:
      automountServiceAccountToken: false
      enableServiceLinks: false
      securityContext:
        runAsNonRoot: true
        runAsUser: 10001
        runAsGroup: 10001
        seccompProfile:
          type: RuntimeDefault
      containers:
        - name: {{.Name}}
          image: {{.Image}}
          imagePullPolicy: IfNotPresent
          ports:
            - name: http
              containerPort: {{.Port}}
          envFrom:
            # Every port of infra/local/ports.env, so the service's own port
            # setting ({{.PortKey}}) is the local runtime's.
            - configMapRef:
                name: lab-ports
            # services/otel-java.env, as on the local runtime.
            - configMapRef:
                name: otel-java
          env:
            - name: LAB_ENVIRONMENT
              valueFrom:
                configMapKeyRef:
                  name: lab-environment
                  key: LAB_ENVIRONMENT
            - name: LAB_VERSION
              valueFrom:
                configMapKeyRef:
                  name: lab-environment
                  key: LAB_VERSION
            # Set by tracelab for each variant, with the variant's settings;
            # LAB_SETTINGS names them, so the next variant can remove them.
            - name: LAB_VARIANT
              value: default
            - name: LAB_SETTINGS
              value: ""
            - name: OTEL_SERVICE_NAME
              value: {{.Name}}
            - name: OTEL_RESOURCE_ATTRIBUTES
              value: service.version=$(LAB_VERSION),deployment.environment.name=$(LAB_ENVIRONMENT),deployment.environment=$(LAB_ENVIRONMENT),lab.variant=$(LAB_VARIANT)
            - name: JAVA_TOOL_OPTIONS
              value: {{q .JavaTool}}
            - name: {{.ListenAll}}
              value: 0.0.0.0
{{- range .Env}}
            - name: {{.Name}}
              value: {{q .Value}}
{{- end}}
{{- range .Secrets}}
            - name: {{.Name}}
              valueFrom:
                secretKeyRef:
                  name: {{secretName .Value}}
                  key: {{secretKey .Value}}
{{- end}}
          startupProbe:
            httpGet: {path: {{.Health}}, port: http}
            periodSeconds: 2
            failureThreshold: 90
          readinessProbe:
            httpGet: {path: {{.Health}}, port: http}
            periodSeconds: 5
          livenessProbe:
            httpGet: {path: {{.Health}}, port: http}
            periodSeconds: 10
            failureThreshold: 6
          resources:
            requests: {cpu: 50m, memory: ` + memoryRequestMiB + `Mi}
            limits: {cpu: "1", memory: ` + memoryLimitMiB + `Mi}
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities:
              drop: [ALL]
          volumeMounts:
            - name: tmp
              mountPath: /tmp
      volumes:
        # The root filesystem is read-only; the JVM writes here.
        - name: tmp
          emptyDir:
            sizeLimit: 256Mi
---
apiVersion: v1
kind: Service
metadata:
  name: {{.Name}}
  labels:
    app.kubernetes.io/name: {{.Name}}
spec:
  selector:
    app.kubernetes.io/name: {{.Name}}
  ports:
    - name: http
      port: {{.Port}}
      targetPort: http
`))
