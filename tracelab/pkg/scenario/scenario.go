// Package scenario loads and validates scenarios/<name>/scenario.yaml, the
// contract between a scenario's author and the runner, and keeps the
// numbers of its reference runs (baseline.json). Package run runs it and
// package judge judges the run.
package scenario

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"gopkg.in/yaml.v3"

	"tracelab/pkg/components"
	"tracelab/pkg/lab"
	"tracelab/pkg/load"
)

//go:embed schema.json
var schemaJSON []byte

// Settings are startup settings per service: service -> VARIABLE -> value.
type Settings = lab.Settings

// Scenario is one scenario.yaml. Field meanings are in schema.json and the README.
type Scenario struct {
	Name         string             `json:"name"`
	Title        string             `json:"title"`
	CaseStudy    string             `json:"case_study"`
	Services     []string           `json:"services"`
	Entrypoint   Entrypoint         `json:"entrypoint"`
	Load         LoadSpec           `json:"load"`
	Variants     map[string]Variant `json:"variants"`
	Expectations Expectations       `json:"expectations"`

	Dir string `json:"-"` // scenarios/<name>
}

type Entrypoint struct {
	Service string `json:"service"`
	Method  string `json:"method"`
	Path    string `json:"path"`
}

// Matches tells whether a request path or route is the entrypoint's; a path
// ending in * is a prefix, for loads spread over many routes.
func (ep Entrypoint) Matches(path string) bool {
	if prefix, ok := strings.CutSuffix(ep.Path, "*"); ok {
		return strings.HasPrefix(path, prefix)
	}
	return path == ep.Path
}

type LoadSpec struct {
	// Definition is the load's file, loadtests/<name>.yaml, relative to
	// the checkout; Def is that file, read.
	Definition string             `json:"definition"`
	Profiles   map[string]Profile `json:"profiles"`
	Def        *load.Definition   `json:"-"`
}

type Profile struct {
	Warmup   int               `json:"warmup"`
	Env      map[string]string `json:"env"`
	Settings Settings          `json:"settings"`
	// Variants is what `--variant both` (the default) runs with this
	// profile; empty means baseline and fixed.
	Variants []string  `json:"variants"`
	Capacity *Capacity `json:"capacity,omitempty"`
}

// Capacity measures, before the variants run, what each of Variants serves
// flat out on this machine, now: a closed-model probe (Env: VUS and
// DURATION) per variant, with its CPU. A capacity does not ride on where a
// queue happens to sit, as latency past the knee does.
//
// With RateFrom set, it also sizes an open-model load: every variant gets
// RATE = RateFactor x RateFrom's capacity. A fixed RATE suits one machine
// only: for a CPU-bound pathology it saturates a slow machine and idles a
// fast one.
//
// With Settle set ("240s"), each probe first runs its load until the
// entrypoint's JIT compiler has gone quiet, for at most that long: a JVM
// still compiling measures its compiler, not its steady state.
type Capacity struct {
	Variants   []string          `json:"variants"`
	Env        map[string]string `json:"env"`
	RateFrom   string            `json:"rate_from,omitempty"`
	RateFactor float64           `json:"rate_factor,omitempty"`
	Settle     string            `json:"settle,omitempty"`
}

// SettleFor is the longest a probe waits for the JIT; 0 when it does not.
// The schema has checked the form.
func (c *Capacity) SettleFor() time.Duration {
	d, _ := time.ParseDuration(c.Settle)
	return d
}

type Variant struct {
	Description string   `json:"description"`
	Settings    Settings `json:"settings"`
	// Load overrides load parameters of every profile for this variant: the
	// load's shape (SHAPE: bursty) or a multiple of its rate, while the
	// profile keeps deciding the size.
	Load *VariantLoad `json:"load"`
}

type VariantLoad struct {
	Env map[string]string `json:"env"`
}

type Expectations struct {
	Variants           map[string]VariantExpectation `json:"variants"`
	StructureTolerance float64                       `json:"structure_tolerance"`
	Ratios             []Ratio                       `json:"ratios"`
	Objective          *Objective                    `json:"objective"`
	Delivery           *Delivery                     `json:"delivery"`
}

// Objective is the scenario's service-level objective: metric <= Max.
// A variant expectation says whether a variant must meet or break it.
type Objective struct {
	Metric string  `json:"metric"`
	Max    float64 `json:"max"`
}

