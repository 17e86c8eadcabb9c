// Package components reads what the lab is made of: one description per
// service (services/<name>/service.yaml) and the list of infrastructure
// (infra/components.yaml). The generators (make generate), the image build,
// the runtimes' lists and the scenario validation all read them here, so
// each fact about a service is written once, in its own folder.
package components

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Framework is what a service runs on, and what follows from it: where it
// reports ready, how the OpenTelemetry instrumentation is attached, which jar
// the build writes and which variable makes it listen beyond loopback.
type Framework struct {
	Name string
	// Health is the readiness path unless a description names another.
	Health string
	// JavaAgent: the OpenTelemetry Java agent instruments the service;
	// otherwise the framework traces itself (Quarkus's extension).
	JavaAgent bool
	// Jar is the executable the build writes, relative to the service's folder.
	Jar string
	// ListenAllEnv makes the service listen on every interface (it binds
	// 127.0.0.1 by default, which a pod's probes and peers cannot reach).
	ListenAllEnv string
}

// Frameworks are the frameworks a description may name; each has an image
// recipe, services/images/<name>.Dockerfile.
var Frameworks = map[string]Framework{
	"spring":  {Name: "spring", Health: "/actuator/health", JavaAgent: true, Jar: "target/{name}.jar", ListenAllEnv: "SERVER_ADDRESS"},
	"quarkus": {Name: "quarkus", Health: "/q/health/ready", JavaAgent: false, Jar: "target/quarkus-app/quarkus-run.jar", ListenAllEnv: "QUARKUS_HTTP_HOST"},
}

// Setting is a variable a scenario's variant may set on a component: one of
// Values, or a whole number from Min to Max.
type Setting struct {
	Values  []string `yaml:"values"`
	Min     *int     `yaml:"min"`
	Max     *int     `yaml:"max"`
	Default string   `yaml:"default"`
	Meaning string   `yaml:"meaning"`
}

// Allowed explains why a value is not allowed, or returns nil.
func (s Setting) Allowed(value string) error {
	if s.Values != nil {
		if slices.Contains(s.Values, value) {
			return nil
		}
		return fmt.Errorf("must be one of %s, got %q", strings.Join(s.Values, ", "), value)
	}
	n, err := strconv.Atoi(value)
	if err != nil || n < *s.Min || n > *s.Max {
		return fmt.Errorf("must be a whole number from %d to %d, got %q", *s.Min, *s.Max, value)
	}
	return nil
}

// Service is one service's description, services/<Name>/service.yaml.
type Service struct {
	Name      string
	Port      int
	Framework Framework
	Health    string
	// Needs are the components it calls: infrastructure the local runtime
	// starts (and waits for) first, and other services.
	Needs []string
	// Env is fixed whatever the variant, on both runtimes. A value may name
	// a component's address: {name} is its host and port, {name:PORT_KEY}
	// its host and another port of infra/local/ports.env.
	Env map[string]string
	// Secrets are variables taken from a Kubernetes Secret, as
	// secret/key; the local runtime's PostgreSQL trusts loopback.
	Secrets map[string]string
	// JavaOpts are JVM options beyond the lab's common ones.
	JavaOpts string
	Settings map[string]Setting
}

// Jar is the service's executable, relative to its folder.
func (s *Service) Jar() string { return strings.ReplaceAll(s.Framework.Jar, "{name}", s.Name) }

// PortKey is the variable that holds the service's port (CATALOG_PORT).
func (s *Service) PortKey() string {
	return strings.ToUpper(strings.ReplaceAll(s.Name, "-", "_")) + "_PORT"
}

// Infra is one infrastructure component of infra/components.yaml. Its
// process and manifests are hand-written (infra/local/process-compose.yaml,
// k8s/base/data and k8s/base/telemetry).
type Infra struct {
	Name string
	// Always: every scenario needs it (the telemetry stack).
	Always   bool
	Settings map[string]Setting
}

// Lab is every component of the checkout.
type Lab struct {
	Services       []*Service // by name
	Infrastructure []*Infra   // in infra/components.yaml's order
}

// LauncherSettings are variables the local launcher reads for any Java
// service (infra/local/run-java-service.sh); Kubernetes gives the same
// budget with the container's CPU limit.
var LauncherSettings = map[string]string{
	"LAB_CPUS": "a taskset CPU list the local runtime pins the service to",
}

// DescriptionFile is where a service's description is, relative to root.
func DescriptionFile(name string) string {
	return filepath.Join("services", name, "service.yaml")
}

// InfraFile lists the infrastructure, relative to root.
const InfraFile = "infra/components.yaml"

// ServiceNames lists the services: every folder of services/ with a
// service.yaml (a shared library there has none).
func ServiceNames(root string) []string {
	return FoldersHolding(filepath.Join(root, "services"), "service.yaml")
}

