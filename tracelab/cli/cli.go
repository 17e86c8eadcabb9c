// Package cli holds one file per tracelab command; each command parses its
// own flags and returns the process exit code.
package cli

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
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
}

var commands = map[string]command{}

func register(name, summary string, run func([]string) int) {
	commands[name] = command{summary, run}
}

// Main dispatches to a command.
func Main(args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage()
		return exitOK
	}
	cmd, ok := commands[args[0]]
	if !ok {
		return fail(exitUsage, "unknown command %q; run 'tracelab help'", args[0])
	}
	return cmd.run(args[1:])
}

func usage() {
	fmt.Println("usage: tracelab <command> [flags]\n\ncommands:")
	for _, n := range slices.Sorted(maps.Keys(commands)) {
		fmt.Printf("  %-16s %s\n", n, commands[n].summary)
	}
}

// fail prints one line on stderr and returns code, so commands can
// `return fail(...)`.
func fail(code int, format string, a ...any) int {
	msg := strings.TrimRight(fmt.Sprintf(format, a...), "\n")
	fmt.Fprintf(os.Stderr, "tracelab: %s\n", msg)
	return code
}
