// Package cli holds one file per tracelab command, thin over pkg/: each
// declares its flags, parses them with parseFlags, calls pkg/ and returns
// the process exit code.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"tracelab/pkg/sarif"
	"tracelab/pkg/source"
)

// Exit codes shared by every command.
const (
	exitOK      = 0
	exitFail    = 1 // the command ran and an expectation did not hold
	exitUsage   = 2 // bad input: flags, files, scenario definitions
	exitRuntime = 3 // the environment failed: a tool, a port, a service
)

type command struct {
	summary string
	run     func(args []string) int
	// internal: one of the lab's own tools (its build, tests, benchmarks),
	// listed apart from what a user runs.
	internal bool
	// usage, for a command with subcommands: Main prints it for a --help
	// anywhere in the arguments, so no subcommand has to answer it itself.
	usage string
}

var commands = map[string]command{}

// register adds a command a user runs.
func register(name, summary string, run func([]string) int) {
	commands[name] = command{summary: summary, run: run}
}

// registerInternal adds one of the lab's own tools.
func registerInternal(name, summary string, run func([]string) int) {
	commands[name] = command{summary: summary, run: run, internal: true}
}

// withSubcommands gives a registered command with subcommands its usage.
func withSubcommands(name, usage string) {
	c := commands[name]
	c.usage = usage
	commands[name] = c
}

// Main dispatches to a command.
func Main(args []string) int {
	if len(args) == 0 || isHelp(args[0]) || args[0] == "help" {
		usage(os.Stdout)
		return exitOK
	}
	cmd, ok := commands[args[0]]
	if !ok {
		return fail(exitUsage, "unknown command %q; run 'tracelab --help'", args[0])
	}
	if cmd.usage != "" && (len(args) == 1 || args[1] == "help" || helpAsked(args[1:])) {
		fmt.Println(cmd.usage)
		return exitOK
	}
	return cmd.run(args[1:])
}

func isHelp(a string) bool { return a == "-h" || a == "--help" || a == "-help" }

// helpAsked: a -h or --help among the arguments, before any "--".
func helpAsked(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if isHelp(a) {
			return true
		}
	}
	return false
}

// usage is tracelab --help: what a user runs, then the lab's own tools.
func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: tracelab <command> [arguments]; tracelab <command> --help says more")
	for _, internal := range []bool{false, true} {
		if internal {
			fmt.Fprintln(w, "\nthe lab's own tools (its build, tests and benchmarks; make runs them):")
		} else {
			fmt.Fprintln(w, "\ncommands:")
		}
		for _, n := range slices.Sorted(maps.Keys(commands)) {
			if commands[n].internal == internal {
				fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
			}
		}
	}
}

// fail prints one line on stderr and returns code, so commands can
// `return fail(...)`.
func fail(code int, format string, a ...any) int {
	msg := strings.TrimRight(fmt.Sprintf(format, a...), "\n")
	fmt.Fprintf(os.Stderr, "tracelab: %s\n", msg)
	return code
}

// parseFlags parses a command's flags the same way for every command. ok is
// false when the command is to return code at once: --help printed usage on
// out (exit 0; a one-line usage is followed by the flags' descriptions), or
// a bad flag, or more than maxArgs arguments left after the flags (any
// number when maxArgs < 0), was reported in one line that ends with usage's
// first line (exit 2).
func parseFlags(fs *flag.FlagSet, args []string, maxArgs int, usage string, out io.Writer) (code int, ok bool) {
	fs.SetOutput(io.Discard) // errors are reported in one line below
	short, _, severalLines := strings.Cut(usage, "\n")
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(out, usage)
		if !severalLines {
			printFlags(out, fs)
		}
		return exitOK, false
	}
	if err == nil && maxArgs >= 0 && fs.NArg() > maxArgs {
		err = fmt.Errorf("unexpected argument %q", fs.Arg(maxArgs))
	}
	if err != nil {
		return fail(exitUsage, "%s: %v; %s", fs.Name(), err, short), false
	}
	return exitOK, true
}

