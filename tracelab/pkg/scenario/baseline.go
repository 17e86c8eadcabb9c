package scenario

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"time"

	"tracelab/pkg/result"
)

// Baseline is scenarios/<name>/baseline.json: the numbers recorded by a
// reference run of each profile, against which later runs are judged.
type Baseline struct {
	Scenario string                      `json:"scenario"`
	Profiles map[string]*ProfileBaseline `json:"profiles"`
}

type ProfileBaseline struct {
	RecordedAt time.Time                  `json:"recorded_at"`
	Machine    string                     `json:"machine"`
	Command    string                     `json:"command"`
	Variants   map[string]RecordedVariant `json:"variants"`
}

type RecordedVariant struct {
	Metrics  map[string]float64 `json:"metrics"`
	Findings []string           `json:"findings"` // detector ids, sorted
}

// LoadBaseline reads dir/baseline.json; a missing file is an empty baseline.
func LoadBaseline(dir string) (*Baseline, error) {
	b := &Baseline{Scenario: filepath.Base(dir), Profiles: map[string]*ProfileBaseline{}}
	data, err := os.ReadFile(filepath.Join(dir, "baseline.json"))
	if errors.Is(err, os.ErrNotExist) {
		return b, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, b); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(dir, "baseline.json"), err)
	}
	if b.Profiles == nil {
		b.Profiles = map[string]*ProfileBaseline{}
	}
	return b, nil
}

// Lookup returns the recorded numbers of a variant in a profile.
func (b *Baseline) Lookup(profile, variant string) (RecordedVariant, bool) {
	p, ok := b.Profiles[profile]
	if !ok {
		return RecordedVariant{}, false
	}
	v, ok := p.Variants[variant]
	return v, ok
}

// Record replaces the profile's entries for the variants of res.
func (b *Baseline) Record(profile string, res *result.Result) {
	p := b.Profiles[profile]
	if p == nil {
		p = &ProfileBaseline{Variants: map[string]RecordedVariant{}}
		b.Profiles[profile] = p
	}
	p.RecordedAt = res.StartedAt
	p.Machine = fmt.Sprintf("%s/%s, %d CPUs", goruntime.GOOS, goruntime.GOARCH, goruntime.NumCPU())
	p.Command = fmt.Sprintf("tracelab scenario run %s --profile %s --record", res.Scenario, profile)
	for _, v := range res.Variants {
		p.Variants[v.Variant] = RecordedVariant{Metrics: v.Metrics, Findings: result.FindingIDs(v.Analysis.Findings)}
	}
}

func (b *Baseline) Save(dir string) error {
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "baseline.json"), append(data, '\n'), 0o644)
}
