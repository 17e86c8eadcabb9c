package licences

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Artifact is one Maven artifact of the services' dependency graph.
type Artifact struct{ Group, Name, Version string }

func (a Artifact) String() string { return a.Group + ":" + a.Name + ":" + a.Version }

// MavenCollect lists the artifacts that building pom (every scope, every
// module of the reactor) resolves.
type MavenCollect func(pom string) ([]Artifact, error)

// mavenDependencyPlugin is the version tools.sh uses too.
const mavenDependencyPlugin = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"

// MvnCollect is MavenCollect by the dependency plugin's collect goal: it
// builds the graph from POMs alone (no jar is downloaded), so it needs no
// prior build of the services, and the reactor's own modules need not be
// installed as `dependency:list` would need them.
func MvnCollect(pom string) ([]Artifact, error) {
	out, err := os.CreateTemp("", "licences-mvn-*.txt")
	if err != nil {
		return nil, err
	}
	out.Close()
	defer os.Remove(out.Name())
	cmd := exec.Command("mvn", "-B", "-q", "-f", pom, mavenDependencyPlugin+":collect",
		"-DoutputFile="+out.Name(), "-DappendOutput=true")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("mvn dependency:collect on %s: %v: %s", pom, err, mavenError(log.String()))
	}
	data, err := os.ReadFile(out.Name())
	if err != nil {
		return nil, err
	}
	return parseCollect(string(data))
}

func mavenError(log string) string {
	for _, line := range strings.Split(log, "\n") {
		if strings.HasPrefix(line, "[ERROR]") || strings.HasPrefix(line, "[FATAL]") {
			return strings.TrimSpace(line)
		}
	}
	return firstLine(log)
}

// collectLineRE: "   group:artifact:type[:classifier]:version:scope", then
// maybe " (optional)" or " -- module name".
var collectLineRE = regexp.MustCompile(`^\s+([\w.-]+):([\w.-]+):[\w.-]+:(?:[\w.-]+:)?([\w.+-]+):(compile|runtime|provided|test|system|import)\b`)

func parseCollect(text string) ([]Artifact, error) {
	seen := map[Artifact]bool{}
	var arts []Artifact
	for _, line := range strings.Split(text, "\n") {
		m := collectLineRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		a := Artifact{m[1], m[2], m[3]}
		if !seen[a] {
			seen[a] = true
			arts = append(arts, a)
		}
	}
	sort.Slice(arts, func(i, j int) bool { return arts[i].String() < arts[j].String() })
	return arts, nil
}

type pom struct {
	Parent struct {
		GroupID    string `xml:"groupId"`
		ArtifactID string `xml:"artifactId"`
		Version    string `xml:"version"`
	} `xml:"parent"`
	GroupID  string       `xml:"groupId"`
	Licenses []pomLicence `xml:"licenses>license"`
}

type pomLicence struct {
	Name string `xml:"name"`
	URL  string `xml:"url"`
}

// id names the licence by its name, or else by its URL; "" when the gate
// cannot tell.
func (l pomLicence) id() string {
	if id := idFromName(l.Name); id != "" {
		return id
	}
	return idFromName(l.URL)
}

func (l pomLicence) String() string {
	if l.Name != "" {
		return strings.TrimSpace(l.Name)
	}
	return strings.TrimSpace(l.URL)
}

func (r *mavenRepo) pomPath(a Artifact) string {
	return filepath.Join(r.dir, filepath.FromSlash(strings.ReplaceAll(a.Group, ".", "/")), a.Name, a.Version, a.Name+"-"+a.Version+".pom")
}

// mavenRepo reads POMs from a local repository (~/.m2/repository), where
// collecting the graph has just put them.
type mavenRepo struct {
	dir   string
	cache map[Artifact][]pomLicence
}

