package source

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"tracelab/pkg/backend"
)

// Style is how the parameters were spelled, so a message names them as the
// user wrote them.
type Style int

const (
	Flags Style = iota // analyze: --jaeger URL --service S --since 10m
	SRC                // compare: jaeger:URL?service=S&since=10m
)

func (st Style) name(p string) string {
	if st == Flags {
		return "--" + p
	}
	return p + "="
}

func (st Style) is(p, v string) string {
	if st == Flags {
		return fmt.Sprintf("--%s %q", p, v)
	}
	return fmt.Sprintf("%s=%q", p, v)
}

func (st Style) kind(k Kind) string {
	if st == Flags {
		return "--" + string(k)
	}
	return "the " + string(k) + ": source"
}

// Parameters of each kind beyond the one naming it, and those of every
// remote kind.
var (
	kindParams = map[Kind][]string{
		File:   nil,
		Jaeger: {"service", "operation"},
		Tempo:  {"query"},
	}
	remoteParams = []string{"since", "start", "end", "limit", "timeout", "max-response-bytes"}
	kinds        = []Kind{File, Jaeger, Tempo}
	// limitParams bound the parse of every kind (otlp.Limits).
	limitParams = []string{"max-attr-depth", "max-attr-bytes", "max-trace-spans", "max-spans"}
)

// Names lists every parameter, the kinds first.
func Names() []string {
	out := []string{string(File), string(Jaeger), string(Tempo)}
	for _, k := range kinds {
		out = append(out, kindParams[k]...)
	}
	out = append(out, remoteParams...)
	return append(out, limitParams...)
}

// Parse reads a source from the parameters that were given (an absent one
// takes its default): exactly one of file, jaeger and tempo, whose value is
// the path or the URL, and the parameters of that kind. now is what since
// counts back from.
func Parse(params map[string]string, st Style, now time.Time) (*Source, error) {
	var given []Kind
	for _, k := range kinds {
		if _, ok := params[string(k)]; ok {
			given = append(given, k)
		}
	}
	switch len(given) {
	case 0:
		return nil, errors.New("no source; give one of --file F|-, --jaeger URL --service S, or --tempo URL --query TRACEQL")
	case 1:
	default:
		names := make([]string, len(given))
		for i, k := range given {
			names[i] = st.kind(k)
		}
		return nil, fmt.Errorf("%s are different sources; give exactly one", strings.Join(names, " and "))
	}
	s := &Source{Kind: given[0]}
	allowed := append([]string{string(s.Kind)}, kindParams[s.Kind]...)
	if s.Kind != File {
		allowed = append(allowed, remoteParams...)
	}
	allowed = append(allowed, limitParams...)
	for _, p := range Names() {
		if _, ok := params[p]; ok && !slices.Contains(allowed, p) {
			if st == SRC {
				return nil, fmt.Errorf("%s has an unknown parameter %q; use %s", st.kind(s.Kind), p, strings.Join(allowed[1:], ", "))
			}
			return nil, fmt.Errorf("--%s %s; it does not go with %s", p, owner(p), st.kind(s.Kind))
		}
	}
	for p := range params {
		if !slices.Contains(allowed, p) {
			return nil, fmt.Errorf("%s has an unknown parameter %q; use %s", st.kind(s.Kind), p, strings.Join(allowed[1:], ", "))
		}
	}

	for i, field := range []*int{&s.Limits.MaxDepth, &s.Limits.MaxValueBytes, &s.Limits.MaxSpansPerTrace, &s.Limits.MaxSpans} {
		p := limitParams[i]
		if v, ok := params[p]; ok {
			n, err := strconv.Atoi(v)
			if err != nil || n == 0 || n < -1 {
				return nil, fmt.Errorf("%s: it must be a whole number, at least 1, or -1 for no limit", st.is(p, v))
			}
			*field = n
		}
	}

	if s.Kind == File {
		s.Path = params["file"]
		if s.Path == "" {
			return nil, fmt.Errorf("%s is empty: give an OTLP JSON file (Jaeger api/v3, plain OTLP or Tempo), or - for stdin", st.kind(File))
		}
		return s, nil
	}

	raw := params[string(s.Kind)]
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
		return nil, fmt.Errorf("%s is not an http(s) URL like http://localhost:16686", st.is(string(s.Kind), raw))
	}
	s.URL = strings.TrimRight(raw, "/")
	switch s.Kind {
	case Jaeger:
		s.Service, s.Operation = params["service"], params["operation"]
		if s.Service == "" {
			return nil, fmt.Errorf("%s needs %sS (the service whose traces to fetch)", st.kind(Jaeger), st.name("service"))
		}
	case Tempo:
		s.Query = params["query"]
		if strings.TrimSpace(s.Query) == "" {
			return nil, fmt.Errorf(`%s needs %sTRACEQL, e.g. { resource.service.name = "catalog" }`, st.kind(Tempo), st.name("query"))
		}
	}
	if s.From, s.To, err = window(params, st, now); err != nil {
		return nil, err
	}
	s.Limit = DefaultLimit
	if v, ok := params["limit"]; ok {
		if s.Limit, err = strconv.Atoi(v); err != nil || s.Limit < 1 {
			return nil, fmt.Errorf("%s: it must be a whole number, at least 1", st.is("limit", v))
		}
	}
	s.Timeout = DefaultTimeout
	if v, ok := params["timeout"]; ok {
		if s.Timeout, err = time.ParseDuration(v); err != nil || s.Timeout <= 0 {
			return nil, fmt.Errorf("%s is not a positive duration (e.g. 30s, 2m)", st.is("timeout", v))
		}
	}
	s.MaxResponseBytes = DefaultMaxResponseBytes
	if v, ok := params["max-response-bytes"]; ok {
		if s.MaxResponseBytes, err = backend.ParseBytes(v); err != nil {
			return nil, fmt.Errorf("%s: %v", st.name("max-response-bytes"), err)
		}
	}
	return s, nil
}

