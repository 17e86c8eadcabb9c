package lab

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ReadEnvFile parses a KEY=VALUE file, skipping blanks and # comments.
func ReadEnvFile(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseEnv(data, filepath.Base(path))
}

// ParseEnv parses KEY=VALUE lines, skipping blanks and # comments; name is
// what an error calls the file.
func ParseEnv(data []byte, name string) (map[string]string, error) {
	out := map[string]string{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s:%d: expected KEY=VALUE", name, i+1)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, nil
}

// EnvFileContent renders vars as a sorted KEY=VALUE file under a header
// comment, so that equal settings give equal bytes and a restart happens
// only on a real change.
func EnvFileContent(header string, vars map[string]string) string {
	var b strings.Builder
	b.WriteString("# " + header + "\n")
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		fmt.Fprintf(&b, "%s=%s\n", k, vars[k])
	}
	return b.String()
}
