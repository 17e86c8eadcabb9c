package manifests

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drone/envsubst"
	"gopkg.in/yaml.v3"
)

// CheckTempoConfig does what `tempo -config.verify` does with the Tempo
// container's arguments, up to the decode, without Tempo's code (AGPL-3.0):
// it reads -config.file, expands the environment into it when
// -config.expand-env is given (with drone/envsubst, the library Tempo
// uses), and decodes it strictly against the keys of tempokeys.go. env is
// the pod's environment, KEY=VALUE, and nothing else, so a variable the pod
// lacks is missing here too. It returns one line per problem.
func CheckTempoConfig(args, env []string) []string {
	fs := flag.NewFlagSet("tempo", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	file := fs.String("config.file", "", "")
	expandEnv := fs.Bool("config.expand-env", false, "")
	fs.Bool("config.verify", false, "")
	// Tempo's other flags override the file after it is read; this check
	// knows none of them, so it refuses them rather than pass what it cannot
	// judge.
	if err := fs.Parse(args); err != nil {
		return []string{fmt.Sprintf("%v: the check knows only -config.file, -config.expand-env and -config.verify (tracelab/internal/manifests/tempoconfig.go)", err)}
	}
	if fs.NArg() > 0 {
		return []string{fmt.Sprintf("unexpected arguments %q", fs.Args())}
	}
	if *file == "" {
		return []string{"no -config.file in the arguments: Tempo would start with its defaults alone"}
	}
	data, err := os.ReadFile(*file)
	if err != nil {
		return []string{fmt.Sprintf("failed to read configFile: %v", err)}
	}
	text := string(data)
	if *expandEnv {
		vars := map[string]string{}
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			vars[k] = v
		}
		// envsubst leaves nothing: an unset variable becomes "", as in Tempo.
		text, err = envsubst.Eval(text, func(k string) string { return vars[k] })
		if err != nil {
			return []string{fmt.Sprintf("failed to expand env vars from configFile: %v", err)}
		}
	}
	problems := TempoConfigProblems([]byte(text))
	for i, p := range problems {
		problems[i] = *file + ": " + p
	}
	return problems
}

// TempoConfigProblems decodes a Tempo configuration file strictly against
// the keys Tempo accepts, and returns one line per problem, each naming the
// key's path and line.
func TempoConfigProblems(data []byte) []string {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return []string{fmt.Sprintf("not YAML: %v", err)}
	}
	if len(doc.Content) == 0 {
		return nil // an empty file: Tempo's defaults
	}
	var problems []string
	checkTempoValue(doc.Content[0], "config", "", &problems)
	return problems
}

var tempoEnumRE = regexp.MustCompile(`^(.*): (.*)$`)

func checkTempoValue(n *yaml.Node, spec, path string, problems *[]string) {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	bad := func(format string, a ...any) {
		*problems = append(*problems, fmt.Sprintf("%s (line %d): %s", path, n.Line, fmt.Sprintf(format, a...)))
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return // yaml.v2 leaves a null key at its default
	}
	var allowed []string
	if m := tempoEnumRE.FindStringSubmatch(spec); m != nil {
		spec, allowed = m[1], strings.Split(m[2], "|")
	}
	if elem, ok := strings.CutPrefix(spec, "[]"); ok {
		if n.Kind != yaml.SequenceNode {
			bad("want a list")
			return
		}
		if allowed != nil {
			elem += ": " + strings.Join(allowed, "|")
		}
		for i, item := range n.Content {
			checkTempoValue(item, elem, fmt.Sprintf("%s[%d]", path, i), problems)
		}
		return
	}
	switch spec {
	case "section":
		if n.Kind != yaml.MappingNode {
			bad("want a mapping, not a %s", nodeKind(n))
		}
		return
	case "map[string]string":
		if n.Kind != yaml.MappingNode {
			bad("want a mapping")
			return
		}
		for i := 0; i < len(n.Content); i += 2 {
			checkTempoValue(n.Content[i+1], "string", path+"."+n.Content[i].Value, problems)
		}
		return
	case "string", "bool", "int", "uint", "float", "duration", "model-duration":
		if n.Kind != yaml.ScalarNode {
			bad("want a %s, not a %s", spec, nodeKind(n))
			return
		}
		if err := tempoScalar(spec, n.Value); err != nil {
			bad("%v", err)
		} else if allowed != nil && !slices.Contains(allowed, n.Value) {
			bad("%q is not one of %s", n.Value, strings.Join(allowed, ", "))
		}
		return
	}
	st, ok := tempoStructs[spec]
	if !ok {
		panic("tempokeys.go: no struct " + spec)
	}
	if n.Kind != yaml.MappingNode {
		bad("want a mapping (%s), not a %s", st.source, nodeKind(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		at := k.Value
		if path != "" {
			at = path + "." + k.Value
		}
		if seen[k.Value] {
			*problems = append(*problems, fmt.Sprintf("%s (line %d): set twice", at, k.Line))
			continue
		}
		seen[k.Value] = true
		keySpec, ok := st.keys[k.Value]
		if !ok {
			msg := fmt.Sprintf("%s (line %d): not a key of Tempo %s's %s", at, k.Line, tempoVersion, st.source)
			if near := nearestKey(k.Value, st.keys); near != "" {
				msg += fmt.Sprintf("; did you mean %s?", near)
			}
			*problems = append(*problems, msg)
			continue
		}
		checkTempoValue(v, keySpec, at, problems)
	}
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	}
	return "scalar"
}

// tempoScalar checks a value the way yaml.v2 decodes it into the field's Go
// type.
func tempoScalar(kind, v string) error {
	switch kind {
	case "bool":
		// YAML 1.1's booleans, which yaml.v2 reads.
		switch strings.ToLower(v) {
		case "true", "false", "yes", "no", "on", "off", "y", "n":
			return nil
		}
		return fmt.Errorf("%q is not a boolean", v)
	case "int", "uint":
		s := strings.ReplaceAll(v, "_", "")
		if kind == "uint" && strings.HasPrefix(s, "-") {
			return fmt.Errorf("%q is negative", v)
		}
		if _, err := strconv.ParseInt(s, 0, 64); err != nil {
			return fmt.Errorf("%q is not an integer", v)
		}
	case "float":
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return fmt.Errorf("%q is not a number", v)
		}
	case "duration":
		// yaml.v2 takes an integer as nanoseconds, else time.ParseDuration.
		if _, err := strconv.ParseInt(v, 10, 64); err == nil {
			return nil
		}
		if _, err := time.ParseDuration(v); err != nil {
			return fmt.Errorf("%q is not a duration such as 5m or 1h30m", v)
		}
	case "model-duration":
		if !modelDurationRE.MatchString(v) {
			return fmt.Errorf("%q is not a duration such as 30s, 1h or 1d", v)
		}
	}
	return nil
}

// Prometheus's model.ParseDuration: units from y down to ms, largest first.
var modelDurationRE = regexp.MustCompile(`^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$`)

// nearestKey is a key at most two edits from k, for a misspelling.
func nearestKey(k string, keys map[string]string) string {
	best, bestD := "", 3
	for _, c := range slices.Sorted(maps.Keys(keys)) {
		if d := editDistance(k, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