// licences returns an artifact's licence names, from its POM or, when that
// names none, from the nearest parent POM that does.
func (r *mavenRepo) licences(a Artifact) ([]pomLicence, error) {
	if names, ok := r.cache[a]; ok {
		return names, nil
	}
	var names []pomLicence
	cur := a
	for depth := 0; depth < 20; depth++ {
		data, err := os.ReadFile(r.pomPath(cur))
		if err != nil {
			return nil, fmt.Errorf("POM of %s not in %s (mvn dependency:collect should have fetched it)", cur, r.dir)
		}
		var p pom
		if err := decodePom(data, &p); err != nil {
			return nil, fmt.Errorf("POM of %s: %v", cur, err)
		}
		names = append(names, p.Licenses...)
		if len(names) > 0 || p.Parent.ArtifactID == "" {
			break
		}
		cur = Artifact{p.Parent.GroupID, p.Parent.ArtifactID, p.Parent.Version}
	}
	r.cache[a] = names
	return names, nil
}

// decodePom reads a POM in any declared encoding. Old Apache parents say
// ISO-8859-1; what the gate reads of them (licence names, coordinates) is
// ASCII, so any other encoding's bytes pass through unchanged.
func decodePom(data []byte, p *pom) error {
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.CharsetReader = func(charset string, in io.Reader) (io.Reader, error) {
		if strings.EqualFold(charset, "ISO-8859-1") || strings.EqualFold(charset, "latin1") {
			b, err := io.ReadAll(in)
			r := make([]rune, len(b))
			for i, c := range b {
				r[i] = rune(c)
			}
			return strings.NewReader(string(r)), err
		}
		return in, nil
	}
	return dec.Decode(p)
}

// pomGroup is the groupId of the lab's own POM: its modules are the lab's.
func pomGroup(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var p pom
	if err := decodePom(data, &p); err != nil {
		return "", fmt.Errorf("%s: %v", path, err)
	}
	if p.GroupID == "" {
		return p.Parent.GroupID, nil
	}
	return p.GroupID, nil
}

// licenceNames maps the free-text licence names of POMs (and their URLs)
// to SPDX identifiers. Order matters: the GPL family's names contain one
// another.
var licenceNames = []struct {
	re *regexp.Regexp
	id string
}{
	{regexp.MustCompile(`(?i)affero|\bagpl`), "AGPL-3.0"},
	{regexp.MustCompile(`(?i)server side public|\bsspl`), "SSPL-1.0"},
	{regexp.MustCompile(`(?i)business source|\bbusl`), "BUSL-1.1"},
	{regexp.MustCompile(`(?i)lesser general public|library general public|\blgpl`), "LGPL"},
	{regexp.MustCompile(`(?i)(gpl|general public).*(classpath|\bcpe\b)|classpath exception`), "GPL-2.0-with-classpath-exception"},
	{regexp.MustCompile(`(?i)general public|\bgpl`), "GPL"},
	{regexp.MustCompile(`(?i)apache|\basl\b`), "Apache-2.0"},
	{regexp.MustCompile(`(?i)\bmit\b|bouncy castle`), "MIT"},
	{regexp.MustCompile(`(?i)eclipse distribution|\bedl\b`), "EDL-1.0"},
	{regexp.MustCompile(`(?i)eclipse public|\bepl\b`), "EPL"},
	{regexp.MustCompile(`(?i)\bbsd\b|\bgo license`), "BSD"},
	{regexp.MustCompile(`(?i)mozilla public|\bmpl\b`), "MPL"},
	{regexp.MustCompile(`(?i)common development and distribution|\bcddl\b`), "CDDL"},
	{regexp.MustCompile(`(?i)universal permissive|\bupl\b`), "UPL-1.0"},
	{regexp.MustCompile(`(?i)\bcc0\b|creative commons zero`), "CC0-1.0"},
	{regexp.MustCompile(`(?i)public domain`), "Public-Domain"},
	{regexp.MustCompile(`(?i)\bisc\b`), "ISC"},
	{regexp.MustCompile(`(?i)unlicense`), "Unlicense"},
}

// idFromName names a POM licence; "" when the gate cannot tell.
func idFromName(name string) string {
	for _, n := range licenceNames {
		if n.re.MatchString(name) {
			return n.id
		}
	}
	return ""
}
