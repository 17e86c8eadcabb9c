package sarif

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"tracelab/pkg/trace"
)

// Repo is the repository the SARIF is for, on disk: where a finding's
// code (trace.Code) is looked up, and where a --sarif-map's paths must
// exist. Its files are listed once, on first use.
type Repo struct {
	Root   string
	files  []string // relative to Root, "/" between parts, sorted
	listed bool
	lines  map[string][]string
}

// skipDirs are folders that hold no source of the repository's own:
// dependencies and build output. Folders whose name starts with "." (.git,
// .state, .github's workflows are no code either) are skipped too.
var skipDirs = map[string]bool{"node_modules": true, "target": true, "build": true, "dist": true, "__pycache__": true, "vendor": true}

// OpenRepo checks that root is a directory.
func OpenRepo(root string) (*Repo, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", root, oneLine(err.Error()))
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory; give the repository's root", root)
	}
	return &Repo{Root: root, lines: map[string][]string{}}, nil
}

func (r *Repo) list() []string {
	if r.listed {
		return r.files
	}
	r.listed = true
	filepath.WalkDir(r.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable folder holds nothing we can place at
		}
		if d.IsDir() {
			if p != r.Root && (strings.HasPrefix(d.Name(), ".") || skipDirs[d.Name()]) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			if rel, err := filepath.Rel(r.Root, p); err == nil {
				r.files = append(r.files, filepath.ToSlash(rel))
			}
		}
		return nil
	})
	slices.Sort(r.files)
	return r.files
}

// Exists reports whether rel, a repository path, is a file or directory.
func (r *Repo) Exists(rel string) (dir bool, ok bool) {
	st, err := os.Stat(filepath.Join(r.Root, filepath.FromSlash(rel)))
	if err != nil {
		return false, false
	}
	return st.IsDir(), true
}

// fileLines returns the lines of a repository file, nil if unreadable.
func (r *Repo) fileLines(rel string) []string {
	if ls, ok := r.lines[rel]; ok {
		return ls
	}
	var ls []string
	if f, err := os.Open(filepath.Join(r.Root, filepath.FromSlash(rel))); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			ls = append(ls, sc.Text())
		}
		f.Close()
	}
	r.lines[rel] = ls
	return ls
}

// Where is a place in the repository: a file or directory, at a line (1
// for a directory, or a file whose line is not known).
type Where struct {
	Path string
	Line int
}

// sourceExts are the extensions a class or module name is looked up with:
// the JVM languages, whose fully qualified class names are their files'
// paths (com.example.Foo in com/example/Foo.java), and Python, whose
// dotted module names are too.
var sourceExts = []string{".java", ".kt", ".scala", ".groovy", ".py"}

// Locate finds the code c names in the repository. With a file, the
// repository file whose path is the longest match of its end (code.file.path
// is the path the process saw, often under another root), at its line, or
// else at the function's declaration in it. Without, the function's fully
// qualified name read as a path: dev.tracelab.orders.OrdersResource.create
// is OrdersResource.java under dev/tracelab/orders, at the declaration of
// create. ok is false when nothing matches, or more than one file matches
// equally well: tracelab does not guess between two files.
func (r *Repo) Locate(c trace.Code) (Where, bool) {
	fn := shortName(c.Function)
	if c.File != "" {
		rel, ok := r.bySuffix(c.File)
		if !ok {
			return Where{}, false
		}
		if n := len(r.fileLines(rel)); c.Line > 0 && c.Line <= n {
			return Where{rel, c.Line}, true
		}
		return Where{rel, r.declaration(rel, fn, "")}, true
	}
	if c.Function == "" || strings.ContainsAny(c.Function, "/\\") {
		return Where{}, false
	}
	parts := strings.Split(c.Function, ".")
	// The longest prefix of the name that is a file: the class (Java) or
	// the module (Python), the rest being its members.
	for k := len(parts) - 1; k >= 1; k-- {
		class := parts[k-1]
		if i := strings.IndexByte(class, '$'); i > 0 { // Main$1, Main$Inner: in Main's file
			class = class[:i]
		}
		stem := strings.Join(append(slices.Clone(parts[:k-1]), class), "/")
		var found []string
		for _, ext := range sourceExts {
			found = append(found, r.withSuffix(stem+ext)...)
		}
		switch len(found) {
		case 0:
			continue
		case 1:
			return Where{found[0], r.declaration(found[0], fn, parts[k-1])}, true
		}
		return Where{}, false
	}
	return Where{}, false
}

