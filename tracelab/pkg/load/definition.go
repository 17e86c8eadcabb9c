// Package load is the lab's load engine: it reads a load definition
// (loadtests/*.yaml), sends its requests on an open or a closed model with
// Vegeta's attacker, gives each request a fresh W3C traceparent, and keeps
// one record per request, so that the judge can join every request to its
// trace.
package load

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	"gopkg.in/yaml.v3"
)

// Definition is one load, as written in loadtests/<name>.yaml (README,
// "Load definitions").
type Definition struct {
	Description string `yaml:"description"`
	// Timeout bounds each request; a request past it is a failed one.
	Timeout time.Duration `yaml:"timeout"`
	// Params are the definition's own parameters with their defaults; a
	// scenario's profile or variant overrides them by name.
	Params map[string]string `yaml:"params"`
	// Setup runs once before the load, unmeasured: each call's answer gives
	// a list that requests draw from.
	Setup    []Setup   `yaml:"setup"`
	Requests []Request `yaml:"requests"`

	file      string
	source    []byte
	requests  []*request
	setupList map[string]bool
}

// Setup is one unmeasured call whose answer holds a list of items.
type Setup struct {
	Name   string `yaml:"name"` // the list's name, for a request's from
	Method string `yaml:"method"`
	Path   string `yaml:"path"`
	Expect int    `yaml:"expect"`
	List   string `yaml:"list"` // the answer's top-level field holding the list
}

// Request is one kind of request of the load's mix.
type Request struct {
	Name string `yaml:"name"`
	// Weight is the request's share of the mix, relative to the others: a
	// number or a parameter's name.
	Weight string `yaml:"weight"`
	// From names a list each request draws one item of at random, as
	// {{.item}}: a setup call's, or one this load keeps (Keep).
	From    string            `yaml:"from"`
	Method  string            `yaml:"method"`
	Path    string            `yaml:"path"`
	Headers map[string]string `yaml:"headers"`
	Body    string            `yaml:"body"`
	// Expect is the status a correct answer has; any other is a failure.
	Expect string `yaml:"expect"`
	// Keep adds a field of each correct answer to a list later requests
	// draw from (orders' GET reads the orders its POSTs created).
	Keep *Keep `yaml:"keep"`
}

// Keep names the answer's field and the list it goes to.
type Keep struct {
	Field string `yaml:"field"`
	As    string `yaml:"as"`
	// Max bounds the list; later answers are not kept.
	Max int `yaml:"max"`
}

// request is a Request with its templates parsed.
type request struct {
	Request
	method, path, body, expect *template.Template
	headers                    map[string]*template.Template
}

// ReadDefinition reads and checks a load definition.
func ReadDefinition(path string) (*Definition, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseDefinition(path, data)
}

// ParseDefinition checks data as the definition at file (for messages).
func ParseDefinition(file string, data []byte) (*Definition, error) {
	d := &Definition{file: file, source: data, setupList: map[string]bool{}}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(d); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	if d.Timeout <= 0 {
		d.Timeout = 60 * time.Second
	}
	if len(d.Requests) == 0 {
		return nil, fmt.Errorf("%s: field requests: the load has no request", file)
	}
	for i, s := range d.Setup {
		where := fmt.Sprintf("%s: field setup[%d]", file, i)
		switch {
		case s.Name == "" || s.Path == "" || s.List == "":
			return nil, fmt.Errorf("%s: name, path and list are required", where)
		case d.setupList[s.Name]:
			return nil, fmt.Errorf("%s: a second list named %q", where, s.Name)
		}
		d.setupList[s.Name] = true
	}
	kept := map[string]bool{}
	for _, r := range d.Requests {
		if r.Keep != nil {
			kept[r.Keep.As] = true
		}
	}
	if !slices.ContainsFunc(d.Requests, func(r Request) bool { return !kept[r.From] }) {
		return nil, fmt.Errorf("%s: field requests: every request draws from a list only answers fill, so none can start", file)
	}
	for i, r := range d.Requests {
		where := fmt.Sprintf("%s: field requests[%d]", file, i)
		if r.Name == "" || r.Path == "" {
			return nil, fmt.Errorf("%s: name and path are required", where)
		}
		if r.From != "" && !d.setupList[r.From] && !kept[r.From] {
			return nil, fmt.Errorf("%s: from %q is neither a setup list nor a kept one", where, r.From)
		}
		if r.Keep != nil && (r.Keep.Field == "" || r.Keep.As == "") {
			return nil, fmt.Errorf("%s: keep needs field and as", where)
		}
		if _, err := d.weight(r.Weight, nil); err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
		rq := &request{Request: r, headers: map[string]*template.Template{}}
		var err error
		for _, t := range []struct {
			into **template.Template
			text string
		}{{&rq.method, or(r.Method, "GET")}, {&rq.path, r.Path}, {&rq.body, r.Body}, {&rq.expect, or(r.Expect, "200")}} {
			if *t.into, err = parseTemplate(t.text); err != nil {
				return nil, fmt.Errorf("%s: %v", where, err)
			}
		}
		for k, v := range r.Headers {
			if rq.headers[k], err = parseTemplate(v); err != nil {
				return nil, fmt.Errorf("%s: header %s: %v", where, k, err)
			}
		}
		d.requests = append(d.requests, rq)
	}
	return d, nil
}

