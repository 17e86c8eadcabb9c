// Package traceql evaluates the subset of TraceQL the lab's dashboards and
// guides use on tracelab's own trace model: the trace explorer draws a
// dashboard's TraceQL panels with it, and the tests prove the queries with
// it (internal/dashcheck).
package traceql

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"tracelab/pkg/trace"
)

// The subset of TraceQL the lab's dashboards and guides use, evaluated on
// tracelab's own trace model. Grafana's TraceQL grammar
// (dashboards/traceqlcheck) proves a query's syntax; this proves, for the
// subset, that its operands have the types Tempo requires (typeCheck) and
// that what it filters on is really in the lab's traces: the attributes,
// their values and the shape.
//
//	query     = spansets { "|" "count()" op number }
//	spansets  = filter { (">>" | ">" | "&&") filter }
//	filter    = "{" cond { ("&&" | "||") cond } "}"
//	cond      = field op value
//	field     = kind | name | status | duration | traceDuration
//	          | span.KEY | resource.KEY | .KEY
//
// "&&" binds tighter than "||" inside a filter; the structural operators
// are read left to right and keep the right-hand spans, as Tempo does.

// Query is a parsed query of the subset.
type Query struct {
	Text    string
	filters []filter
	joins   []string // between filters: ">>", ">", "&&"
	counts  []countCond
}

type filter struct {
	text string
	any  [][]cond // OR of ANDs
}

type cond struct {
	field, op string
	str       string
	num       float64 // durations in nanoseconds
	re        *regexp.Regexp
	isNum     bool
}

type countCond struct {
	op string
	n  float64
}

var tokenRE = regexp.MustCompile(`\s*("(?:[^"\\]|\\.)*"|>>|>=|<=|!=|=~|!~|&&|\|\||[{}|<>=]|count\(\)|[A-Za-z0-9_.:/\-*]+)`)

// Parse parses a query of the subset, or says what it does not
// support.
func Parse(text string) (*Query, error) {
	var toks []string
	rest := strings.TrimSpace(text)
	for rest != "" {
		m := tokenRE.FindStringSubmatchIndex(rest)
		if m == nil || m[0] != 0 {
			return nil, fmt.Errorf("cannot read %q", rest)
		}
		toks = append(toks, rest[m[2]:m[3]])
		rest = strings.TrimSpace(rest[m[1]:])
	}
	q := &Query{Text: text}
	i := 0
	next := func() string {
		if i >= len(toks) {
			return ""
		}
		i++
		return toks[i-1]
	}
	for {
		if next() != "{" {
			return nil, fmt.Errorf("expected { at token %d", i)
		}
		start := i
		f := filter{any: [][]cond{nil}}
		for {
			field, op, val := next(), next(), next()
			c, err := newCond(field, op, val)
			if err != nil {
				return nil, err
			}
			f.any[len(f.any)-1] = append(f.any[len(f.any)-1], c)
			switch next() {
			case "&&":
				continue
			case "||":
				f.any = append(f.any, nil)
				continue
			case "}":
			default:
				return nil, fmt.Errorf("expected &&, || or } after %s %s %s", field, op, val)
			}
			break
		}
		f.text = "{ " + strings.Join(toks[start:i-1], " ") + " }"
		q.filters = append(q.filters, f)
		switch t := next(); t {
		case ">>", ">", "&&":
			q.joins = append(q.joins, t)
			continue
		case "|":
			i--
		case "":
			return q, nil
		default:
			return nil, fmt.Errorf("unsupported operator %q between spansets", t)
		}
		break
	}
	for next() == "|" {
		if next() != "count()" {
			return nil, fmt.Errorf("only count() is supported after |")
		}
		op, n := next(), next()
		v, err := strconv.ParseFloat(n, 64)
		if err != nil || !strings.Contains("= != > >= < <=", op) {
			return nil, fmt.Errorf("count() %s %s: want a comparison with a number", op, n)
		}
		q.counts = append(q.counts, countCond{op, v})
	}
	if i < len(toks) {
		return nil, fmt.Errorf("unsupported from %q on", toks[i-1])
	}
	return q, nil
}

func newCond(field, op, val string) (cond, error) {
	c := cond{field: field, op: op}
	switch op {
	case "=", "!=", "=~", "!~", ">", ">=", "<", "<=":
	default:
		return c, fmt.Errorf("unsupported operator %q after %s", op, field)
	}
	switch {
	case field == "kind" || field == "name" || field == "status" || field == "duration" || field == "traceDuration":
	case strings.HasPrefix(field, "span.") || strings.HasPrefix(field, "resource.") || strings.HasPrefix(field, "."):
	default:
		return c, fmt.Errorf("unsupported field %q", field)
	}
	if err := typeCheck(field, op, val); err != nil {
		return c, err
	}
	if s, err := strconv.Unquote(val); err == nil && strings.HasPrefix(val, `"`) {
		c.str = s
		if op == "=~" || op == "!~" {
			re, err := regexp.Compile("^(?:" + s + ")$") // Tempo anchors regular expressions
			if err != nil {
				return c, fmt.Errorf("regular expression %q: %v", s, err)
			}
			c.re = re
		}
		return c, nil
	}
	if d, err := time.ParseDuration(val); err == nil {
		c.num, c.isNum = float64(d.Nanoseconds()), true
		return c, nil
	}
	if n, err := strconv.ParseFloat(val, 64); err == nil {
		c.num, c.isNum = n, true
		return c, nil
	}
	c.str = val // an enum: server, client, error...
	return c, nil
}

// intrinsicValues are the values of TraceQL's enum intrinsics.
var intrinsicValues = map[string][]string{
	"kind":   {"unspecified", "internal", "server", "client", "producer", "consumer"},
	"status": {"error", "ok", "unset"},
}

