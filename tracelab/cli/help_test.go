package cli

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"tracelab/internal/repotest"
)

// --help prints the usage and does nothing else: `down --help` used to
// stop the lab. TRACELAB_ROOT names no checkout, so a command that went on
// would fail there (exit 2): exit 0 shows that none went that far.
func TestHelpDoesNothingElse(t *testing.T) {
	t.Setenv("TRACELAB_ROOT", t.TempDir())
	for _, cmd := range []string{"down", "status", "logs", "services", "up", "report", "generate", "convert"} {
		if code := Main([]string{cmd, "--help"}); code != exitOK {
			t.Errorf("%s --help: exit %d, want 0", cmd, code)
		}
	}
}

// Every command and subcommand answers --help on stdout with exit 0, in
// the lab's checkout and outside any, as a built binary: usage first, no
// line on stderr, and flags listed as "--name VALUE  what", never in Go's
// own flag dump ("-name string" over a tab-indented line).
func TestEveryCommandAnswersHelp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds tracelab")
	}
	bin, err := tracelabBinary()
	if err != nil {
		t.Fatal(err)
	}
	root := repotest.Root(t)
	outside := t.TempDir()
	var lines [][]string
	for _, name := range slices.Sorted(maps.Keys(commands)) {
		lines = append(lines, []string{name, "--help"})
		for _, sub := range subcommands(name) {
			lines = append(lines, []string{name, sub, "--help"})
		}
	}
	if len(lines) < 20 {
		t.Fatalf("only %d commands and subcommands: is the registry empty?", len(lines))
	}
	for _, dir := range []string{root, outside} {
		for _, args := range append(lines, []string{"--help"}, []string{"help"}) {
			cmd := exec.Command(bin, args...)
			cmd.Dir = dir
			cmd.Env = slices.DeleteFunc(os.Environ(), func(e string) bool { return strings.HasPrefix(e, "TRACELAB_ROOT=") })
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			what := fmt.Sprintf("in %s: tracelab %s", dir, strings.Join(args, " "))
			if err != nil {
				t.Errorf("%s: %v; stderr: %s", what, err, stderr.String())
				continue
			}
			if !strings.HasPrefix(stdout.String(), "usage:") || stderr.Len() > 0 {
				t.Errorf("%s: want usage on stdout and nothing on stderr; stdout %q, stderr %q", what, firstLine(stdout.String()), stderr.String())
			}
			if goFlagDump.MatchString(stdout.String()) {
				t.Errorf("%s: Go's flag dump instead of the lab's flag list:\n%s", what, stdout.String())
			}
		}
	}
}

var goFlagDump = regexp.MustCompile(`(?m)^  -\w[\w-]*( \w+)?\n    \t`)

// subcommands are the words after "tracelab NAME" in a command's usage.
func subcommands(name string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`tracelab `+regexp.QuoteMeta(name)+` ([a-z]+)`).FindAllStringSubmatch(commands[name].usage, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

// docs/cli.md quotes tracelab --help; this keeps the quote equal to it.
func TestCLIDocQuotesTheHelp(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repotest.Root(t), "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	const start, end = "<!-- tracelab --help: kept equal by cli/help_test.go -->\n```\n", "```\n"
	_, rest, ok := strings.Cut(string(doc), start)
	quoted, _, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("docs/cli.md has no block opened by %q", start)
	}
	var want bytes.Buffer
	usage(&want)
	if quoted != want.String() {
		t.Errorf("docs/cli.md's quote of tracelab --help differs from it; replace the block with:\n%s", want.String())
	}
}
