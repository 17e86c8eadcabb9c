// Package expandenv tests infra/local/expand-env.sh, which renders the local
// runtime's Prometheus and Kafka configurations and the collector's build
// manifest from their templates.
package expandenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"tracelab/internal/repotest"
)

func expand(t *testing.T, env []string, input string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(repotest.Root(t), "infra", "local", "expand-env.sh"))
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	cmd.Stdin = strings.NewReader(input)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

func TestReferencesBecomeValues(t *testing.T) {
	got, _, err := expand(t, []string{"A=1", `B=x&\1${A}`}, "a ${A}${A} $A ${B}\nno newline ${A}")
	if err != nil {
		t.Fatal(err)
	}
	// $A without braces stays, as no template uses that form; a value that
	// looks like a reference is not expanded again.
	if want := "a 11 $A x&\\1${A}\nno newline 1\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestAnUnsetVariableIsRefused(t *testing.T) {
	_, stderr, err := expand(t, nil, "port ${PROMETHEUS_PORT}\n")
	if err == nil || stderr != "expand-env: ${PROMETHEUS_PORT} is not set\n" {
		t.Errorf("exit %v, stderr %q; want a failure naming the variable", err, stderr)
	}
}

// Every reference of the three templates is filled, and nothing else changes.
func TestTheTemplatesRender(t *testing.T) {
	reference := regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	for _, name := range []string{"prometheus.yml", "kafka.properties", "otelcol-builder.yaml"} {
		data, err := os.ReadFile(filepath.Join(repotest.Root(t), "infra", "local", name))
		if err != nil {
			t.Fatal(err)
		}
		var env []string
		for _, m := range reference.FindAllStringSubmatch(string(data), -1) {
			env = append(env, m[1]+"=<"+m[1]+">")
		}
		if len(env) == 0 {
			t.Fatalf("%s has no references: is it still a template?", name)
		}
		got, stderr, err := expand(t, env, string(data))
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, stderr)
		}
		want := reference.ReplaceAllString(string(data), "<$1>")
		if !strings.HasSuffix(want, "\n") {
			want += "\n"
		}
		if got != want {
			t.Errorf("%s rendered as\n%s\nwant\n%s", name, got, want)
		}
	}
}
