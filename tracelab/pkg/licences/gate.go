package licences

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Gate checks the licences of everything the lab builds.
type Gate struct {
	Root      string
	Policy    *Policy
	Download  GoDownload   // GoModDownload, or a fake in tests
	Collect   MavenCollect // MvnCollect, or a fake in tests
	MavenRepo string       // the local repository the POMs are read from
	Progress  io.Writer
}

// Report is what the gate found.
type Report struct {
	GoModules, MavenArtifacts, NpmPackages int
	Violations                             []string // one line each
	Exceptions                             []string // exceptions of the policy that were used
	Checked                                []string // each package checked and the licences found
	FailedFast                             bool     // stopped at the deny list of module paths
}

// Run checks every package. An error means the gate could not look (a
// failed download, an unreadable file), never that a licence is wrong.
func (g *Gate) Run() (*Report, error) {
	r := &Report{}
	dirs, err := findGoMods(g.Root)
	if err != nil {
		return nil, err
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no go.mod under %s: nothing to check is not a pass", g.Root)
	}
	var required []Module
	for _, dir := range dirs {
		mods, err := requirements(g.Root, dir)
		if err != nil {
			return nil, err
		}
		required = append(required, mods...)
	}
	tools, err := toolModules(g.Root)
	if err != nil {
		return nil, err
	}
	required = append(required, tools.Modules...)

	// The known AGPL modules fail the gate before anything is downloaded:
	// their trees are large and their verdict is already known.
	seen := map[string]bool{}
	for _, m := range required {
		lic := g.Policy.deniedModule(m.Path)
		// go.mod and go.sum name the same module: one line per module tree.
		if lic == "" || seen[m.Path+" "+filepath.Dir(m.Source)] {
			continue
		}
		seen[m.Path+" "+filepath.Dir(m.Source)] = true
		if g.except(r, "go", m.Path, m.Version, lic) {
			continue
		}
		r.Violations = append(r.Violations, fmt.Sprintf("go module %s %s (%s): %s: on the deny list of module paths (%s)", m.Path, m.Version, m.Source, lic, PolicyFile))
	}
	if len(r.Violations) > 0 {
		r.FailedFast = true
		return r, nil
	}

	checked := map[string]bool{}
	judgeGo := func(m Module, source string) error {
		key := m.Path + "@" + m.Version
		if checked[key] {
			return nil
		}
		checked[key] = true
		top, nested, err := moduleLicences(m.Dir)
		if err != nil {
			return err
		}
		r.Checked = append(r.Checked, fmt.Sprintf("go module %s %s: %s", m.Path, m.Version, describe(append(top, nested...))))
		v := g.Policy.judgeAll(top)
		if n := g.Policy.judgeAll(nested); n == denied {
			v = denied
		}
		if v != permitted {
			g.violate(r, v, "go module", m.Path, m.Version, source, describe(append(top, nested...)), "go", m.Path)
		}
		return nil
	}
	for _, dir := range dirs {
		g.progress("licences: Go modules of %s", filepath.Join(dir, "go.mod"))
		mods, err := g.Download(filepath.Join(g.Root, dir), tools.NoSumDB)
		if err != nil {
			return nil, err
		}
		for _, m := range mods {
			if err := judgeGo(m, filepath.Join(dir, "go.mod")); err != nil {
				return nil, err
			}
		}
	}
	if err := g.checkTools(tools, judgeGo); err != nil {
		return nil, err
	}
	r.GoModules = len(checked)

	for _, c := range tools.Crates {
		// No crate licence is read: a crate passes only as a written exception.
		if !g.except(r, "cargo", c.Name, c.Version, "") {
			r.Violations = append(r.Violations, fmt.Sprintf("cargo crate %s %s (%s): licence not checked (the gate reads no crate licences); add it to the exceptions of %s with its licence and a reason", c.Name, c.Version, c.Source, PolicyFile))
		}
	}
	if err := g.checkMaven(r); err != nil {
		return nil, err
	}
	return r, g.checkOthers(r)
}

