// Package docslinks checks the README and docs/ as a newcomer meets them:
// a short README, every page of docs/ reachable from it, and no link that
// leads out of the repository or to nothing.
package docslinks

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"tracelab/internal/repotest"
)

// maxReadmeLines keeps the README a five-minute read; the rest is in docs/.
const maxReadmeLines = 350

// link is a Markdown link or image: [text](target). Code spans and blocks
// are skipped before matching.
var (
	link      = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)
	codeBlock = regexp.MustCompile("(?s)```.*?```")
	codeSpan  = regexp.MustCompile("`[^`\n]*`")
	heading   = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
)

func TestReadme(t *testing.T) {
	root := repotest.Root(t)
	readme := read(t, filepath.Join(root, "README.md"))
	if n := strings.Count(readme, "\n"); n >= maxReadmeLines {
		t.Errorf("README.md has %d lines, want under %d: move the detail to docs/", n, maxReadmeLines)
	}
	linked := map[string]bool{}
	for _, target := range links(readme) {
		if p, ok := checkLink(t, root, root, "README.md", target); ok {
			linked[p] = true
		}
	}
	pages, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if len(pages) == 0 {
		t.Fatal("no docs/*.md")
	}
	for _, p := range pages {
		rel, _ := filepath.Rel(root, p)
		if !linked[rel] {
			t.Errorf("README.md does not link %s: every page of docs/ must be reachable from it", rel)
		}
	}
}

// Every link of docs/ and of the scenarios' READMEs stays inside the
// repository and reaches a file, and its anchor a heading there.
func TestDocsLinks(t *testing.T) {
	root := repotest.Root(t)
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	more, _ := filepath.Glob(filepath.Join(root, "scenarios", "*", "README.md"))
	for _, f := range append(files, more...) {
		rel, _ := filepath.Rel(root, f)
		for _, target := range links(read(t, f)) {
			checkLink(t, root, filepath.Dir(f), rel, target)
		}
	}
}

func links(md string) []string {
	md = codeBlock.ReplaceAllString(md, "")
	md = codeSpan.ReplaceAllString(md, "")
	var out []string
	for _, m := range link.FindAllStringSubmatch(md, -1) {
		out = append(out, m[1])
	}
	return out
}

// checkLink reports a link of file (in dir) that leaves the repository or
// leads nowhere; it returns the target's path from root when it is a file
// of the repository.
func checkLink(t *testing.T, root, dir, file, target string) (string, bool) {
	t.Helper()
	if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") {
		if strings.Contains(target, "/shared/") {
			t.Errorf("%s: %s points at the workspace's shared folder, which a clone does not have", file, target)
		}
		return "", false
	}
	if strings.Contains(target, ":") {
		t.Errorf("%s: %s: only http(s) and paths inside the repository", file, target)
		return "", false
	}
	path, anchor, _ := strings.Cut(target, "#")
	abs := filepath.Join(dir, path)
	if path == "" {
		abs = filepath.Join(dir, filepath.Base(file))
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		t.Errorf("%s: %s leaves the repository", file, target)
		return "", false
	}
	if _, err := os.Stat(abs); err != nil {
		t.Errorf("%s: %s: no such file in the repository", file, target)
		return "", false
	}
	if anchor != "" && strings.HasSuffix(abs, ".md") && !hasAnchor(read(t, abs), anchor) {
		t.Errorf("%s: %s: %s has no heading with that anchor", file, target, rel)
	}
	return rel, true
}

// hasAnchor: a heading whose GitHub anchor is a (lower case, punctuation
// dropped, spaces as dashes).
func hasAnchor(md, a string) bool {
	md = codeBlock.ReplaceAllString(md, "")
	for _, m := range heading.FindAllStringSubmatch(md, -1) {
		h := strings.ToLower(strings.TrimSpace(m[1]))
		var b strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
				b.WriteRune(r)
			}
		}
		if b.String() == a {
			return true
		}
	}
	return false
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// No file of the repository cites the case studies by their place in the
// workspace this lab was built in: a clone does not have it.
func TestNoWorkspacePaths(t *testing.T) {
	root := repotest.Root(t)
	skip := map[string]bool{".git": true, ".state": true, "node_modules": true, "target": true}
	needle := "shared/" + "seeds" // split, so this file does not match itself
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if skip[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > 4<<20 {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), needle) {
			rel, _ := filepath.Rel(root, p)
			t.Errorf("%s names %s: tell the case in the scenario's README instead", rel, needle)
		}
		return nil
	})
}
