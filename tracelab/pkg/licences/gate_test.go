package licences

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tracelab/internal/repotest"
)

const (
	mitText = `Copyright (c) 2024 The Authors

Permission is hereby granted, free of charge, to any person obtaining
a copy of this software and associated documentation files (the
"Software"), to deal in the Software without restriction, including
without limitation the rights to use, copy, modify, merge, publish,
distribute, sublicense, and/or sell copies of the Software, and to
permit persons to whom the Software is furnished to do so, subject to
the following conditions:

The above copyright notice and this permission notice shall be
included in all copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND,
EXPRESS OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF
MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT.
IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY
CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT,
TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE
SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
`
	agplNotice = `This program is free software: you can redistribute it and/or modify it under
the terms of the GNU Affero General Public License as published by the Free
Software Foundation, either version 3 of the License, or (at your option) any
later version.

This program is distributed in the hope that it will be useful, but WITHOUT ANY
WARRANTY; without even the implied warranty of MERCHANTABILITY or FITNESS FOR A
PARTICULAR PURPOSE. See the GNU Affero General Public License for more details.

You should have received a copy of the GNU Affero General Public License along
with this program. If not, see <https://www.gnu.org/licenses/>.
`
	buslHeader = `Business Source License 1.1

Parameters

Licensor:             Example Corp.
Licensed Work:        example
Change Date:          Four years from the date the Licensed Work is published.
Change License:       MPL 2.0
`
)

// lab is a throwaway checkout with the real policy, a module cache of fake
// modules and a Maven repository of fake POMs; nothing reaches a network.
type lab struct {
	t        *testing.T
	root     string
	modcache string
	m2       string
	mods     map[string]string // path@version -> folder
	arts     []Artifact
	fetched  int // calls of Download
}

func newLab(t *testing.T) *lab {
	l := &lab{t: t, root: t.TempDir(), modcache: t.TempDir(), m2: t.TempDir(), mods: map[string]string{}}
	policy, err := os.ReadFile(filepath.Join(repotest.Root(t), PolicyFile))
	if err != nil {
		t.Fatal(err)
	}
	l.write(PolicyFile, string(policy))
	l.write(versionsFile, "TOOL_VERSION=v1.2.0\nCRATE_VERSION=0.1.0\nCORE_VERSION=v0.9.0\n")
	l.write(toolsScript, `#!/usr/bin/env bash
go_tool() { # NAME MODULE VERSION PACKAGE [REPLACE...]
  :
}
# A comment naming go_tool nope example.com/nope "$NOPE" is not a call.
export GONOSUMDB=${GONOSUMDB:+$GONOSUMDB,}example.com/pseudo
  in_parallel tool go_tool tool example.com/tool "$TOOL_VERSION" example.com/tool/cmd/tool
  ps=$(cargo_tool perf-sentinel perf-sentinel "$CRATE_VERSION")
`)
	l.write(collectorList, "receivers:\n  - gomod: example.com/collector/receiver ${CORE_VERSION}\n")
	l.module("example.com/tool@v1.2.0", map[string]string{"LICENSE": mitText})
	l.module("example.com/collector/receiver@v0.9.0", map[string]string{"LICENSE.txt": mitText})
	l.write("services/pom.xml", `<project><groupId>dev.tracelab</groupId><artifactId>services</artifactId><version>1</version></project>`)
	l.pom(Artifact{"org.example", "parent", "3"}, "", `<licenses><license><name>The Apache Software License, Version 2.0</name></license></licenses>`)
	l.pom(Artifact{"org.example", "lib", "1.0"}, "org.example:parent:3", "")
	l.arts = []Artifact{{"dev.tracelab", "settings", "1"}, {"org.example", "lib", "1.0"}}
	return l
}

func (l *lab) write(rel, text string) {
	l.t.Helper()
	path := filepath.Join(l.root, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		l.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		l.t.Fatal(err)
	}
}

// module puts a fake module in the fake module cache: files by relative path.
func (l *lab) module(key string, files map[string]string) {
	l.t.Helper()
	dir := filepath.Join(l.modcache, strings.ReplaceAll(key, "/", "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		l.t.Fatal(err)
	}
	for rel, text := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			l.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			l.t.Fatal(err)
		}
	}
	l.mods[key] = dir
}

