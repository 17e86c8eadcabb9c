package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"tracelab/corpus"
	"tracelab/internal/labtest"
	"tracelab/pkg/train"
)

// trainRoot is a checkout for train to run in with its own state folder:
// the real ports file, scenarios and corpus, linked, and .state empty.
func trainRoot(t *testing.T) string {
	t.Helper()
	real, _ := filepath.Abs("../..")
	root := t.TempDir()
	for _, rel := range []string{"scenarios", "services", "loadtests", "infra", "tracelab/testdata"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(real, rel), filepath.Join(root, rel)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func trainSet(t *testing.T, root string) *train.Set {
	t.Helper()
	all, err := loadScenarios(labtest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	set, err := train.LoadSet(root, all)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func runTrainBin(t *testing.T, root, stdin string, args ...string) (int, string, string) {
	t.Helper()
	bin, err := tracelabBinary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"train"}, args...)...)
	cmd.Env = append(os.Environ(), "TRACELAB_ROOT="+root, "USER=tester")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// A script plays a whole round through --json: the round is handed out
// (traces on disk, choice lists), a wrong answer is graded from stdin, the
// same round (same seed and level) is graded right from --answer FILE, and
// the learner's record holds both with the reference scores.
func TestTrainJSONPlaysAWholeRound(t *testing.T) {
	root := trainRoot(t)
	// The first seed whose round is a lab scenario with a pathology: every
	// level applies.
	set := trainSet(t, root)
	var seed int64
	for seed = 1; ; seed++ {
		if c, _ := set.Pick(seed); len(c.Fix) > 0 {
			break
		}
	}
	code, out, errOut := runTrainBin(t, root, "", "--json", "--seed", itoa(seed))
	if code != exitOK {
		t.Fatalf("handing out seed %d: exit %d, %s", seed, code, errOut)
	}
	var h Handout
	if err := json.Unmarshal([]byte(out), &h); err != nil {
		t.Fatalf("the handout is not JSON: %v\n%s", err, out)
	}
	if h.Round != train.RoundID(seed, 4) || len(h.Choices.Fix) == 0 || len(h.Choices.Service) == 0 {
		t.Fatalf("handout %+v", h)
	}
	if _, err := os.Stat(h.Traces); err != nil {
		t.Fatalf("the round's traces: %v", err)
	}
	// The handout says nothing of the answer.
	for _, leak := range []string{"nplus1", "eventloop", "kafka-batching", "antpath", "lab-", `"case"`} {
		if strings.Contains(out, leak) {
			t.Errorf("the handout holds %q:\n%s", leak, out)
		}
	}

	code, out, errOut = runTrainBin(t, root, `{"pathology":"none"}`, "--json", "--seed", itoa(seed))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var wrong Graded
	if code != exitFail || len(lines) != 2 || json.Unmarshal([]byte(lines[1]), &wrong) != nil {
		t.Fatalf("wrong answer: exit %d, %s %s", code, out, errOut)
	}
	if wrong.Grade.Score != 0 || len(wrong.Grade.Levels) != 4 || wrong.Key.Pathology == train.None || wrong.Random <= 0 || wrong.Analyzer <= 0 {
		t.Errorf("wrong answer graded %+v", wrong)
	}

	// The right answer, from the key the grade gave, in a file.
	k := wrong.Key
	op := ""
	for _, o := range h.Choices.Operation {
		if k.Operation != "" && strings.Contains(corpus.NormalizeOperation(o), corpus.NormalizeOperation(k.Operation)) {
			op = o
			break
		}
	}
	reply, _ := json.Marshal(map[string]string{"pathology": k.Pathology, "service": k.Service, "operation": op,
		"mechanism": mechanismFor(t, k.Pathology), "fix": k.Fix[0]})
	file := filepath.Join(t.TempDir(), "answer.json")
	os.WriteFile(file, reply, 0o644)
	code, out, errOut = runTrainBin(t, root, "", "--json", "--seed", itoa(seed), "--answer", file)
	var right Graded
	lines = strings.Split(strings.TrimSpace(out), "\n")
	if code != exitOK || json.Unmarshal([]byte(lines[len(lines)-1]), &right) != nil || !right.Grade.Perfect() {
		t.Fatalf("right answer %s: exit %d, %s %s", reply, code, out, errOut)
	}
	if right.Record.All.Rounds != 2 || right.Record.All.Score != 0.5 {
		t.Errorf("record after a wrong and a right round: %+v", right.Record.All)
	}
	rec, err := train.ReadRecord(filepath.Join(root, ".state/train/learners/tester.json"), "tester")
	if err != nil || len(rec.Rounds) != 2 || rec.Rounds[1].Random != wrong.Random {
		t.Errorf("record file: %+v, %v", rec, err)
	}

	// An answer that is not a reply is a usage error, not a grade.
	if code, _, errOut := runTrainBin(t, root, `{"pathology":"none","bogus":1}`, "--json", "--seed", itoa(seed)); code != exitUsage || !strings.Contains(errOut, "bogus") {
		t.Errorf("a bad answer: exit %d, %s", code, errOut)
	}
}

// mechanismFor is the mechanism that explains a pathology, written out
// here rather than read from the grader's table it checks.
func mechanismFor(t *testing.T, pathology string) string {
	m := map[string]string{
		"n-plus-one": train.Mechanisms[0], "chatty-db": train.Mechanisms[2], "event-loop-blocking": train.Mechanisms[3],
		"kafka-producer-contention": train.Mechanisms[4], "dispatch-overhead": train.Mechanisms[5],
	}[pathology]
	if m == "" {
		t.Fatalf("no mechanism for %s", pathology)
	}
	return m
}

// `make train` with no stack: the round's explorer is up and the first
// question asked within 10 s (the bound; it takes well under a
// second here), and the answers are graded.
func TestTrainStartsARoundInSecondsAndGradesIt(t *testing.T) {
	root := trainRoot(t)
	bin, err := tracelabBinary()
	if err != nil {
		t.Fatal(err)
	}
	// The seed of the largest recording, the slowest to start.
	set := trainSet(t, root)
	var seed, size int64
	for s := int64(1); s < 500; s++ {
		c, _ := set.Pick(s)
		if st, err := os.Stat(c.Traces); err == nil && st.Size() > size {
			seed, size = s, st.Size()
		}
	}
	cmd := exec.Command(bin, "train", "--seed", itoa(seed), "--level", "1")
	cmd.Env = append(os.Environ(), "TRACELAB_ROOT="+root, "USER=tester")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	var url string
	for sc.Scan() {
		line := sc.Text()
		if _, u, ok := strings.Cut(line, "explorer: "); ok {
			url = u
		}
		if strings.HasPrefix(line, "Which pathology") {
			break
		}
	}
	if took := time.Since(start); took > 10*time.Second || url == "" {
		t.Fatalf("the first question after %v; explorer %q", took, url)
	}
	stdin.Write([]byte("none\n"))
	stdin.Close()
	var rest strings.Builder
	for sc.Scan() {
		rest.WriteString(sc.Text() + "\n")
	}
	cmd.Wait()
	if !strings.Contains(rest.String(), "Score ") || !strings.Contains(rest.String(), "random guessing") {
		t.Errorf("no grade:\n%s", rest.String())
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
