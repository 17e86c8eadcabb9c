package manifests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"tracelab/internal/repotest"
)

// These need no tool: the Tempo check is the lab's own code, so plain
// `go test` runs it on the lab's file. make test-k8s-configs runs it again on
// the rendered overlays, with the pod's arguments and environment.

func labTempoConfig(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repotest.Root(t), "k8s", "base", "telemetry", "config", "tempo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// The keys were read from the release the cluster runs; a new image needs
// them read again.
func TestTempoKeysAreOfThePinnedImage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repotest.Root(t), "k8s", "base", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Images []struct {
			Name   string `yaml:"name"`
			NewTag string `yaml:"newTag"`
		} `yaml:"images"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatal(err)
	}
	for _, img := range k.Images {
		if img.Name == "grafana/tempo" {
			if tag, _, _ := strings.Cut(img.NewTag, "@"); tag != tempoVersion {
				t.Fatalf("k8s/base/kustomization.yaml pins grafana/tempo:%s, but tracelab/internal/manifests/tempokeys.go has the keys of %s: read that release's config structs and update tempokeys.go", tag, tempoVersion)
			}
			return
		}
	}
	t.Fatal("k8s/base/kustomization.yaml pins no grafana/tempo image")
}

// Every spec of tempokeys.go is one the checker reads: a mistake there
// would otherwise show only when a configuration reaches that key.
func TestTempoKeySpecsAreWellFormed(t *testing.T) {
	scalars := "string bool int uint float duration model-duration section map[string]string"
	for name, st := range tempoStructs {
		if st.source == "" {
			t.Errorf("%s: no source", name)
		}
		for key, spec := range st.keys {
			base, enum, _ := strings.Cut(spec, ": ")
			base = strings.TrimPrefix(base, "[]")
			if _, ok := tempoStructs[base]; !ok && !strings.Contains(" "+scalars+" ", " "+base+" ") {
				t.Errorf("%s.%s: %q is neither a scalar kind nor a struct", name, key, spec)
			}
			if enum != "" && strings.Contains(enum, " ") {
				t.Errorf("%s.%s: values are separated by |", name, key)
			}
		}
	}
}

func TestTheLabsTempoConfigPasses(t *testing.T) {
	if problems := TempoConfigProblems([]byte(labTempoConfig(t))); len(problems) > 0 {
		t.Fatalf("k8s/base/telemetry/config/tempo.yaml:\n%s", strings.Join(problems, "\n"))
	}
}

// Each broken the way a hand edit breaks the lab's file; the problem names
// the key's path.
func TestBrokenTempoConfigsFail(t *testing.T) {
	cases := []struct{ name, old, new, want string }{
		{"a misspelt key", "max_block_duration: 5m", "max_block_durration: 5m",
			`^ingester.max_block_durration \(line \d+\): not a key of Tempo 2.8.2's modules/ingester/config.go, Config; did you mean max_block_duration\?$`},
		{"a misspelt section", "\ncompactor:", "\ncompacter:", `^compacter \(line \d+\): not a key .*did you mean compactor\?$`},
		{"a key in the wrong section", "  max_block_duration: 5m", "  block_retention: 24h", `^ingester.block_retention \(line \d+\): not a key`},
		{"a duration Go cannot read", "max_block_duration: 5m", "max_block_duration: 5 minutes", `^ingester.max_block_duration \(line \d+\): "5 minutes" is not a duration`},
		{"a port that is not a number", "http_listen_port: 3200", "http_listen_port: http", `^server.http_listen_port \(line \d+\): "http" is not an integer`},
		{"a log level dskit refuses", "log_level: info", "log_level: verbose", `^server.log_level \(line \d+\): "verbose" is not one of debug, info, warn, error$`},
		{"a generator processor that does not exist", "[service-graphs, span-metrics, local-blocks]", "[service-graphs, span-metric, local-blocks]",
			`^overrides.defaults.metrics_generator.processors\[1\] \(line \d+\): "span-metric" is not one of`},
		{"the legacy overrides format", "overrides:\n  defaults:\n", "overrides:\n  max_traces_per_user: 1000\n  defaults:\n", `^overrides.max_traces_per_user \(line \d+\): not a key`},
		{"a receiver Tempo does not have", "    otlp:\n", "    otel:\n", `^distributor.receivers.otel \(line \d+\): not a key .*did you mean otlp\?$`},
		{"a backend tempodb does not have", "backend: local", "backend: disk", `^storage.trace.backend \(line \d+\): "disk" is not one of local, gcs, s3, azure$`},
		{"a section given a scalar", "  max_block_duration: 5m", "  lifecycler: ring", `^ingester.lifecycler \(line \d+\): want a mapping, not a scalar$`},
		{"a key set twice", "  max_block_duration: 5m", "  max_block_duration: 5m\n  max_block_duration: 10m", `^ingester.max_block_duration \(line \d+\): set twice$`},
		{"a list where a mapping goes", "    external_labels:\n      source: tempo", "    external_labels: [tempo]", `^metrics_generator.registry.external_labels \(line \d+\): want a mapping$`},
	}
	lab := labTempoConfig(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(lab, tc.old) {
				t.Fatalf("k8s/base/telemetry/config/tempo.yaml no longer holds %q; update this test", tc.old)
			}
			problems := TempoConfigProblems([]byte(strings.Replace(lab, tc.old, tc.new, 1)))
			if len(problems) != 1 || !regexp.MustCompile(tc.want).MatchString(problems[0]) {
				t.Fatalf("want one problem matching %s, got %q", tc.want, problems)
			}
		})
	}
}

// -config.expand-env expands the pod's environment, and only with the flag,
// as Tempo does; flags the check cannot judge are refused.
func TestTempoConfigArgumentsAndEnvironment(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tempo.yaml")
	os.WriteFile(file, []byte("server:\n  log_level: ${LEVEL:-info}\n  http_listen_port: ${PORT}\n"), 0o644)
	cases := []struct {
		name      string
		args, env []string
		want      string // a problem's start; "" for none
	}{
		{"expanded from the pod's environment", []string{"-config.file=" + file, "-config.expand-env"}, []string{"LEVEL=debug", "PORT=3200"}, ""},
		{"a default of envsubst's", []string{"-config.file=" + file, "-config.expand-env=true"}, []string{"PORT=3200"}, ""},
		{"a value the pod sets wrong", []string{"-config.file", file, "-config.expand-env"}, []string{"LEVEL=verbose", "PORT=3200"}, file + ": server.log_level (line 2): \"verbose\""},
		{"not expanded without the flag", []string{"-config.file=" + file}, nil, file + ": server.log_level (line 2): \"${LEVEL:-info}\""},
		{"a flag the check does not know", []string{"-config.file=" + file, "-target=all"}, nil, "flag provided but not defined: -target"},
		{"no configuration file", []string{"-config.expand-env"}, nil, "no -config.file"},
		{"a file that is not there", []string{"-config.file=" + filepath.Join(dir, "nope.yaml")}, nil, "failed to read configFile"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			problems := CheckTempoConfig(tc.args, tc.env)
			if tc.want == "" {
				if len(problems) > 0 {
					t.Fatalf("want no problem, got %q", problems)
				}
				return
			}
			if len(problems) == 0 || !strings.HasPrefix(problems[0], tc.want) {
				t.Fatalf("want a problem starting %q first, got %q", tc.want, problems)
			}
		})
	}
}
