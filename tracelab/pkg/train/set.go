package train

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"tracelab/corpus"
	"tracelab/pkg/scenario"
)

// CorpusDir is where the labelled recordings are, from the checkout's root.
const CorpusDir = "tracelab/testdata/corpus"

// LabStack is the corpus stack of recordings of the lab's own scenario
// runs (cases lab-<scenario>-<variant>[-<load>]).
const LabStack = "lab"

// Case is one labelled recording a round can be drawn from.
type Case struct {
	Name      string          `json:"case"`  // the corpus folder
	Stack     string          `json:"stack"` // the application stack (corpus labels.yaml)
	Traces    string          `json:"-"`     // its OTLP JSON file
	Pathology string          `json:"pathology"`
	Labels    []corpus.Label  `json:"-"` // every labelled finding: all of Pathology
	Scenario  string          `json:"scenario,omitempty"`
	Variant   string          `json:"variant,omitempty"`
	Fix       []string        `json:"fix,omitempty"` // VAR=value settings of the fixed variant that remove it
	Settings  map[string]bool `json:"-"`             // every VAR=value of the scenario's variants
}

// Lab says whether the lab's own services recorded the case.
func (c *Case) Lab() bool { return c.Stack == LabStack }

// Set is every round there is: the corpus cases that label one pathology
// or none, in name order, so that a seed always draws the same round.
type Set struct {
	Cases []*Case
	// Skipped names the cases left out and why.
	Skipped map[string]string
	// Fixes is the fix level's choice list: every VAR=value setting of
	// every scenario's variants, the dead ends among them.
	Fixes []string
}

// LoadSet reads the corpus under the checkout root and the scenarios whose
// runs the lab-* cases recorded.
func LoadSet(root string, scenarios []*scenario.Scenario) (*Set, error) {
	cases, err := corpus.Load(filepath.Join(root, CorpusDir))
	if err != nil {
		return nil, err
	}
	set := &Set{Skipped: map[string]string{}}
	fixes := map[string]bool{}
	for _, s := range scenarios {
		for _, v := range s.Variants {
			for _, vars := range v.Settings {
				for k, val := range vars {
					fixes[k+"="+val] = true
				}
			}
		}
	}
	set.Fixes = slices.Sorted(maps.Keys(fixes))
	for _, c := range cases {
		tc := &Case{Name: c.Name, Stack: c.Labels.Stack, Traces: c.TracesPath(), Pathology: None, Labels: c.Labels.Findings}
		for _, l := range c.Labels.Findings {
			if tc.Pathology != None && l.Detector != tc.Pathology {
				// A round asks for one pathology; a recording with two
				// kinds would make either answer half right.
				set.Skipped[c.Name] = "labels more than one pathology (" + tc.Pathology + ", " + l.Detector + ")"
			}
			tc.Pathology = l.Detector
		}
		if _, skip := set.Skipped[c.Name]; skip {
			continue
		}
		if tc.Lab() {
			if err := tc.fromScenario(scenarios); err != nil {
				return nil, err
			}
		}
		set.Cases = append(set.Cases, tc)
	}
	sort.Slice(set.Cases, func(i, j int) bool { return set.Cases[i].Name < set.Cases[j].Name })
	if len(set.Cases) == 0 {
		return nil, fmt.Errorf("no labelled case under %s", filepath.Join(root, CorpusDir))
	}
	return set, nil
}

// fromScenario names the scenario and variant a lab case recorded, from
// its folder's name, and the fix: the settings of the scenario's fixed
// variant that differ from the recorded variant's.
func (c *Case) fromScenario(scenarios []*scenario.Scenario) error {
	var sc *scenario.Scenario
	for _, s := range scenarios { // the longest name: chatty-db before a "chatty"
		if strings.HasPrefix(c.Name, "lab-"+s.Name+"-") && (sc == nil || len(s.Name) > len(sc.Name)) {
			sc = s
		}
	}
	if sc == nil {
		return fmt.Errorf("corpus case %s: stack lab, but no scenario is named after it", c.Name)
	}
	rest := strings.TrimPrefix(c.Name, "lab-"+sc.Name+"-")
	for v := range sc.Variants { // the variant, maybe followed by its load: fixed-paced
		if (rest == v || strings.HasPrefix(rest, v+"-")) && len(v) > len(c.Variant) {
			c.Variant = v
		}
	}
	if c.Variant == "" {
		return fmt.Errorf("corpus case %s: scenario %s has no variant it names", c.Name, sc.Name)
	}
	c.Scenario = sc.Name
	c.Settings = map[string]bool{}
	for _, v := range sc.Variants {
		for _, vars := range v.Settings {
			for k, val := range vars {
				c.Settings[k+"="+val] = true
			}
		}
	}
	if c.Pathology == None {
		return nil
	}
	fixed, ok := sc.Variants["fixed"]
	if !ok {
		return nil
	}
	own := sc.Variants[c.Variant].Settings
	for svc, vars := range fixed.Settings {
		for k, val := range vars {
			if own[svc][k] != val {
				c.Fix = append(c.Fix, k+"="+val)
			}
		}
	}
	sort.Strings(c.Fix)
	return nil
}

// Counts are the set's make-up: rounds per pathology (None for clean),
// and how many were recorded from applications the lab did not write.
func (s *Set) Counts() (perPathology map[string]int, notLab int) {
	perPathology = map[string]int{}
	for _, c := range s.Cases {
		perPathology[c.Pathology]++
		if !c.Lab() && c.Stack != "generated" {
			notLab++
		}
	}
	return perPathology, notLab
}
