package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"time"
)

// Played is one graded offline round in a learner's record, with the two
// reference scores on the same round: random guessing's expectation and
// the analyzer's top finding graded as an answer.
type Played struct {
	Round     string    `json:"round"`
	At        time.Time `json:"at"`
	Case      string    `json:"case"`
	Stack     string    `json:"stack"`
	Pathology string    `json:"pathology"`
	Reply     Reply     `json:"reply"`
	Marks     Marks     `json:"grade"`
	Random    float64   `json:"random"`
	Analyzer  float64   `json:"analyzer"`
}

// Record is a learner's rounds, kept as .state/train/learners/<name>.json.
type Record struct {
	Learner string   `json:"learner"`
	Rounds  []Played `json:"rounds"`
}

var learnerRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// RecordPath is where a learner's record is kept under the state folder.
func RecordPath(state, learner string) (string, error) {
	if !learnerRE.MatchString(learner) || learner[0] == '.' {
		return "", fmt.Errorf("learner %q: use letters, digits, '.', '_' and '-'", learner)
	}
	return filepath.Join(state, "train", "learners", learner+".json"), nil
}

// ReadRecord reads a record; a missing file is an empty one.
func ReadRecord(path, learner string) (*Record, error) {
	rec := &Record{Learner: learner}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return rec, nil
	}
	if err == nil {
		err = json.Unmarshal(data, rec)
	}
	if err != nil {
		return nil, fmt.Errorf("learner record %s: %v", path, err)
	}
	return rec, nil
}

// Save writes the record.
func (rec *Record) Save(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, _ := json.MarshalIndent(rec, "", "  ")
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// Tally is the mean scores of some rounds.
type Tally struct {
	Rounds   int     `json:"rounds"`
	Detected float64 `json:"detect_accuracy"` // share of rounds whose detect level was fully right
	Score    float64 `json:"score"`
	Random   float64 `json:"random"`
	Analyzer float64 `json:"analyzer"`
}

func (t *Tally) add(p Played) {
	t.Rounds++
	if len(p.Marks.Levels) > 0 && p.Marks.Levels[0].Score == 1 {
		t.Detected++
	}
	t.Score += p.Marks.Score
	t.Random += p.Random
	t.Analyzer += p.Analyzer
}

func (t *Tally) mean() {
	if n := float64(t.Rounds); n > 0 {
		t.Detected /= n
		t.Score /= n
		t.Random /= n
		t.Analyzer /= n
	}
}

// Summary is a record's tallies: all rounds, and per pathology (None for
// the clean rounds).
type Summary struct {
	All          Tally            `json:"all"`
	PerPathology map[string]Tally `json:"per_pathology"`
}

// Summarize tallies the rounds.
func Summarize(rounds []Played) Summary {
	s := Summary{PerPathology: map[string]Tally{}}
	for _, p := range rounds {
		s.All.add(p)
		t := s.PerPathology[p.Pathology]
		t.add(p)
		s.PerPathology[p.Pathology] = t
	}
	s.All.mean()
	for k, t := range s.PerPathology {
		t.mean()
		s.PerPathology[k] = t
	}
	return s
}

// Print writes the summary as a table: the learner's score beside random
// guessing's and the analyzer's on the same rounds.
func (s Summary) Print(w io.Writer) {
	keys := make([]string, 0, len(s.PerPathology))
	for k := range s.PerPathology {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(w, "%-27s %6s %8s %7s %7s %9s\n", "pathology", "rounds", "detected", "score", "random", "analyzer")
	line := func(name string, t Tally) {
		fmt.Fprintf(w, "%-27s %6d %7.0f%% %6.0f%% %6.0f%% %8.0f%%\n", name, t.Rounds, 100*t.Detected, 100*t.Score, 100*t.Random, 100*t.Analyzer)
	}
	for _, k := range keys {
		line(k, s.PerPathology[k])
	}
	line("all", s.All)
}
