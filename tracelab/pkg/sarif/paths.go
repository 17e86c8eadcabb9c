package sarif

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"strings"

	"gopkg.in/yaml.v3"
)

// Paths maps a service name to where its code is in the repository the
// SARIF is uploaded to: a file or a directory, relative to the
// repository's root, with "/" between its parts. A service it does not
// name is placed at DefaultPath(service).
type Paths map[string]string

// LoadPaths reads a Paths file: one YAML mapping (JSON is YAML too) of
// service name to repository path, e.g.
//
//	checkout: services/checkout/src/main/java/com/acme/CheckoutController.java
//	payment: services/payment
//
// An empty file name is no file: every service at its default path.
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
		clean, err := repoPath(where)
		if err != nil {
			return nil, fmt.Errorf("service %q: %v", service, err)
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

// DefaultPath is where a service no mapping names is placed: a top-level
// directory named after it, in the characters a path segment keeps
// portably (others become "-").
func DefaultPath(service string) string {
	var b strings.Builder
	for _, r := range service {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	s := strings.Trim(b.String(), "-")
	if s == "" || strings.Trim(s, ".") == "" {
		return "unknown-service"
	}
	return s
}

// For is the repository path of service.
func (p Paths) For(service string) string {
	if where, ok := p[service]; ok {
		return where
	}
	return DefaultPath(service)
}

// place is the physical location of a result of service: its path as a
// relative URI reference, at line 1, since a trace names no line. Line 1 is
// what GitHub shows for a file-level result and what its upload action
// assumes for a region without one.
func (p Paths) place(service string) *PhysicalLocation {
	return &PhysicalLocation{
		ArtifactLocation: ArtifactLocation{URI: pathURI(p.For(service)), URIBaseID: SourceRoot},
		Region:           Region{StartLine: 1},
	}
}

// requestService is the service of a request type, "service operation":
// the longest mapped service it starts with, or its first word.
func (p Paths) requestService(request string) string {
	best := ""
	for service := range p {
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
