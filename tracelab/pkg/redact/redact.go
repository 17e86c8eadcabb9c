// Package redact drops from traces what describes the machine they were
// recorded on rather than the application, so that they can be shared
// (tracelab convert --redact).
package redact

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"tracelab/pkg/trace"
)

// machineKeys are resource attributes that describe the machine a trace
// was recorded on rather than the application (OpenTelemetry's host and
// process semantic conventions).
var machineKeys = []string{
	"host.name", "host.id", "host.ip", "host.mac",
	"process.command", "process.command_line", "process.command_args",
	"process.executable.path", "process.owner",
}

// Machine drops machineKeys and every attribute whose value holds a local
// directory: the home, temporary or working one (the Java agent records jar
// paths, Python code paths).
func Machine(traces []*trace.Trace) {
	var dirs []string
	for _, d := range []string{os.Getenv("HOME"), os.TempDir()} {
		if d != "" && d != "/" {
			dirs = append(dirs, filepath.Clean(d))
		}
	}
	if wd, err := os.Getwd(); err == nil && wd != "/" {
		dirs = append(dirs, wd)
	}
	local := func(v string) bool {
		for _, d := range dirs {
			if strings.Contains(v, d) {
				return true
			}
		}
		return false
	}
	clean := func(m map[string]string) map[string]string {
		out := make(map[string]string, len(m))
		for k, v := range m {
			if !local(v) && !slices.Contains(machineKeys, k) {
				out[k] = v
			}
		}
		return out
	}
	// Writers keep one resource per service, so one cleaned copy each.
	resources := map[string]map[string]string{}
	for _, t := range traces {
		for _, s := range t.Spans {
			s.Attrs = trace.AttrsOf(clean(s.Attrs.Map()))
			r, ok := resources[s.Service]
			if !ok {
				r = clean(s.ResourceAttrs)
				resources[s.Service] = r
			}
			s.ResourceAttrs = r
		}
	}
}