// Delivery names where the events the entrypoint accepted are counted at
// the end of the pipeline: GET Path on Service answers JSON whose Field is
// the count. Every variant is then checked for loss.
type Delivery struct {
	Service string `json:"service"`
	Path    string `json:"path"`
	Field   string `json:"field"`
}

type VariantExpectation struct {
	Present      []FindingExpectation `json:"present"`
	Absent       []string             `json:"absent"`
	Objective    string               `json:"objective"`      // "met", "broken" or "" (not judged)
	MaxErrorRate float64              `json:"max_error_rate"` // failed requests allowed, 0..1; default 0
	MinErrorRate float64              `json:"min_error_rate"` // failed requests required, 0..1: a variant that reproduces errors
}

type FindingExpectation struct {
	Detector               string  `json:"detector"`
	Service                string  `json:"service"`
	MinCallsPerTrace       float64 `json:"min_calls_per_trace"`
	MinShareOfParent       float64 `json:"min_share_of_parent"`
	MinShareOfCriticalPath float64 `json:"min_share_of_critical_path"`
}

// Ratio requires metric(numerator) / metric(denominator) >= Min.
type Ratio struct {
	Metric      string  `json:"metric"`
	Numerator   string  `json:"numerator"`
	Denominator string  `json:"denominator"`
	Min         float64 `json:"min"`
	// MinOn replaces Min on a runtime (kind, eks), where the whole stack
	// shares the node's CPUs with Kubernetes itself, or in a profile
	// (smoke), whose few requests a busy machine moves more; where several
	// entries apply, the lowest. The scenario file says where each value
	// comes from.
	MinOn map[string]float64 `json:"min_on,omitempty"`
}

// JudgedOn returns the scenario as a run on that runtime with that profile
// is judged: each ratio's minimum is the lowest of its min_on entries for
// either, if it has any.
// NamedProfile is a load profile resolved once from its name: the name
// for what is printed and recorded, the profile for what is run.
type NamedProfile struct {
	Name string
	Profile
}

// ProfileNamed resolves a profile by name; an unknown name is an error
// that lists the scenario's profiles.
func (s *Scenario) ProfileNamed(name string) (NamedProfile, error) {
	p, ok := s.Load.Profiles[name]
	if !ok {
		return NamedProfile{}, fmt.Errorf("scenario %s has no profile %q; profiles: %s", s.Name, name, strings.Join(slices.Sorted(maps.Keys(s.Load.Profiles)), ", "))
	}
	return NamedProfile{name, p}, nil
}

func (s *Scenario) JudgedOn(runtime, profile string) *Scenario {
	out := *s
	out.Expectations.Ratios = slices.Clone(s.Expectations.Ratios)
	for i, r := range out.Expectations.Ratios {
		for _, key := range []string{runtime, profile} {
			if m, ok := r.MinOn[key]; ok && m < out.Expectations.Ratios[i].Min {
				out.Expectations.Ratios[i].Min = m
			}
		}
	}
	return &out
}

// List returns the names of the scenarios under the checkout's scenarios/.
func List(c *lab.Checkout) []string {
	return components.FoldersHolding(filepath.Join(c.Root, "scenarios"), "scenario.yaml")
}

// ErrUnknown is returned by Load for a scenario that does not exist.
var ErrUnknown = errors.New("unknown scenario")

// Load reads and validates scenarios/<name>/scenario.yaml. Errors name the
// file and the offending field.
func Load(c *lab.Checkout, name string) (*Scenario, error) {
	root := c.Root
	dir := filepath.Join(root, "scenarios", name)
	path := filepath.Join(dir, "scenario.yaml")
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w %q; known scenarios: %s", ErrUnknown, name, strings.Join(List(c), ", "))
	}
	if err != nil {
		return nil, err
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", relPath(root, path), err)
	}
	if s.Name != name {
		return nil, fmt.Errorf("%s: field name: %q does not match its folder %q", relPath(root, path), s.Name, name)
	}
	def, err := os.ReadFile(filepath.Join(root, s.Load.Definition))
	if err == nil {
		s.Load.Def, err = load.ParseDefinition(s.Load.Definition, def)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: field load.definition: %v", relPath(root, path), err)
	}
	if err := s.checkLoadParams(); err != nil {
		return nil, fmt.Errorf("%s: %w", relPath(root, path), err)
	}
	if err := s.checkComponents(c); err != nil {
		return nil, fmt.Errorf("%s: %w", relPath(root, path), err)
	}
	s.Dir = dir
	return s, nil
}