// printFlags lists a command's flags under its one-line usage, in the
// form the several-line usages are written in: "  --name VALUE  what".
func printFlags(out io.Writer, fs *flag.FlagSet) {
	first := true
	fs.VisitAll(func(f *flag.Flag) {
		if first {
			fmt.Fprintln(out)
			first = false
		}
		value, what := flag.UnquoteUsage(f)
		// flag names a value by its type unless the usage backquotes a name
		value = map[string]string{"string": "VALUE", "int": "N", "uint": "N", "int64": "N", "float": "NUMBER", "value": "VALUE"}[value] + map[bool]string{true: value}[value != "string" && value != "int" && value != "uint" && value != "int64" && value != "float" && value != "value"]
		name := "--" + f.Name
		if value != "" {
			name += " " + strings.ToUpper(value)
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			what += " (default " + f.DefValue + ")"
		}
		fmt.Fprintf(out, "  %-22s %s\n", name, what)
	})
}

// batchGCPercent is the GC target of analyze, unless GOGC says otherwise.
// An input read whole (a backend's answer, stdin) stays live to the end,
// so each collection rescans a heap that only grows: collecting at 4x
// rather than 2x the live heap saved an eighth of the CPU on 150k spans. A
// file read trace by trace keeps little live, so the target costs little
// memory; --max-memory (memoryLimit) caps what it may cost.
const batchGCPercent = 300

// batchGC sets the GC target of a batch run unless the user chose one
// with GOGC, and returns what restores the previous one (tests run
// analyze in process).
func batchGC(lookupEnv func(string) (string, bool)) (restore func()) {
	if _, set := lookupEnv("GOGC"); set {
		return func() {}
	}
	prev := debug.SetGCPercent(batchGCPercent)
	return func() { debug.SetGCPercent(prev) }
}

// fetchFailure reports a failed Source.Fetch or Stream with its exit code:
// 130 or 143 when SIGINT or SIGTERM interrupted it (interruptedCode), 3
// when the environment failed (trying later may mend it), 2 for everything
// the user has to change.
func fetchFailure(ctx context.Context, what string, err error) int {
	if code := interruptedCode(ctx); code != 0 {
		return interruptedFailure(code, what)
	}
	if source.Environment(err) {
		return fail(exitRuntime, "%s: %v", what, err)
	}
	return fail(exitUsage, "%s: %v", what, err)
}

// writeAs writes v as --format asks of analyze and compare: indented JSON,
// SARIF through toSARIF, or text through toText.
func writeAs(out io.Writer, format string, v any, toSARIF, toText func(io.Writer) error) error {
	switch format {
	case "json":
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case "sarif":
		return toSARIF(out)
	}
	return toText(out)
}

// sarifPlacer reads --sarif-map and checks it against the repository at
// --repo, before any trace is read; needed only for SARIF, or to check a
// map given with another format. A map that cannot be read, or names a
// path the repository does not have, is exit 2.
func sarifPlacer(cmd, format, repoDir, mapFile string) (*sarif.Placer, int, bool) {
	if format != "sarif" && mapFile == "" {
		return nil, 0, true
	}
	paths, err := sarif.LoadPaths(mapFile)
	if err != nil {
		return nil, fail(exitUsage, "%s: --sarif-map %v", cmd, err), false
	}
	repo, err := sarif.OpenRepo(repoDir)
	if err != nil {
		return nil, fail(exitUsage, "%s: --repo %v", cmd, err), false
	}
	pl, err := sarif.NewPlacer(repo, paths)
	if err != nil {
		return nil, fail(exitUsage, "%s: --sarif-map %s: %v", cmd, mapFile, err), false
	}
	return pl, 0, true
}

// writeSARIF writes l, and says on stderr how many results it could place
// nowhere: GitHub code scanning refuses a file with one of them.
func writeSARIF(w io.Writer, cmd string, l sarif.Log, pl *sarif.Placer) error {
	if err := sarif.WriteLog(w, l); err != nil {
		return err
	}
	if n := sarif.Unplaced(l); n > 0 {
		fmt.Fprintf(os.Stderr, "tracelab: warning: %s: %d SARIF results have no file: their spans name no code in %s, --sarif-map does not map their services, and the repository has no README at its root; GitHub code scanning refuses such a file\n", cmd, n, pl.Repo.Root)
	}
	return nil
}