// shortName is a function's own name: the last part of a qualified name,
// without a lambda's or synthetic method's suffix.
func shortName(function string) string {
	name := function
	if i := strings.LastIndexAny(name, ".:"); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.IndexByte(name, '$'); i > 0 {
		name = name[:i]
	}
	return name
}

// withSuffix returns the repository files that are suffix or end with
// "/"+suffix.
func (r *Repo) withSuffix(suffix string) []string {
	var out []string
	for _, f := range r.list() {
		if f == suffix || strings.HasSuffix(f, "/"+suffix) {
			out = append(out, f)
		}
	}
	return out
}

// bySuffix finds the repository file that shares the most trailing path
// parts with file (at least its name), one of the two paths ending the
// other; false when none does or two tie.
func (r *Repo) bySuffix(file string) (string, bool) {
	want := strings.Split(strings.Trim(path.Clean(strings.ReplaceAll(file, "\\", "/")), "/"), "/")
	best, bestN, tie := "", 0, false
	for _, f := range r.withSuffix(want[len(want)-1]) {
		have := strings.Split(f, "/")
		n := 0
		for n < len(have) && n < len(want) && have[len(have)-1-n] == want[len(want)-1-n] {
			n++
		}
		if n != len(have) && n != len(want) {
			continue // they part before either ends: a different file of the same name
		}
		switch {
		case n > bestN:
			best, bestN, tie = f, n, false
		case n == bestN:
			tie = true
		}
	}
	return best, bestN > 0 && !tie
}

// declaration is the line of fn's declaration in the file rel: the first
// that declares it, in the languages' usual forms. Without one (a method
// inherited, as Spring Data's findAll), the line that declares the class
// or type named class; without that, line 1.
func (r *Repo) declaration(rel, fn, class string) int {
	lines := r.fileLines(rel)
	if fn != "" && isIdent(fn) {
		declares := declarer(fn)
		for i, l := range lines {
			if declares(l) {
				return i + 1
			}
		}
	}
	if class != "" && isIdent(class) {
		re := regexp.MustCompile(`\b(class|interface|enum|record|object|trait)\s+` + regexp.QuoteMeta(class) + `\b`)
		for i, l := range lines {
			if re.MatchString(l) {
				return i + 1
			}
		}
	}
	return 1
}

var identRE = regexp.MustCompile(`^[\p{L}_$][\p{L}\p{N}_$]*$`)

func isIdent(s string) bool { return identRE.MatchString(s) }

// statementWords end what may come before a name in a statement that
// calls it rather than declares it (return foo(), new Foo(), throw bar()).
var statementWords = map[string]bool{"return": true, "new": true, "throw": true, "else": true, "case": true, "yield": true, "await": true, "assert": true, "do": true}

// javaDecl is what a JVM method declaration puts before its name:
// annotations, modifiers, type parameters and a return type, ending in
// white space. A call has none of these, or a "." (obj.name) or an
// operator right before the name.
var javaDeclPrefix = regexp.MustCompile(`^\s*([\p{L}\p{N}_$<>\[\],.?@\s]*\s)$`)

// declarer returns whether a line declares fn: def fn( (Python), func fn(
// or func (r T) fn( (Go), fun fn( (Kotlin), function fn( (JavaScript),
// def fn (Scala), or a JVM method declaration: a return type and
// modifiers, then fn(.
func declarer(fn string) func(line string) bool {
	q := regexp.QuoteMeta(fn)
	keyword := regexp.MustCompile(`^\s*(async\s+)?def\s+` + q + `\s*[(\[:=]` +
		`|^func\s+(\([^)]*\)\s*)?` + q + `\s*[(\[]` +
		`|\bfun\s+(<[^>]*>\s*)?([\p{L}\p{N}_$.]+\.)?` + q + `\s*\(` +
		`|\bfunction\s*\*?\s*` + q + `\s*\(`)
	return func(line string) bool { return keyword.MatchString(line) || jvmDeclares(line, fn) }
}

// jvmDeclares reports whether line declares the JVM method fn.
func jvmDeclares(line, fn string) bool {
	i := strings.Index(line, fn)
	for i >= 0 {
		before, after := line[:i], line[i+len(fn):]
		if m := javaDeclPrefix.FindStringSubmatch(before); m != nil && strings.HasPrefix(strings.TrimLeft(after, " \t"), "(") {
			fields := strings.Fields(m[1])
			if len(fields) > 0 && !statementWords[fields[len(fields)-1]] {
				return true
			}
		}
		j := strings.Index(line[i+1:], fn)
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}