func (l *lab) pom(a Artifact, parent, body string) {
	l.t.Helper()
	var par string
	if parent != "" {
		c := strings.Split(parent, ":")
		par = "<parent><groupId>" + c[0] + "</groupId><artifactId>" + c[1] + "</artifactId><version>" + c[2] + "</version></parent>"
	}
	repo := &mavenRepo{dir: l.m2}
	p := repo.pomPath(a)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		l.t.Fatal(err)
	}
	xml := `<?xml version="1.0" encoding="ISO-8859-1"?><project>` + par + `<artifactId>` + a.Name + `</artifactId>` + body + `</project>`
	if err := os.WriteFile(p, []byte(xml), 0o644); err != nil {
		l.t.Fatal(err)
	}
}

// download is the fake `go mod download -json`: a module folder yields what
// its go.mod requires, args yield themselves.
func (l *lab) download(dir, noSumDB string, args ...string) ([]Module, error) {
	l.fetched++
	if noSumDB != "example.com/pseudo" {
		l.t.Errorf("GONOSUMDB addition %q, want tools.sh's example.com/pseudo", noSumDB)
	}
	if len(args) == 0 {
		rel, _ := filepath.Rel(l.root, dir)
		reqs, err := requirements(l.root, rel)
		if err != nil {
			return nil, err
		}
		for _, r := range reqs {
			args = append(args, r.Path+"@"+r.Version)
		}
	}
	var mods []Module
	for _, a := range args {
		path, version, _ := strings.Cut(a, "@")
		d, ok := l.mods[a]
		if !ok {
			l.t.Fatalf("the test has no module %s", a)
		}
		mods = append(mods, Module{Path: path, Version: version, Dir: d})
	}
	return mods, nil
}

func (l *lab) run() *Report {
	l.t.Helper()
	p, err := LoadPolicy(filepath.Join(l.root, PolicyFile))
	if err != nil {
		l.t.Fatal(err)
	}
	g := &Gate{Root: l.root, Policy: p, Download: l.download, MavenRepo: l.m2,
		Collect: func(string) ([]Artifact, error) { return l.arts, nil }}
	r, err := g.Run()
	if err != nil {
		l.t.Fatal(err)
	}
	return r
}

func (l *lab) goMod(requires ...string) {
	l.write("tracelab/go.mod", "module tracelab\n\ngo 1.24\n\nrequire (\n\t"+strings.Join(requires, "\n\t")+"\n)\n")
}

func mustRefuse(t *testing.T, r *Report, want ...string) {
	t.Helper()
	if len(r.Violations) == 0 {
		t.Fatalf("the gate passed; want a violation naming %q", want)
	}
	all := strings.Join(r.Violations, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("violations lack %q:\n%s", w, all)
		}
	}
}

func TestCleanTreePasses(t *testing.T) {
	l := newLab(t)
	l.module("example.com/clean@v1.0.0", map[string]string{"LICENSE": mitText, "testdata/LICENSE": agplNotice})
	l.goMod("example.com/clean v1.0.0")
	r := l.run()
	if len(r.Violations) > 0 {
		t.Fatalf("a clean tree was refused:\n%s", strings.Join(r.Violations, "\n"))
	}
	// clean, the go_tool and the collector's component; the lab's own
	// Maven module is not counted, the parent's licence is.
	if r.GoModules != 3 || r.MavenArtifacts != 1 {
		t.Errorf("checked %d Go modules and %d Maven artifacts, want 3 and 1", r.GoModules, r.MavenArtifacts)
	}
	if len(r.Exceptions) != 1 || !strings.Contains(r.Exceptions[0], "perf-sentinel") {
		t.Errorf("exceptions used: %q, want perf-sentinel's alone", r.Exceptions)
	}
}

func TestPlantedK6FailsBeforeDownloading(t *testing.T) {
	l := newLab(t)
	l.goMod("example.com/clean v1.0.0", "go.k6.io/k6 v0.50.0")
	l.write("tracelab/go.sum", "go.k6.io/k6 v0.50.0 h1:x=\ngo.k6.io/k6 v0.50.0/go.mod h1:y=\n")
	r := l.run()
	mustRefuse(t, r, "go module go.k6.io/k6 v0.50.0 (tracelab/go.mod): AGPL-3.0: on the deny list")
	if len(r.Violations) != 1 {
		t.Errorf("want one line for k6 in go.mod and go.sum, got:\n%s", strings.Join(r.Violations, "\n"))
	}
	if !r.FailedFast || l.fetched != 0 {
		t.Errorf("failed fast %v after %d downloads; the deny list must refuse before any download", r.FailedFast, l.fetched)
	}
}