// owner says which source a parameter belongs to.
func owner(p string) string {
	for _, k := range kinds {
		if slices.Contains(kindParams[k], p) {
			return "is for --" + string(k)
		}
	}
	if slices.Contains(remoteParams, p) {
		return "is for --jaeger or --tempo"
	}
	return "is a source of its own"
}

// window reads since, or start and end.
func window(params map[string]string, st Style, now time.Time) (from, to time.Time, err error) {
	since, hasSince := params["since"]
	start, hasStart := params["start"]
	end, hasEnd := params["end"]
	if hasStart || hasEnd {
		if hasSince {
			return from, to, fmt.Errorf("%s and %s/%s both give the window; use one", st.name("since"), st.name("start"), st.name("end"))
		}
		if !hasStart || !hasEnd {
			return from, to, fmt.Errorf("%s and %s go together: give both (RFC3339, e.g. 2026-01-02T15:04:05Z), or %sD", st.name("start"), st.name("end"), st.name("since"))
		}
		if from, err = time.Parse(time.RFC3339, start); err != nil {
			return from, to, fmt.Errorf("%s is not an RFC3339 time (e.g. 2026-01-02T15:04:05Z)", st.is("start", start))
		}
		if to, err = time.Parse(time.RFC3339, end); err != nil {
			return from, to, fmt.Errorf("%s is not an RFC3339 time (e.g. 2026-01-02T15:04:05Z)", st.is("end", end))
		}
		if !to.After(from) {
			return from, to, fmt.Errorf("%s is not after %s", st.is("end", end), st.is("start", start))
		}
		return from, to, nil
	}
	d := DefaultSince
	if hasSince {
		if d, err = time.ParseDuration(since); err != nil || d <= 0 {
			return from, to, fmt.Errorf("%s is not a positive duration (e.g. 15m, 2h)", st.is("since", since))
		}
	}
	return now.Add(-d), now, nil
}

// ParseSRC reads one of compare's sources: jaeger:URL?service=S&…,
// tempo:URL?query=TRACEQL&… (each parameter as analyze's flag of that
// name), or else a trace file.
func ParseSRC(src string, now time.Time) (*Source, error) {
	for _, k := range []Kind{Jaeger, Tempo} {
		rest, ok := strings.CutPrefix(src, string(k)+":")
		if !ok {
			continue
		}
		u, err := url.Parse(rest)
		if err != nil {
			return nil, fmt.Errorf("%s:%s is not %s:http(s)://HOST:PORT?%s=…", k, rest, k, kindParams[k][0])
		}
		params := map[string]string{}
		for p, v := range u.Query() {
			if len(v) != 1 {
				return nil, fmt.Errorf("%s gives %q %d times", SRC.kind(k), p, len(v))
			}
			params[p] = v[0]
		}
		u.RawQuery, u.ForceQuery = "", false
		params[string(k)] = u.String()
		return Parse(params, SRC, now)
	}
	return Parse(map[string]string{string(File): src}, SRC, now)
}
