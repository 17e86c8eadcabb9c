package licences

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// The programs infra/local/tools.sh builds are built by the lab as much as
// its own modules are; their pins live in versions.env.
const (
	toolsScript   = "infra/local/tools.sh"
	versionsFile  = "infra/local/versions.env"
	collectorList = "infra/local/otelcol-builder.yaml"
)

var (
	// go_tool NAME MODULE "$VERSION_VAR" ...
	goToolRE = regexp.MustCompile(`\bgo_tool\s+[\w.-]+\s+(\S+)\s+"\$\{?([A-Z0-9_]+)\}?"`)
	// cargo_tool NAME CRATE "$VERSION_VAR"
	cargoToolRE = regexp.MustCompile(`\bcargo_tool\s+[\w.-]+\s+(\S+)\s+"\$\{?([A-Z0-9_]+)\}?"`)
	// - gomod: MODULE ${VERSION_VAR}
	collectorRE = regexp.MustCompile(`^\s*-\s*gomod:\s*(\S+)\s+\$\{([A-Z0-9_]+)\}`)
	// export GONOSUMDB=${GONOSUMDB:+$GONOSUMDB,}PATTERNS
	noSumDBRE = regexp.MustCompile(`^\s*export\s+GONOSUMDB=\$\{GONOSUMDB:\+\$GONOSUMDB,\}(\S+)`)
)

// Crate is a Rust crate tools.sh builds with cargo.
type Crate struct{ Name, Version, Source string }

// readVersions reads versions.env's KEY=VALUE lines.
func readVersions(root string) (map[string]string, error) {
	data, err := os.ReadFile(filepath.Join(root, versionsFile))
	if err != nil {
		return nil, err
	}
	vars := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			vars[k] = strings.Trim(v, `"'`)
		}
	}
	return vars, nil
}

// Tools is what tools.sh builds: its go_tool and cargo_tool calls and the
// collector's components, at the versions versions.env pins, and the
// modules it exempts from the checksum database (pseudo-versions the
// database does not know), which fetching them here needs too.
type Tools struct {
	Modules []Module
	Crates  []Crate
	NoSumDB string
}

func toolModules(root string) (*Tools, error) {
	vars, err := readVersions(root)
	if err != nil {
		return nil, err
	}
	t := &Tools{}
	pin := func(file string, n int, v string) (string, error) {
		if val, ok := vars[v]; ok && val != "" {
			return val, nil
		}
		return "", fmt.Errorf("%s:%d: %s is not set in %s", file, n, v, versionsFile)
	}
	err = eachLine(root, toolsScript, func(n int, line string) error {
		if m := goToolRE.FindStringSubmatch(line); m != nil {
			v, err := pin(toolsScript, n, m[2])
			t.Modules = append(t.Modules, Module{Path: m[1], Version: v, Source: fmt.Sprintf("%s:%d", toolsScript, n)})
			return err
		}
		if m := cargoToolRE.FindStringSubmatch(line); m != nil {
			v, err := pin(toolsScript, n, m[2])
			t.Crates = append(t.Crates, Crate{Name: m[1], Version: v, Source: fmt.Sprintf("%s:%d", toolsScript, n)})
			return err
		}
		if m := noSumDBRE.FindStringSubmatch(line); m != nil {
			t.NoSumDB = m[1]
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Fail closed: a reworded call would otherwise drop every tool unseen.
	if len(t.Modules) == 0 {
		return nil, fmt.Errorf("%s: found no go_tool call; the licence gate's reader (tracelab/pkg/licences/tools.go) needs updating", toolsScript)
	}
	err = eachLine(root, collectorList, func(n int, line string) error {
		if m := collectorRE.FindStringSubmatch(line); m != nil {
			v, err := pin(collectorList, n, m[2])
			t.Modules = append(t.Modules, Module{Path: m[1], Version: v, Source: fmt.Sprintf("%s:%d", collectorList, n)})
			return err
		}
		return nil
	})
	return t, err
}

func eachLine(root, file string, fn func(n int, line string) error) error {
	f, err := os.Open(filepath.Join(root, file))
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if strings.HasPrefix(strings.TrimSpace(sc.Text()), "#") {
			continue
		}
		if err := fn(n, sc.Text()); err != nil {
			return err
		}
	}
	return sc.Err()
}
