package licences

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Package is an npm package of a package-lock.json.
type Package struct{ Name, Version, Licence, Source string }

// lockedFiles are the files that say which packages of other ecosystems
// the lab builds. npm's lock file carries each package's declared licence,
// so the gate can judge it offline; for the others it has no reader yet,
// and finding one fails the gate rather than passing it unread.
var lockedFiles = map[string]string{
	"package-lock.json": "npm",
	"package.json":      "npm",
	"Cargo.toml":        "cargo",
	"Cargo.lock":        "cargo",
	"requirements.txt":  "PyPI",
	"pyproject.toml":    "PyPI",
	"setup.py":          "PyPI",
	"poetry.lock":       "PyPI",
	"uv.lock":           "PyPI",
}

// otherEcosystems returns the npm packages of every package-lock.json of
// the tree, and one problem line for each manifest the gate cannot read.
func otherEcosystems(root string) ([]Package, []string, error) {
	var pkgs []Package
	var problems []string
	err := walk(root, func(path string, d fs.DirEntry) error {
		eco, ok := lockedFiles[d.Name()]
		if !ok || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		switch {
		case d.Name() == "package-lock.json":
			p, err := readPackageLock(path, rel)
			pkgs = append(pkgs, p...)
			return err
		case d.Name() == "package.json":
			if _, err := os.Stat(filepath.Join(filepath.Dir(path), "package-lock.json")); err != nil {
				problems = append(problems, fmt.Sprintf("%s: no package-lock.json beside it; the gate reads npm licences from the lock file (npm install writes it)", rel))
			}
		default:
			problems = append(problems, fmt.Sprintf("%s: the gate cannot read %s licences yet; teach tracelab/pkg/licences to, or build it elsewhere", rel, eco))
		}
		return nil
	})
	return pkgs, problems, err
}

func readPackageLock(path, rel string) ([]Package, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var lock struct {
		LockfileVersion int `json:"lockfileVersion"`
		Packages        map[string]struct {
			Version string          `json:"version"`
			License json.RawMessage `json:"license"`
			Link    bool            `json:"link"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(data, &lock); err != nil {
		return nil, fmt.Errorf("%s: %v", rel, err)
	}
	// Version 1 lock files carry no licences.
	if lock.LockfileVersion < 2 {
		return nil, fmt.Errorf("%s: lockfileVersion %d carries no licences; write it with npm 7 or later", rel, lock.LockfileVersion)
	}
	var pkgs []Package
	for key, p := range lock.Packages {
		if key == "" || p.Link {
			continue // the project itself, or a workspace of it
		}
		name := key[strings.LastIndex(key, "node_modules/")+len("node_modules/"):]
		pkgs = append(pkgs, Package{Name: name, Version: p.Version, Licence: npmLicence(p.License), Source: rel})
	}
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].Name+pkgs[i].Version < pkgs[j].Name+pkgs[j].Version })
	return pkgs, nil
}

// npmLicence reads "MIT", or the old {"type": "MIT"} form.
func npmLicence(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct{ Type string }
	if json.Unmarshal(raw, &o) == nil {
		return o.Type
	}
	return ""
}

// spdxChoices reads an SPDX expression as the choices a user has, each a
// set of licences that all apply: "(MIT OR Apache-2.0)" offers either,
// "MIT AND BSD-3-Clause" binds both.
func spdxChoices(expr string) [][]string {
	var choices [][]string
	for _, alt := range strings.Split(expr, " OR ") {
		var all []string
		for _, id := range strings.Split(alt, " AND ") {
			if id = strings.TrimSpace(strings.Trim(strings.TrimSpace(id), "()")); id != "" {
				all = append(all, id)
			}
		}
		if len(all) > 0 {
			choices = append(choices, all)
		}
	}
	return choices
}