// FoldersHolding names the folders of dir that hold file, sorted: how the
// lab lists its services and its scenarios, each a folder with its
// description.
func FoldersHolding(dir, file string) []string {
	matches, _ := filepath.Glob(filepath.Join(dir, "*", file))
	names := make([]string, 0, len(matches))
	for _, m := range matches {
		names = append(names, filepath.Base(filepath.Dir(m)))
	}
	slices.Sort(names)
	return names
}

// InfraNames lists the infrastructure components, and those every scenario
// needs.
func InfraNames(root string) (all, always []string, err error) {
	infra, err := loadInfra(root)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range infra {
		all = append(all, c.Name)
		if c.Always {
			always = append(always, c.Name)
		}
	}
	return all, always, nil
}

// Load reads and validates every description and the infrastructure list.
// Errors are one line naming the file.
func Load(root string) (*Lab, error) {
	infra, err := loadInfra(root)
	if err != nil {
		return nil, err
	}
	lab := &Lab{Infrastructure: infra}
	names := ServiceNames(root)
	if len(names) == 0 {
		return nil, fmt.Errorf("no service descriptions (services/*/service.yaml) under %s", root)
	}
	for _, name := range names {
		s, err := loadService(root, name)
		if err != nil {
			return nil, err
		}
		lab.Services = append(lab.Services, s)
	}
	return lab, lab.checkReferences()
}