// typeCheck refuses what Tempo's parser refuses after the grammar: its
// validation compares only operands of one type. The TraceQL grammar of
// make test-dashboards (Grafana's lezer-traceql) reads syntax alone, so for
// the lab's subset this is where, say, kind = "server" fails.
func typeCheck(field, op, val string) error {
	quoted := strings.HasPrefix(val, `"`)
	regex := op == "=~" || op == "!~"
	if regex && !quoted {
		return fmt.Errorf("%s %s %s: a regular expression is a quoted string", field, op, val)
	}
	if values, ok := intrinsicValues[field]; ok {
		if (op != "=" && op != "!=") || !slices.Contains(values, val) {
			return fmt.Errorf("%s %s %s: %s compares with = or != to one of %s", field, op, val, field, strings.Join(values, ", "))
		}
	}
	switch field {
	case "duration", "traceDuration":
		if _, err := time.ParseDuration(val); err != nil || regex || strings.ContainsAny(val, "+-") {
			return fmt.Errorf("%s %s %s: %s compares with a duration such as 2ms", field, op, val, field)
		}
	case "name":
		if !quoted {
			return fmt.Errorf("%s %s %s: name compares with a quoted string", field, op, val)
		}
	}
	return nil
}

// value reads a field of a span; ok is false when the span lacks it.
func (c cond) value(t *trace.Trace, s *trace.Span) (str string, num float64, ok bool) {
	switch {
	case c.field == "kind":
		return strings.ToLower(s.Kind.String()), 0, true
	case c.field == "name":
		return s.Name, 0, true
	case c.field == "status":
		return strings.ToLower(s.Status.String()), 0, true
	case c.field == "duration":
		return "", float64(s.Duration()), true
	case c.field == "traceDuration":
		return "", float64(t.Duration()), true
	}
	key, scope := c.field, ""
	if k, ok := strings.CutPrefix(key, "span."); ok {
		key, scope = k, "span"
	} else if k, ok := strings.CutPrefix(key, "resource."); ok {
		key, scope = k, "resource"
	} else {
		key = strings.TrimPrefix(key, ".")
	}
	if scope != "resource" {
		if v, ok := s.Attrs.Get(key); ok {
			return v, parseNum(v), true
		}
	}
	if scope != "span" {
		if key == "service.name" && s.Service != "" {
			return s.Service, 0, true
		}
		if v, ok := s.ResourceAttrs[key]; ok {
			return v, parseNum(v), true
		}
	}
	return "", 0, false
}

func parseNum(v string) float64 {
	n, _ := strconv.ParseFloat(v, 64)
	return n
}

func (c cond) match(t *trace.Trace, s *trace.Span) bool {
	str, num, ok := c.value(t, s)
	if !ok {
		return false
	}
	switch c.op {
	case "=~":
		return c.re.MatchString(str)
	case "!~":
		return !c.re.MatchString(str)
	}
	if c.isNum {
		return compare(num, c.op, c.num)
	}
	switch c.op {
	case "=":
		return str == c.str
	case "!=":
		return str != c.str
	}
	return false
}

func compare(a float64, op string, b float64) bool {
	switch op {
	case "=":
		return a == b
	case "!=":
		return a != b
	case ">":
		return a > b
	case ">=":
		return a >= b
	case "<":
		return a < b
	case "<=":
		return a <= b
	}
	return false
}

func (f filter) spans(t *trace.Trace) map[*trace.Span]bool {
	out := map[*trace.Span]bool{}
	for _, s := range t.Spans {
	alt:
		for _, all := range f.any {
			for _, c := range all {
				if !c.match(t, s) {
					continue alt
				}
			}
			out[s] = true
			break
		}
	}
	return out
}

// Match tells whether the query selects the trace.
func (q *Query) Match(t *trace.Trace) bool {
	set := q.filters[0].spans(t)
	for i, join := range q.joins {
		right := q.filters[i+1].spans(t)
		next := map[*trace.Span]bool{}
		switch join {
		case "&&":
			if len(set) > 0 && len(right) > 0 {
				for s := range set {
					next[s] = true
				}
				for s := range right {
					next[s] = true
				}
			}
		case ">", ">>":
			for s := range right {
				for p := t.Parent(s); p != nil; p = t.Parent(p) {
					if set[p] {
						next[s] = true
						break
					}
					if join == ">" {
						break
					}
				}
			}
		}
		set = next
	}
	if len(set) == 0 {
		return false
	}
	for _, c := range q.counts {
		if !compare(float64(len(set)), c.op, c.n) {
			return false
		}
	}
	return true
}

// Explain says why a query selects no trace: the first of its filters that
// no span matches, and for that filter the first condition no span meets.
func (q *Query) Explain(traces []*trace.Trace) string {
	for _, f := range q.filters {
		found := false
		for _, t := range traces {
			if len(f.spans(t)) > 0 {
				found = true
				break
			}
		}
		if found {
			continue
		}
		for _, c := range f.any[0] {
			met := false
			for _, t := range traces {
				for _, s := range t.Spans {
					if c.match(t, s) {
						met = true
						break
					}
				}
				if met {
					break
				}
			}
			if !met {
				return fmt.Sprintf("no span has %s %s %s", c.field, c.op, c.literal())
			}
		}
		return fmt.Sprintf("no span matches %s as a whole", f.text)
	}
	return "every filter matches some span, but not in the structure or count the query asks for"
}

func (c cond) literal() string {
	if c.isNum {
		if c.field == "duration" || c.field == "traceDuration" {
			return time.Duration(c.num).String()
		}
		return strconv.FormatFloat(c.num, 'g', -1, 64)
	}
	if c.field == "kind" || c.field == "status" {
		return c.str
	}
	return strconv.Quote(c.str)
}