// checkLoadParams: every load parameter the scenario sets is one its load
// definition takes, so that a misspelt name fails here, not after a run.
func (s *Scenario) checkLoadParams() error {
	check := func(field string, env map[string]string) error {
		if err := s.Load.Def.CheckParams(env); err != nil {
			return fmt.Errorf("field %s: %v", field, err)
		}
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(s.Load.Profiles)) {
		p := s.Load.Profiles[name]
		if err := check("load.profiles."+name+".env", p.Env); err != nil {
			return err
		}
		if p.Capacity != nil {
			if err := check("load.profiles."+name+".capacity.env", p.Capacity.Env); err != nil {
				return err
			}
		}
	}
	for _, name := range s.VariantNames() {
		if v := s.Variants[name]; v.Load != nil {
			if err := check("variants."+name+".load.env", v.Load.Env); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkComponents: every service the scenario names is a component of the
// lab, and every setting it changes is one its component's description
// declares, with an allowed value.
func (s *Scenario) checkComponents(c *lab.Checkout) error {
	lab, err := c.Components()
	if err != nil {
		return err
	}
	for _, svc := range s.Services {
		if lab.Service(svc) == nil && lab.Infra(svc) == nil {
			return fmt.Errorf("field services: %q is neither a service (services/*/service.yaml) nor infrastructure (%s)", svc, components.InfraFile)
		}
	}
	check := func(field string, st Settings) error {
		for _, c := range slices.Sorted(maps.Keys(st)) {
			for _, v := range slices.Sorted(maps.Keys(st[c])) {
				if err := lab.CheckSetting(c, v, st[c][v]); err != nil {
					return fmt.Errorf("field %s.%s.%s: %v", field, c, v, err)
				}
			}
		}
		return nil
	}
	for _, p := range slices.Sorted(maps.Keys(s.Load.Profiles)) {
		if err := check("load.profiles."+p+".settings", s.Load.Profiles[p].Settings); err != nil {
			return err
		}
	}
	for _, v := range slices.Sorted(maps.Keys(s.Variants)) {
		if err := check("variants."+v+".settings", s.Variants[v].Settings); err != nil {
			return err
		}
	}
	return nil
}

// Parse validates a scenario document against the schema, then checks the
// references between its parts.
func Parse(data []byte) (*Scenario, error) {
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not valid YAML: %s", firstLine(err.Error()))
	}
	// Round-trip through JSON so the schema sees JSON types only.
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("not a mapping of plain values: %v", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	if err := compiledSchema().Validate(inst); err != nil {
		return nil, schemaError(err)
	}
	var s Scenario
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return &s, s.checkReferences()
}

func (s *Scenario) checkReferences() error {
	known := map[string]bool{}
	for _, svc := range s.Services {
		known[svc] = true
	}
	if !known[s.Entrypoint.Service] {
		return fmt.Errorf("field entrypoint.service: %q is not in services", s.Entrypoint.Service)
	}
	checkSettings := func(field string, st Settings) error {
		for svc := range st {
			if !known[svc] {
				return fmt.Errorf("field %s.%s: %q is not in services", field, svc, svc)
			}
		}
		return nil
	}
	for name, p := range s.Load.Profiles {
		if err := checkSettings("load.profiles."+name+".settings", p.Settings); err != nil {
			return err
		}
		if c := p.Capacity; c != nil {
			for _, v := range c.Variants {
				if _, ok := s.Variants[v]; !ok {
					return fmt.Errorf("field load.profiles.%s.capacity.variants: no such variant %q", name, v)
				}
			}
			if c.RateFrom != "" && !slices.Contains(c.Variants, c.RateFrom) {
				return fmt.Errorf("field load.profiles.%s.capacity.rate_from: %q is not one of its variants", name, c.RateFrom)
			}
		}
	}
	for name, v := range s.Variants {
		if err := checkSettings("variants."+name+".settings", v.Settings); err != nil {
			return err
		}
	}
	for name, p := range s.Load.Profiles {
		for i, v := range p.Variants {
			if _, ok := s.Variants[v]; !ok {
				return fmt.Errorf("field load.profiles.%s.variants[%d]: no such variant %q", name, i, v)
			}
		}
	}
	for name, e := range s.Expectations.Variants {
		if _, ok := s.Variants[name]; !ok {
			return fmt.Errorf("field expectations.variants.%s: no such variant", name)
		}
		if e.Objective != "" && s.Expectations.Objective == nil {
			return fmt.Errorf("field expectations.variants.%s.objective: expectations.objective is not set", name)
		}
		if e.MaxErrorRate > 0 && e.MinErrorRate > e.MaxErrorRate {
			return fmt.Errorf("field expectations.variants.%s.min_error_rate: %g is above max_error_rate %g", name, e.MinErrorRate, e.MaxErrorRate)
		}
	}
	if d := s.Expectations.Delivery; d != nil && !known[d.Service] {
		return fmt.Errorf("field expectations.delivery.service: %q is not in services", d.Service)
	}
	for i, r := range s.Expectations.Ratios {
		for _, v := range []string{r.Numerator, r.Denominator} {
			if _, ok := s.Variants[v]; !ok {
				return fmt.Errorf("field expectations.ratios[%d]: no such variant %q", i, v)
			}
		}
	}
	return nil
}

// VariantNames returns baseline and fixed first, then the others sorted.
func (s *Scenario) VariantNames() []string {
	rest := slices.DeleteFunc(slices.Sorted(maps.Keys(s.Variants)), func(n string) bool { return n == "baseline" || n == "fixed" })
	return append([]string{"baseline", "fixed"}, rest...)
}

// DefaultVariants is what `--variant both` runs with a profile.
func (s *Scenario) DefaultVariants(profile string) []string {
	if vs := s.Load.Profiles[profile].Variants; len(vs) > 0 {
		return vs
	}
	return []string{"baseline", "fixed"}
}

// Selected is what `--variant choice` runs with a profile: "both" is
// DefaultVariants, "all" every variant (VariantNames), anything else the one
// variant it names.
func (s *Scenario) Selected(choice, profile string) []string {
	switch choice {
	case "both":
		return s.DefaultVariants(profile)
	case "all":
		return s.VariantNames()
	}
	return []string{choice}
}

// LoadEnvFor is the load parameters of a variant in a profile: the
// profile's, with the variant's load overrides on top.
func (s *Scenario) LoadEnvFor(profile, variant string) map[string]string {
	out := map[string]string{}
	for k, v := range s.Load.Profiles[profile].Env {
		out[k] = v
	}
	if l := s.Variants[variant].Load; l != nil {
		for k, v := range l.Env {
			out[k] = v
		}
	}
	return out
}

// SettingsFor merges the profile's settings under the variant's: a variant
// decides the pathology, a profile only its size.
func (s *Scenario) SettingsFor(profile, variant string) Settings {
	out := Settings{}
	for _, src := range []Settings{s.Load.Profiles[profile].Settings, s.Variants[variant].Settings} {
		for svc, vars := range src {
			if out[svc] == nil {
				out[svc] = map[string]string{}
			}
			for k, v := range vars {
				out[svc][k] = v
			}
		}
	}
	return out
}

var compiled *jsonschema.Schema

func compiledSchema() *jsonschema.Schema {
	if compiled == nil {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
		if err != nil {
			panic("embedded schema: " + err.Error())
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("scenario.schema.json", doc); err != nil {
			panic("embedded schema: " + err.Error())
		}
		compiled = c.MustCompile("scenario.schema.json")
	}
	return compiled
}

// schemaError turns the validator's tree of causes into one line that names
// the deepest offending field, e.g. "field variants.fixed.settings: ...".
func schemaError(err error) error {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	leaf := ve
	for len(leaf.Causes) > 0 {
		leaf = leaf.Causes[0]
	}
	field := strings.Join(leaf.InstanceLocation, ".")
	if field == "" {
		field = "(top level)"
	}
	msg := leaf.ErrorKind.LocalizedString(message.NewPrinter(language.English))
	return fmt.Errorf("field %s: %s", field, msg)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func relPath(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return r
	}
	return path
}
