package licences

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/google/licensecheck"
)

// Module is one Go module version, with where the gate found it.
type Module struct {
	Path, Version string
	Source        string // the go.mod, go.sum or tools.sh line that names it
	Dir           string // its extracted copy in the module cache, once downloaded
	Error         string // go mod download's, when it could not fetch the module
}

// findGoMods lists the folders of the tree holding a go.mod, relative to
// root. testdata and dependency folders are not the lab's modules.
func findGoMods(root string) ([]string, error) {
	var dirs []string
	err := walk(root, func(path string, d fs.DirEntry) error {
		if !d.IsDir() && d.Name() == "go.mod" {
			rel, _ := filepath.Rel(root, filepath.Dir(path))
			dirs = append(dirs, rel)
		}
		return nil
	})
	sort.Strings(dirs)
	return dirs, err
}

// walk visits the tree below root, leaving out what is not the tree's own
// code: testdata, dependencies, build output, hidden folders. visit may
// return filepath.SkipDir.
func walk(root string, visit func(path string, d fs.DirEntry) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && skipDir(d.Name()) {
			return filepath.SkipDir
		}
		return visit(path, d)
	})
}

func skipDir(name string) bool {
	switch name {
	case "testdata", "vendor", "node_modules", "target", ".state", ".terraform":
		return true
	}
	return strings.HasPrefix(name, ".")
}

// requirements lists every module version a go.mod requires and its go.sum
// names, the main module and local replacements aside. A module that go.sum
// knows only by its go.mod is listed too: the deny list of module paths
// applies to the whole graph, downloaded or not.
func requirements(root, dir string) ([]Module, error) {
	var mods []Module
	gomod := filepath.Join(dir, "go.mod")
	data, err := os.ReadFile(filepath.Join(root, gomod))
	if err != nil {
		return nil, err
	}
	inBlock := false
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(stripComment(line))
		switch {
		case line == "require (":
			inBlock = true
			continue
		case inBlock && line == ")":
			inBlock = false
			continue
		case strings.HasPrefix(line, "require "):
			line = strings.TrimSpace(strings.TrimPrefix(line, "require "))
		case !inBlock:
			continue
		}
		if f := strings.Fields(line); len(f) == 2 {
			mods = append(mods, Module{Path: unquote(f[0]), Version: f[1], Source: gomod})
		}
	}
	gosum := filepath.Join(dir, "go.sum")
	f, err := os.Open(filepath.Join(root, gosum))
	if os.IsNotExist(err) {
		return mods, nil
	} else if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fl := strings.Fields(sc.Text()); len(fl) == 3 {
			mods = append(mods, Module{Path: fl[0], Version: strings.TrimSuffix(fl[1], "/go.mod"), Source: gosum})
		}
	}
	return mods, sc.Err()
}

func stripComment(line string) string {
	if i := strings.Index(line, "//"); i >= 0 {
		return line[:i]
	}
	return line
}

func unquote(s string) string { return strings.Trim(s, "\"`") }

// GoDownload fetches modules into the module cache and reports where each
// landed: in dir (a module's folder) with no args, the modules its build
// and tests need; with args (path@version), those. noSumDB is GONOSUMDB's
// addition.
type GoDownload func(dir, noSumDB string, args ...string) ([]Module, error)

// GoModDownload is GoDownload by `go mod download -json`, which uses the
// module cache and the module proxy like any build.
func GoModDownload(dir, noSumDB string, args ...string) ([]Module, error) {
	cmd := exec.Command("go", append([]string{"mod", "download", "-json"}, args...)...)
	cmd.Dir = dir
	if noSumDB != "" {
		if old := os.Getenv("GONOSUMDB"); old != "" {
			noSumDB = old + "," + noSumDB
		}
		cmd.Env = append(os.Environ(), "GONOSUMDB="+noSumDB)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	mods, perr := parseDownload(out)
	if perr != nil {
		return nil, perr
	}
	// go exits non-zero when one module fails; the JSON names which.
	for _, m := range mods {
		if m.Dir == "" {
			return nil, fmt.Errorf("go mod download %s@%s failed in %s: %s", m.Path, m.Version, dir, m.Error)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("go mod download in %s: %v: %s", dir, err, firstLine(stderr.String()))
	}
	return mods, nil
}

func parseDownload(out []byte) ([]Module, error) {
	var mods []Module
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var m struct{ Path, Version, Dir, Error string }
		if err := dec.Decode(&m); err == io.EOF {
			return mods, nil
		} else if err != nil {
			return nil, fmt.Errorf("go mod download -json: %v", err)
		}
		mods = append(mods, Module{Path: m.Path, Version: m.Version, Dir: m.Dir, Error: m.Error})
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// licenceFileRE matches the names under which modules ship their licence:
// LICENSE, LICENCE.txt, COPYING, LICENSE-APACHE, ... Source files that
// merely share the name (license.go, licence_test.go) are not licences.
var licenceFileRE = regexp.MustCompile(`(?i)^(licen[cs]e|copying|unlicense)([._-][a-z0-9.-]*)?$`)

func isLicenceFile(name string) bool {
	if !licenceFileRE.MatchString(name) {
		return false
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".go", ".java", ".js", ".ts", ".py", ".rs", ".c", ".h", ".json", ".yaml", ".yml", ".html", ".tmpl", ".lre":
		return false
	}
	return true
}

// busl is missing from licensecheck's set; its header names it plainly.
var buslRE = regexp.MustCompile(`(?i)business\s+source\s+license`)

// moduleLicences reads a module's licence files. The top folder's say
// what the module is under; files deeper in the tree (forked or vendored
// code) may only add to the verdict: tflint v0.51+ keeps its MPL-2.0
// LICENSE at the top and a BUSL-1.1 one in terraform/.
func moduleLicences(dir string) (top, nested []string, err error) {
	err = walk(dir, func(path string, d fs.DirEntry) error {
		if !isLicenceFile(d.Name()) || !d.Type().IsRegular() {
			return nil
		}
		text, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		ids := classifyText(text)
		if filepath.Dir(path) == dir {
			top = append(top, ids...)
		} else {
			nested = append(nested, ids...)
		}
		return nil
	})
	return top, nested, err
}

// classifyText names the licences in one licence file by SPDX identifier.
func classifyText(text []byte) []string {
	var ids []string
	if buslRE.Match(text) {
		ids = append(ids, "BUSL-1.1")
	}
	for _, m := range licensecheck.Scan(text).Match {
		ids = append(ids, m.ID)
	}
	return ids
}