func TestDeniedModuleOnlyInGoSumFails(t *testing.T) {
	l := newLab(t)
	l.goMod("example.com/clean v1.0.0")
	l.write("tracelab/go.sum", "github.com/grafana/tempo v1.5.1/go.mod h1:y=\n")
	mustRefuse(t, l.run(), "github.com/grafana/tempo v1.5.1 (tracelab/go.sum)")
}

func TestModuleWithoutLicenceIsRefused(t *testing.T) {
	l := newLab(t)
	l.module("example.com/bare@v0.1.0", map[string]string{"README.md": "no licence here", "license.go": "package bare // " + mitText})
	l.goMod("example.com/bare v0.1.0")
	mustRefuse(t, l.run(), "go module example.com/bare v0.1.0 (tracelab/go.mod): no licence found")
}

func TestAGPLTextOfAnUnlistedModuleIsDenied(t *testing.T) {
	l := newLab(t)
	l.module("example.com/copyleft@v2.0.0", map[string]string{"COPYING": agplNotice})
	l.goMod("example.com/copyleft v2.0.0")
	mustRefuse(t, l.run(), "example.com/copyleft v2.0.0", "AGPL-3.0-or-later: denied")
}

// tflint v0.51+: MPL-2.0 at the top, BUSL-1.1 in a folder of its code.
func TestNestedBUSLIsDenied(t *testing.T) {
	l := newLab(t)
	l.module("example.com/tool@v1.2.0", map[string]string{"LICENSE": mitText, "terraform/LICENSE-BUSL": buslHeader})
	l.goMod()
	mustRefuse(t, l.run(), "go module example.com/tool v1.2.0 (infra/local/tools.sh:7)", "BUSL-1.1", "denied")
}

func TestCrateWithoutExceptionIsRefused(t *testing.T) {
	l := newLab(t)
	l.goMod()
	l.write(toolsScript, strings.Replace(readFile(t, filepath.Join(l.root, toolsScript)), "perf-sentinel perf-sentinel", "other-crate other-crate", 1))
	mustRefuse(t, l.run(), "cargo crate other-crate 0.1.0 (infra/local/tools.sh:8): licence not checked")
}

func TestMavenLicences(t *testing.T) {
	l := newLab(t)
	l.goMod()
	l.pom(Artifact{"org.example", "agpl", "1"}, "", `<licenses><license><name>GNU Affero General Public License v3</name></license></licenses>`)
	l.pom(Artifact{"org.example", "dual", "1"}, "", `<licenses><license><name>EPL 2.0</name></license><license><name>GPL2 w/ CPE</name></license></licenses>`)
	l.pom(Artifact{"org.example", "odd", "1"}, "", `<licenses><license><name>Some Licence</name><url>https://example.com/terms</url></license></licenses>`)
	l.pom(Artifact{"org.example", "none", "1"}, "", "")
	l.arts = append(l.arts, Artifact{"org.example", "agpl", "1"}, Artifact{"org.example", "dual", "1"}, Artifact{"org.example", "odd", "1"}, Artifact{"org.example", "none", "1"})
	r := l.run()
	mustRefuse(t, r,
		`maven artifact org.example:agpl 1 (services/pom.xml): "GNU Affero General Public License v3": denied`,
		`maven artifact org.example:odd 1 (services/pom.xml): "Some Licence": not a licence the policy names`,
		`maven artifact org.example:none 1 (services/pom.xml): no licence found`)
	if len(r.Violations) != 3 {
		t.Errorf("want 3 violations (dual-licensed and parent-licensed pass), got:\n%s", strings.Join(r.Violations, "\n"))
	}
}

