package sarif

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path"
	"slices"
	"strings"

	"tracelab/pkg/trace"

	"gopkg.in/yaml.v3"
)

// Paths maps a service name to where its code is in the repository the
// SARIF is uploaded to: a file or a directory, relative to the
// repository's root, with "/" between its parts, optionally followed by
// "#" and the name of a function or method declared in that file. It is
// the user's placement of the services whose spans name no code of
// theirs (see Placer).
type Paths map[string]string

// LoadPaths reads a Paths file: one YAML mapping (JSON is YAML too) of
// service name to repository path, e.g.
//
//	checkout: services/checkout/src/main/java/com/acme/CheckoutController.java#checkout
//	payment: services/payment
//
// An empty file name is no file: no service mapped.
func LoadPaths(file string) (Paths, error) {
	if file == "" {
		return nil, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", file, oneLine(err.Error()))
	}
	p, err := ParsePaths(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	return p, nil
}

// ParsePaths reads the mapping LoadPaths reads from data. Each path is
// checked to stay inside the repository: relative, without "..", without a
// URI scheme; code scanning cannot place anything else.
func ParsePaths(data []byte) (Paths, error) {
	var raw map[string]string
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("not a mapping of service name to repository path (%s); write one `service: path/in/repo` per line", oneLine(err.Error()))
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("maps no service; write one `service: path/in/repo` per line")
	}
	p := Paths{}
	for service, where := range raw {
		where, fn, hasFn := strings.Cut(where, "#")
		clean, err := repoPath(where)
		if err != nil {
			return nil, fmt.Errorf("service %q: %v", service, err)
		}
		if hasFn {
			if !isIdent(fn) {
				return nil, fmt.Errorf("service %q: %q after # is not a function name; write path/to/File.java#method", service, fn)
			}
			clean += "#" + fn
		}
		p[service] = clean
	}
	return p, nil
}

// repoPath checks that where names a place inside the repository and
// returns it cleaned, without a trailing slash.
func repoPath(where string) (string, error) {
	w := strings.TrimSpace(where)
	switch {
	case w == "":
		return "", fmt.Errorf("the path is empty; give a path relative to the repository's root, e.g. services/checkout")
	case strings.Contains(w, "\\"):
		return "", fmt.Errorf("path %q has a backslash; separate its parts with /", where)
	case strings.HasPrefix(w, "/") || hasScheme(w):
		return "", fmt.Errorf("path %q is absolute; give it relative to the repository's root, e.g. services/checkout", where)
	}
	clean := path.Clean(w)
	if clean == "." || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("path %q is not inside the repository; give it relative to the repository's root, e.g. services/checkout", where)
	}
	return clean, nil
}

// hasScheme reports whether s starts like a URI with a scheme ("file:",
// "https:") or a Windows drive ("C:"): anything before the first "/" with
// a colon in it.
func hasScheme(s string) bool {
	first, _, _ := strings.Cut(s, "/")
	return strings.Contains(first, ":")
}

// Placer puts each result somewhere in the repository, in this order:
//  1. the code that made the finding's spans (detect.Finding.Code: their
//     OpenTelemetry code attributes, or their handler's), found in Repo;
//  2. the user's Paths for the finding's service, checked by NewPlacer to
//     exist;
//  3. the repository itself. GitHub code scanning refuses a whole upload
//     when one result has no artifact location ("locationFromSarifResult:
//     expected a physical location", see github_test.go), so such a
//     result sits at line 1 of the repository's README, a file that
//     exists and says where the code is not known, rather than at a path
//     made up from the service's name. A repository without a README at
//     its root leaves it with its logical location only (Unplaced says
//     how many).
type Placer struct {
	Repo   *Repo
	mapped map[string]Where
	readme string
}

// Placement says how a result was placed: "code", "map" or "repository".
const (
	PlacedAtCode       = "code"
	PlacedByMap        = "map"
	PlacedInRepository = "repository"
)

// NewPlacer checks paths against repo: each path must exist, and a
// function after "#" must be declared in its file. Errors are one line
// naming the service.
func NewPlacer(repo *Repo, paths Paths) (*Placer, error) {
	p := &Placer{Repo: repo, mapped: map[string]Where{}}
	for _, service := range slices.Sorted(maps.Keys(paths)) {
		where, fn, hasFn := strings.Cut(paths[service], "#")
		dir, ok := repo.Exists(where)
		switch {
		case !ok:
			return nil, fmt.Errorf("service %q: %s does not exist in the repository at %s; map it to a file or directory there (or set the repository's root with --repo)", service, where, repo.Root)
		case hasFn && dir:
			return nil, fmt.Errorf("service %q: %s is a directory; a #function needs the file that declares it", service, where)
		}
		line := 1
		if hasFn {
			declares, found := declarer(fn), false
			for i, l := range repo.fileLines(where) {
				if declares(l) {
					line, found = i+1, true
					break
				}
			}
			if !found {
				return nil, fmt.Errorf("service %q: %s declares no function %s", service, where, fn)
			}
		}
		p.mapped[service] = Where{where, line}
	}
	for _, f := range repo.list() {
		if !strings.Contains(f, "/") && strings.HasPrefix(strings.ToLower(f), "readme") && (p.readme == "" || f == "README.md") {
			p.readme = f
		}
	}
	return p, nil
}

// place is the physical location of a result of service whose spans were
// made by code (nil: not known), and how it was placed; nil when the
// repository has no README to hold it.
func (p *Placer) place(service string, code *trace.Code) (*PhysicalLocation, string) {
	at := func(w Where) *PhysicalLocation {
		return &PhysicalLocation{
			ArtifactLocation: ArtifactLocation{URI: pathURI(w.Path), URIBaseID: SourceRoot},
			Region:           Region{StartLine: w.Line},
		}
	}
	if p == nil {
		return nil, PlacedInRepository
	}
	if code != nil {
		if w, ok := p.Repo.Locate(*code); ok {
			return at(w), PlacedAtCode
		}
	}
	if w, ok := p.mapped[service]; ok {
		return at(w), PlacedByMap
	}
	if p.readme != "" {
		return at(Where{p.readme, 1}), PlacedInRepository
	}
	return nil, PlacedInRepository
}

// requestService is the service of a request type, "service operation":
// the longest mapped service it starts with, or its first word.
func (p *Placer) requestService(request string) string {
	best := ""
	if p == nil {
		p = &Placer{}
	}
	for service := range p.mapped {
		if strings.HasPrefix(request, service+" ") && len(service) > len(best) {
			best = service
		}
	}
	if best != "" {
		return best
	}
	first, _, _ := strings.Cut(request, " ")
	return first
}

// pathURI writes a repository path as a relative URI reference: each
// byte outside RFC 3986's unreserved set percent-encoded, so a colon in
// the first segment cannot read as a scheme and a space or "#" cannot end
// the path.
func pathURI(p string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '.', c == '_', c == '~', c == '/':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
