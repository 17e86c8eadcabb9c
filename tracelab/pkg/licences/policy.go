// Package licences is the lab's licence gate: it finds every third-party
// package the lab builds (Go modules, Maven artifacts, npm packages, the
// tools infra/local/tools.sh builds), reads each one's licence and judges
// it against infra/local/licences.yaml.
package licences

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// PolicyFile is the policy's place in the checkout.
const PolicyFile = "infra/local/licences.yaml"

// Policy is infra/local/licences.yaml.
type Policy struct {
	Deny        []string          `yaml:"deny"`
	DenyModules map[string]string `yaml:"deny_modules"`
	Permit      []string          `yaml:"permit"`
	Exceptions  []Exception       `yaml:"exceptions"`
}

// Exception accepts one package whatever its licence.
type Exception struct {
	Ecosystem string `yaml:"ecosystem"`
	Name      string `yaml:"name"`
	Licence   string `yaml:"licence"`
	Reason    string `yaml:"reason"`
}

// LoadPolicy reads and checks the policy file.
func LoadPolicy(path string) (*Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p Policy
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	// An empty deny list would pass everything: fail closed.
	if len(p.Deny) == 0 || len(p.Permit) == 0 {
		return nil, fmt.Errorf("%s: deny and permit must both list licence identifiers", path)
	}
	for i, e := range p.Exceptions {
		if e.Ecosystem == "" || e.Name == "" || strings.TrimSpace(e.Reason) == "" {
			return nil, fmt.Errorf("%s: exceptions[%d] needs ecosystem, name and reason", path, i)
		}
	}
	return &p, nil
}

// verdict is the gate's judgement of one package's licence.
type verdict int

const (
	permitted verdict = iota
	denied
	unknown // no licence found, or one the policy does not name
)

func hasPrefixFold(id string, prefixes []string) bool {
	for _, p := range prefixes {
		if len(id) >= len(p) && strings.EqualFold(id[:len(p)], p) {
			return true
		}
	}
	return false
}

// judge judges one licence identifier.
func (p *Policy) judge(id string) verdict {
	switch {
	case id == "":
		return unknown
	case hasPrefixFold(id, p.Deny):
		return denied
	case hasPrefixFold(id, p.Permit):
		return permitted
	}
	return unknown
}

// judgeAll judges a package that carries every licence in ids at once (Go
// modules: licence files of different parts of the code). One denied
// licence denies the package.
func (p *Policy) judgeAll(ids []string) verdict {
	if len(ids) == 0 {
		return unknown
	}
	worst := permitted
	for _, id := range ids {
		switch p.judge(id) {
		case denied:
			return denied
		case unknown:
			worst = unknown
		}
	}
	return worst
}

// judgeChoices judges a package offered under any one of several sets of
// licences: Maven's <licenses> list and npm's "A OR B" are alternatives.
func (p *Policy) judgeChoices(choices [][]string) verdict {
	best := unknown
	for _, all := range choices {
		switch p.judgeAll(all) {
		case permitted:
			return permitted
		case denied:
			best = denied
		}
	}
	return best
}

// deniedModule returns the licence of a Go module path on the deny list,
// or "". A module nested under a denied one (a major version suffix, a
// submodule) is denied too.
func (p *Policy) deniedModule(path string) string {
	for m, lic := range p.DenyModules {
		if path == m || strings.HasPrefix(path, m+"/") {
			return lic
		}
	}
	return ""
}

func (p *Policy) exception(ecosystem, name string) *Exception {
	for i, e := range p.Exceptions {
		if e.Ecosystem == ecosystem && e.Name == name {
			return &p.Exceptions[i]
		}
	}
	return nil
}

// describe names what was found, for a violation line.
func describe(ids []string) string {
	if len(ids) == 0 {
		return "no licence found"
	}
	ids = append([]string(nil), ids...)
	sort.Strings(ids)
	return strings.Join(dedupe(ids), ", ")
}

func dedupe(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}