func TestNpmLockFile(t *testing.T) {
	l := newLab(t)
	l.goMod()
	l.write("dashboards/traceql/package.json", `{"name": "x"}`)
	l.write("dashboards/traceql/package-lock.json", `{"lockfileVersion": 3, "packages": {
		"": {"name": "x"},
		"node_modules/@grafana/lezer-traceql": {"version": "0.0.20", "license": "Apache-2.0"},
		"node_modules/either": {"version": "1.0.0", "license": "(MIT OR Apache-2.0)"},
		"node_modules/both": {"version": "1.0.0", "license": "MIT AND AGPL-3.0"},
		"node_modules/bare": {"version": "2.0.0"}}}`)
	l.write("bench/Cargo.toml", "[package]\n")
	r := l.run()
	mustRefuse(t, r,
		"npm package both 1.0.0 (dashboards/traceql/package-lock.json): MIT AND AGPL-3.0: denied",
		"npm package bare 2.0.0 (dashboards/traceql/package-lock.json): no licence found",
		"bench/Cargo.toml: the gate cannot read cargo licences yet")
	if r.NpmPackages != 4 || len(r.Violations) != 3 {
		t.Errorf("%d npm packages, violations:\n%s", r.NpmPackages, strings.Join(r.Violations, "\n"))
	}
}

func TestTheLabsToolsAreRead(t *testing.T) {
	tools, err := toolModules(repotest.Root(t))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range tools.Modules {
		got[m.Path] = m.Version
	}
	// tflint: the last MPL-2.0-only release; later ones carry BUSL code.
	for path, want := range map[string]string{
		"github.com/terraform-linters/tflint":                 "v0.50.3",
		"k8s.io/kubernetes":                                   "", // any pin
		"github.com/prometheus/prometheus":                    "",
		"go.opentelemetry.io/collector/cmd/builder":           "",
		"github.com/jaegertracing/jaeger":                     "",
		"go.opentelemetry.io/collector/receiver/otlpreceiver": "",
	} {
		if v, ok := got[path]; !ok || (want != "" && v != want) {
			t.Errorf("tools.sh's %s: got %q, want %q", path, v, want)
		}
	}
	if len(tools.Crates) != 1 || tools.Crates[0].Name != "perf-sentinel" {
		t.Errorf("crates %v, want perf-sentinel", tools.Crates)
	}
	if !strings.Contains(tools.NoSumDB, "go.opentelemetry.io") {
		t.Errorf("GONOSUMDB addition %q, want tools.sh's", tools.NoSumDB)
	}
}

func TestPolicyJudgesIdentifiers(t *testing.T) {
	p, err := LoadPolicy(filepath.Join(repotest.Root(t), PolicyFile))
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]verdict{
		"AGPL-3.0-or-later": denied, "SSPL-1.0": denied, "BUSL-1.1": denied,
		"BSL-1.0":    permitted, // Boost, not Business Source
		"Apache-2.0": permitted, "MPL-2.0": permitted, "GPL-3.0": unknown, "": unknown,
	} {
		if got := p.judge(id); got != want {
			t.Errorf("judge(%q) = %v, want %v", id, got, want)
		}
	}
	for name, want := range map[string]string{
		"GNU Lesser General Public License":        "LGPL",
		"CDDL + GPLv2 with classpath exception":    "GPL-2.0-with-classpath-exception",
		"GNU General Public License v3":            "GPL",
		"The Apache Software License, Version 2.0": "Apache-2.0",
		"Elastic License 2.0":                      "",
	} {
		if got := idFromName(name); got != want {
			t.Errorf("idFromName(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestParseToolOutputs(t *testing.T) {
	mods, err := parseDownload([]byte(`{"Path": "a.example/m", "Version": "v1.0.0", "Dir": "/c/a"}
{"Path": "b.example/m", "Version": "v2.0.0", "Error": "not found"}`))
	if err != nil || len(mods) != 2 || mods[0].Dir != "/c/a" || mods[1].Error != "not found" {
		t.Errorf("parseDownload: %+v, %v", mods, err)
	}
	arts, _ := parseCollect(`
The following files have been resolved:
   none

The following files have been resolved:
   org.junit.jupiter:junit-jupiter:jar:6.0.3:test
   com.google.inject:guice:jar:classes:5.1.0:test
   io.netty:netty-transport:jar:4.2.1.Final:compile -- module io.netty.transport
   org.junit.jupiter:junit-jupiter:jar:6.0.3:compile
`)
	want := []string{"com.google.inject:guice:5.1.0", "io.netty:netty-transport:4.2.1.Final", "org.junit.jupiter:junit-jupiter:6.0.3"}
	if len(arts) != len(want) {
		t.Fatalf("parseCollect: %v, want %v", arts, want)
	}
	for i, a := range arts {
		if a.String() != want[i] {
			t.Errorf("parseCollect[%d] = %s, want %s", i, a, want[i])
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