// Service returns the description of a service, or nil.
func (l *Lab) Service(name string) *Service {
	for _, s := range l.Services {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Infra returns an infrastructure component, or nil.
func (l *Lab) Infra(name string) *Infra {
	for _, c := range l.Infrastructure {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// CheckSetting explains why a variant may not set variable=value on a
// component, or returns nil.
func (l *Lab) CheckSetting(component, variable, value string) error {
	var settings map[string]Setting
	var file string
	switch s, c := l.Service(component), l.Infra(component); {
	case s != nil:
		if _, ok := LauncherSettings[variable]; ok {
			return nil
		}
		settings, file = s.Settings, DescriptionFile(component)
	case c != nil:
		settings, file = c.Settings, InfraFile
	default:
		return fmt.Errorf("%q is neither a service (services/*/service.yaml) nor infrastructure (%s)", component, InfraFile)
	}
	st, ok := settings[variable]
	if !ok {
		return fmt.Errorf("%s is not a setting of %s (%s declares %s)", variable, component, file, orNone(settings))
	}
	if err := st.Allowed(value); err != nil {
		return fmt.Errorf("%s of %s %v (%s)", variable, component, err, file)
	}
	return nil
}

func orNone(settings map[string]Setting) string {
	if len(settings) == 0 {
		return "none"
	}
	return strings.Join(slices.Sorted(maps.Keys(settings)), ", ")
}

// The file formats. Decoding is strict: an unknown key is an error.
type serviceFile struct {
	Port      int                `yaml:"port"`
	Framework string             `yaml:"framework"`
	Health    string             `yaml:"health"`
	Needs     []string           `yaml:"needs"`
	Env       map[string]string  `yaml:"env"`
	Secrets   map[string]string  `yaml:"secrets"`
	JavaOpts  string             `yaml:"java_opts"`
	Settings  map[string]Setting `yaml:"settings"`
}

type infraEntry struct {
	Always   bool               `yaml:"always"`
	Settings map[string]Setting `yaml:"settings"`
}

var (
	namePattern     = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	variablePattern = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	secretPattern   = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]*/[A-Za-z0-9_.-]+$`)
	// Address is a reference to a component's address in an env value.
	Address = regexp.MustCompile(`\{([a-z][a-z0-9-]*)(?::([A-Z][A-Z0-9_]*))?\}`)
)

func decodeStrict(data []byte, out any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(out); err != nil && !errors.Is(err, io.EOF) {
		return errors.New(oneLine(err.Error()))
	}
	return nil
}

// oneLine folds yaml.v3's multi-line "unmarshal errors" into one line.
func oneLine(msg string) string {
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg = strings.Replace(msg, "unmarshal errors:\n", "", 1)
	fields := strings.Split(msg, "\n")
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	return strings.Join(fields, "; ")
}

func loadService(root, name string) (*Service, error) {
	rel := DescriptionFile(name)
	fail := func(format string, a ...any) error {
		return fmt.Errorf("%s: %s", rel, fmt.Sprintf(format, a...))
	}
	if !namePattern.MatchString(name) {
		return nil, fail("the folder name %q is not a service name (lower case letters, digits and dashes)", name)
	}
	data, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		return nil, err
	}
	var f serviceFile
	if err := decodeStrict(data, &f); err != nil {
		return nil, fail("%v", err)
	}
	fw, ok := Frameworks[f.Framework]
	if !ok {
		return nil, fail("framework %q: want spring or quarkus", f.Framework)
	}
	if f.Port < 1024 || f.Port > 65535 {
		return nil, fail("port %d: want a port from 1024 to 65535", f.Port)
	}
	s := &Service{Name: name, Port: f.Port, Framework: fw, Health: f.Health, Needs: f.Needs,
		Env: f.Env, Secrets: f.Secrets, JavaOpts: f.JavaOpts, Settings: f.Settings}
	if s.Health == "" {
		s.Health = fw.Health
	} else if !strings.HasPrefix(s.Health, "/") {
		return nil, fail("health %q: want a path starting with /", s.Health)
	}
	for _, n := range s.Needs {
		if n == name {
			return nil, fail("needs: a service does not need itself")
		}
	}
	for k, v := range s.Env {
		if !variablePattern.MatchString(k) {
			return nil, fail("env %s: not an environment variable name", k)
		}
		for _, m := range Address.FindAllStringSubmatch(v, -1) {
			if !slices.Contains(s.Needs, m[1]) {
				return nil, fail("env %s refers to %s, which needs does not list", k, m[0])
			}
		}
	}
	for k, v := range s.Secrets {
		if !variablePattern.MatchString(k) {
			return nil, fail("secrets %s: not an environment variable name", k)
		}
		if !secretPattern.MatchString(v) {
			return nil, fail("secrets %s: %q is not secret/key", k, v)
		}
		if _, dup := s.Env[k]; dup {
			return nil, fail("%s is in both env and secrets", k)
		}
	}
	if err := checkSettings(s.Settings); err != nil {
		return nil, fail("%v", err)
	}
	for k := range s.Settings {
		if _, fixed := s.Env[k]; fixed || k == s.PortKey() {
			return nil, fail("settings %s: a setting cannot also be fixed (env, or the service's port)", k)
		}
	}
	return s, nil
}

func checkSettings(settings map[string]Setting) error {
	for k, st := range settings {
		switch {
		case !variablePattern.MatchString(k):
			return fmt.Errorf("settings %s: not an environment variable name", k)
		case st.Values != nil && (st.Min != nil || st.Max != nil):
			return fmt.Errorf("settings %s: give values or min and max, not both", k)
		case st.Values == nil && (st.Min == nil || st.Max == nil):
			return fmt.Errorf("settings %s: give its allowed values, or min and max", k)
		case st.Values != nil && len(st.Values) == 0:
			return fmt.Errorf("settings %s: values is empty", k)
		case st.Min != nil && *st.Min > *st.Max:
			return fmt.Errorf("settings %s: min %d is above max %d", k, *st.Min, *st.Max)
		case st.Default == "":
			return fmt.Errorf("settings %s: no default", k)
		}
		if err := st.Allowed(st.Default); err != nil {
			return fmt.Errorf("settings %s: the default %v", k, err)
		}
	}
	return nil
}

func loadInfra(root string) ([]*Infra, error) {
	data, err := os.ReadFile(filepath.Join(root, InfraFile))
	if err != nil {
		return nil, err
	}
	// A mapping node keeps the file's order, the order things start in.
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %s", InfraFile, oneLine(err.Error()))
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: want a mapping of component names", InfraFile)
	}
	m := doc.Content[0].Content
	var out []*Infra
	for i := 0; i+1 < len(m); i += 2 {
		name := m[i].Value
		if !namePattern.MatchString(name) {
			return nil, fmt.Errorf("%s: line %d: %q is not a component name", InfraFile, m[i].Line, name)
		}
		raw, _ := yaml.Marshal(m[i+1])
		var e infraEntry
		if err := decodeStrict(raw, &e); err != nil {
			return nil, fmt.Errorf("%s: %s: %v", InfraFile, name, err)
		}
		if err := checkSettings(e.Settings); err != nil {
			return nil, fmt.Errorf("%s: %s: %v", InfraFile, name, err)
		}
		out = append(out, &Infra{Name: name, Always: e.Always, Settings: e.Settings})
	}
	return out, nil
}

// checkReferences: names are unique across services and infrastructure,
// ports are distinct, and every need is a component.
func (l *Lab) checkReferences() error {
	ports := map[int]string{}
	for _, s := range l.Services {
		if l.Infra(s.Name) != nil {
			return fmt.Errorf("%s: %s is also infrastructure (%s)", DescriptionFile(s.Name), s.Name, InfraFile)
		}
		if other, dup := ports[s.Port]; dup {
			return fmt.Errorf("%s: port %d is %s's too", DescriptionFile(s.Name), s.Port, other)
		}
		ports[s.Port] = s.Name
		for _, n := range s.Needs {
			if l.Service(n) == nil && l.Infra(n) == nil {
				return fmt.Errorf("%s: needs %s, which is neither a service nor infrastructure (%s)", DescriptionFile(s.Name), n, InfraFile)
			}
		}
	}
	return nil
}