// weight is a request's weight: a number, or a parameter's value.
func (d *Definition) weight(w string, params map[string]string) (float64, error) {
	if w == "" {
		return 1, nil
	}
	if x, err := strconv.ParseFloat(w, 64); err == nil && x >= 0 {
		return x, nil
	}
	if _, ok := d.Params[w]; !ok {
		return 0, fmt.Errorf("weight %q is neither a number >= 0 nor a parameter of params", w)
	}
	v := d.Params[w]
	if p, ok := params[w]; ok {
		v = p
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || x < 0 {
		return 0, fmt.Errorf("parameter %s=%q is a weight and must be a number >= 0", w, v)
	}
	return x, nil
}

// ParamNames are the definition's own parameters, sorted.
func (d *Definition) ParamNames() []string {
	var out []string
	for k := range d.Params {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// The functions a definition's templates may call. Each draws afresh on
// every request; none is seeded, as the mix need not repeat exactly.
var funcs = template.FuncMap{
	// int LO HI: a whole number from LO to HI, both included.
	"int": func(lo, hi any) (int, error) {
		a, err1 := toInt(lo)
		b, err2 := toInt(hi)
		if err1 != nil || err2 != nil || b < a {
			return 0, fmt.Errorf("int %v %v: need two whole numbers, the first not above the second", lo, hi)
		}
		return a + rand.IntN(b-a+1), nil
	},
	// distinct N LO HI: N different whole numbers from LO to HI.
	"distinct": func(n, lo, hi any) ([]int, error) {
		k, err0 := toInt(n)
		a, err1 := toInt(lo)
		b, err2 := toInt(hi)
		if err0 != nil || err1 != nil || err2 != nil || k < 0 || b-a+1 < k {
			return nil, fmt.Errorf("distinct %v %v %v: need N whole numbers that fit between LO and HI", n, lo, hi)
		}
		seen := make(map[int]bool, k)
		out := make([]int, 0, k)
		for len(out) < k {
			x := a + rand.IntN(b-a+1)
			if !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		}
		return out, nil
	},
	// oneof A B ...: one of its arguments.
	"oneof": func(xs ...any) any { return xs[rand.IntN(len(xs))] },
	// repeat S N: S written N times (a body's padding).
	"repeat": func(s string, n any) (string, error) {
		k, err := toInt(n)
		if err != nil || k < 0 {
			return "", fmt.Errorf("repeat: %v is not a count", n)
		}
		return strings.Repeat(s, k), nil
	},
	// json V: V as JSON.
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
}

func toInt(v any) (int, error) {
	switch x := v.(type) {
	case int:
		return x, nil
	case float64:
		if x == float64(int(x)) {
			return int(x), nil
		}
	case string:
		return strconv.Atoi(x)
	}
	return 0, fmt.Errorf("%v is not a whole number", v)
}

func parseTemplate(text string) (*template.Template, error) {
	if text == "" {
		return nil, nil
	}
	return template.New("").Option("missingkey=error").Funcs(funcs).Parse(text)
}

// render runs t on data; a nil template renders as "".
func render(t *template.Template, data map[string]any, buf *bytes.Buffer) (string, error) {
	if t == nil {
		return "", nil
	}
	buf.Reset()
	if err := t.Execute(buf, data); err != nil {
		return "", err
	}
	return buf.String(), nil
}
