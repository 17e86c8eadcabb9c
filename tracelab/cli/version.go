package cli

import (
	_ "embed"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
)

func init() {
	register("version", "print tracelab's version and the pinned components the lab runs", runVersion)
}

// pins is infra/local/versions.env as tracelab generate copies it here:
// go:embed reaches no file outside the module, and generate --check keeps
// the copy equal to its source.
//
//go:embed versions.env
var pins string

func runVersion(args []string) int {
	if code, ok := parseFlags(flag.NewFlagSet("version", flag.ContinueOnError), args, 0, "usage: tracelab version", os.Stdout); !ok {
		return code
	}
	writeVersion(os.Stdout)
	return exitOK
}

// writeVersion prints the build (the commit go build recorded, when it
// built in a checkout) and one line per pin.
func writeVersion(w io.Writer) {
	version, goVersion := "(unknown build)", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			version = bi.Main.Version
		}
		var rev, dirty string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "+modified"
				}
			}
		}
		if rev != "" {
			version = "commit " + rev[:min(12, len(rev))] + dirty
		}
	}
	fmt.Fprintf(w, "tracelab %s, built with %s\n\npinned components (infra/local/versions.env):\n", version, goVersion)
	for _, l := range strings.Split(pins, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok && !strings.HasPrefix(l, "#") {
			fmt.Fprintf(w, "  %-28s %s\n", k, v)
		}
	}
}