// checkTools downloads the modules tools.sh builds, one go command for all.
func (g *Gate) checkTools(tools *Tools, judge func(Module, string) error) error {
	g.progress("licences: the Go modules infra/local/tools.sh builds")
	sources := map[string]string{}
	var args []string
	for _, m := range tools.Modules {
		key := m.Path + "@" + m.Version
		if _, ok := sources[key]; !ok {
			args = append(args, key)
		}
		sources[key] = m.Source
	}
	// Outside any module, so that no go.mod of the lab is read or changed.
	tmp, err := os.MkdirTemp("", "licences-tools-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	mods, err := g.Download(tmp, tools.NoSumDB, args...)
	if err != nil {
		return err
	}
	for _, m := range mods {
		if err := judge(m, sources[m.Path+"@"+m.Version]); err != nil {
			return err
		}
	}
	return nil
}

// checkMaven judges every artifact of every top-level pom.xml of the tree
// (services/pom.xml and its modules). The lab's own modules are skipped.
func (g *Gate) checkMaven(r *Report) error {
	poms, err := topPoms(g.Root)
	if err != nil {
		return err
	}
	repo := &mavenRepo{dir: g.MavenRepo, cache: map[Artifact][]pomLicence{}}
	for _, p := range poms {
		g.progress("licences: Maven artifacts of %s", p)
		own, err := pomGroup(filepath.Join(g.Root, p))
		if err != nil {
			return err
		}
		arts, err := g.Collect(filepath.Join(g.Root, p))
		if err != nil {
			return err
		}
		if len(arts) == 0 {
			return fmt.Errorf("%s: Maven resolved no dependency; nothing checked is not a pass", p)
		}
		for _, a := range arts {
			if a.Group == own {
				continue
			}
			r.MavenArtifacts++
			lics, err := repo.licences(a)
			if err != nil {
				return err
			}
			var choices [][]string
			var names, ids []string
			for _, l := range lics {
				choices = append(choices, []string{l.id()})
				names = append(names, fmt.Sprintf("%q", l))
				ids = append(ids, l.id())
			}
			r.Checked = append(r.Checked, fmt.Sprintf("maven artifact %s: %s = %s", a, describe(names), strings.Join(ids, " | ")))
			if v := g.Policy.judgeChoices(choices); v != permitted {
				g.violate(r, v, "maven artifact", a.Group+":"+a.Name, a.Version, p, describe(names), "maven", a.Group+":"+a.Name)
			}
		}
	}
	return nil
}

// checkOthers judges npm's lock files and refuses manifests of ecosystems
// the gate cannot read.
func (g *Gate) checkOthers(r *Report) error {
	pkgs, problems, err := otherEcosystems(g.Root)
	if err != nil {
		return err
	}
	r.Violations = append(r.Violations, problems...)
	for _, p := range pkgs {
		r.NpmPackages++
		r.Checked = append(r.Checked, fmt.Sprintf("npm package %s %s: %s", p.Name, p.Version, p.Licence))
		if v := g.Policy.judgeChoices(spdxChoices(p.Licence)); v != permitted {
			found := []string{}
			if p.Licence != "" {
				found = append(found, p.Licence)
			}
			g.violate(r, v, "npm package", p.Name, p.Version, p.Source, describe(found), "npm", p.Name)
		}
	}
	return nil
}

func (g *Gate) violate(r *Report, v verdict, kind, name, version, source, found, ecosystem, key string) {
	if g.except(r, ecosystem, key, version, found) {
		return
	}
	what := "denied"
	if v == unknown {
		what = "not a licence the policy names; read it, then permit it or add an exception with a reason"
		if found == "no licence found" {
			what = "no licence, so no right to use it"
		}
	}
	r.Violations = append(r.Violations, fmt.Sprintf("%s %s %s (%s): %s: %s (%s)", kind, name, version, source, found, what, PolicyFile))
}

// except reports whether the policy accepts the package anyway, and notes
// the exception used.
func (g *Gate) except(r *Report, ecosystem, name, version, found string) bool {
	e := g.Policy.exception(ecosystem, name)
	if e == nil {
		return false
	}
	lic := e.Licence
	if lic == "" {
		lic = found
	}
	r.Exceptions = append(r.Exceptions, fmt.Sprintf("%s %s %s (%s): %s", ecosystem, name, version, lic, strings.Join(strings.Fields(e.Reason), " ")))
	return true
}

func (g *Gate) progress(format string, a ...any) {
	if g.Progress != nil {
		fmt.Fprintf(g.Progress, format+"\n", a...)
	}
}

// topPoms lists the pom.xml files no other pom.xml above them aggregates.
func topPoms(root string) ([]string, error) {
	var poms []string
	err := walk(root, func(path string, d fs.DirEntry) error {
		if d.IsDir() {
			if _, err := os.Stat(filepath.Join(path, "pom.xml")); err == nil {
				rel, _ := filepath.Rel(root, filepath.Join(path, "pom.xml"))
				poms = append(poms, rel)
				return filepath.SkipDir
			}
		}
		return nil
	})
	sort.Strings(poms)
	return poms, err
}
