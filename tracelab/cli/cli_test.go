package cli

import (
	"flag"
	"strings"
	"testing"
)

func TestParseFlags(t *testing.T) {
	const usage = "usage: tracelab x [--n N] [NAME]"
	cases := []struct {
		args    []string
		maxArgs int
		code    int
		ok      bool
		help    string // on stdout
	}{
		{[]string{"--n", "3", "a"}, 1, exitOK, true, ""},
		{[]string{"--n", "3", "a"}, -1, exitOK, true, ""},
		{[]string{"--n", "3", "a"}, 0, exitUsage, false, ""},
		{[]string{"--m", "3"}, 1, exitUsage, false, ""},
		{[]string{"-h"}, 0, exitOK, false, usage + "\n\n  --n N                  a number\n"},
	}
	for _, c := range cases {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		n := fs.Int("n", 0, "a number")
		var out strings.Builder
		code, ok := parseFlags(fs, c.args, c.maxArgs, usage, &out)
		if code != c.code || ok != c.ok || !strings.HasPrefix(out.String(), c.help) {
			t.Errorf("%v (at most %d arguments): %d, %v, %q; want %d, %v, %q", c.args, c.maxArgs, code, ok, out.String(), c.code, c.ok, c.help)
		}
		if ok && *n != 3 {
			t.Errorf("%v: --n is %d", c.args, *n)
		}
	}
	// A usage of several lines is the help, without the flags' defaults.
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Int("n", 0, "a number")
	var out strings.Builder
	parseFlags(fs, []string{"--help"}, 0, usage+"\n\nmore", &out)
	if out.String() != usage+"\n\nmore\n" {
		t.Errorf("help %q", out.String())
	}
}

func TestParseNamedTakesTheNameOnEitherSide(t *testing.T) {
	for _, args := range [][]string{{"nplus1", "--n", "3"}, {"--n", "3", "nplus1"}} {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		n := fs.Int("n", 0, "a number")
		name, code, ok := parseNamed(fs, args, "usage: x", &strings.Builder{})
		if name != "nplus1" || code != exitOK || !ok || *n != 3 {
			t.Errorf("%v: %q, %d, %v, --n %d", args, name, code, ok, *n)
		}
	}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	if _, code, ok := parseNamed(fs, []string{"a", "b"}, "usage: x", &strings.Builder{}); ok || code != exitUsage {
		t.Errorf("two names: %d, %v", code, ok)
	}
}
