package detect

import (
	"slices"
	"strings"

	"tracelab/pkg/trace"
)

// This file finds work that one span repeats among its children, the shape
// both n-plus-one and redundant-call read: the same unit (a call, or the
// repository and ORM spans that wrap one) run again and again under one
// parent. What the repetitions were called with tells the two apart.

// repeatGroup is one parent's repeated unit within one trace.
type repeatGroup struct {
	parent *trace.Span
	units  []*trace.Span   // the repeated subtrees, in start order
	calls  [][]*trace.Span // each unit's own calls
	// values says what the repetitions were called with: valuesDistinct
	// (at least two differ), valuesIdentical (all the same, known from
	// parameter values, a full URL, or a statement without placeholders)
	// or valuesUnknown (the spans do not carry them).
	values  valueKnowledge
	factor  float64 // parallelism factor of the units
	maxConc int
}

type valueKnowledge int

const (
	valuesUnknown valueKnowledge = iota
	valuesDistinct
	valuesIdentical
	valuesOnePerRow // not recorded, but made by an ORM that loads a row once (loadsOnePerRow)
)

func (v valueKnowledge) String() string {
	return [...]string{"not recorded", "distinct", "identical", "one per row"}[v]
}

// undecided reports whether the group's values leave two readings open: a
// read (see isRead) repeated with values the spans do not show is one row
// per item (n-plus-one) or the same row again (redundant-call), and
// nothing else in the spans tells which (n-plus-one-or-redundant).
func (g repeatGroup) undecided(t *trace.Trace) bool {
	return g.values == valuesUnknown && isRead(t, g.calls[0][0])
}

// repeatedUnits returns every group of at least NPlusOneMinCalls units of
// the same kind under one parent that ran one at a time. Two children are
// units of the same kind when they have the same operation and make the
// same set of call operations (trace.OwnCallsUnder): seven
// PetTypeRepository.findPetTypes spans each wrapping one SELECT form one
// group, as do 1,600 bare HTTP client spans.
//
// It is computed once per trace (trace.Memo) and shared by n-plus-one
// and chatty-db (through repeatedCalls): the result is read-only.
func repeatedUnits(t *trace.Trace) []repeatGroup {
	return t.Memo(repeatedUnitsKey{}, func() any { return findRepeatedUnits(t) }).([]repeatGroup)
}

type repeatedUnitsKey struct{}

func findRepeatedUnits(t *trace.Trace) []repeatGroup {
	var out []repeatGroup
	groups := map[unitSignature]*repeatGroup{}
	var order []unitSignature
	for _, p := range t.Spans {
		kids := t.Children(p)
		if len(kids) < NPlusOneMinCalls {
			continue
		}
		clear(groups)
		order = order[:0]
		for _, u := range kids {
			if u.Service != p.Service && !t.IsCall(u) {
				continue // the callee's side of a call; a client traced as its own service (HotROD's redis) still counts
			}
			calls := t.OwnCallsUnder(u)
			if len(calls) == 0 || !slices.ContainsFunc(calls, func(c *trace.Span) bool { return namesWork(t, c) }) {
				continue
			}
			sig := signatureOf(t, u, calls)
			g := groups[sig]
			if g == nil {
				g = &repeatGroup{parent: p}
				groups[sig] = g
				order = append(order, sig)
			}
			g.units = append(g.units, u)
			g.calls = append(g.calls, calls)
		}
		for _, sig := range order {
			g := groups[sig]
			if len(g.units) < NPlusOneMinCalls {
				continue
			}
			iv := trace.Intervals(g.units)
			g.maxConc, g.factor = trace.Concurrency(iv)
			if g.factor > NPlusOneMaxParallelism {
				continue // a fan-out: the units overlap, their cost does not add up
			}
			g.values = compareValues(t, g.calls)
			if g.values == valuesUnknown && loadsOnePerRow(t, *g) {
				g.values = valuesOnePerRow
			}
			out = append(out, *g)
		}
	}
	return out
}

// loadsOnePerRow reports whether every unit of g is a load that an ORM
// makes at most once per row or collection in a session, so that values
// nobody recorded must differ. Both ORMs keep an identity map:
//   - Hibernate runs one operation (a query, a find) and loads the
//     associations of the rows it read as separate statements, the JDBC
//     spans under that operation's span: each entity and each collection
//     is loaded once per persistence context, so repeats are different
//     rows;
//   - SQLAlchemy names the primary-key parameters of Session.get and of a
//     lazy many-to-one load pk_1, pk_2, ..., and both look in the session's
//     identity map before they select, so a row already loaded is never
//     selected again. A query the application writes binds its own names
//     (key_1, id_1) and may read one row as often as it likes.
func loadsOnePerRow(t *trace.Trace, g repeatGroup) bool {
	hibernate := strings.HasPrefix(g.parent.Scope, "io.opentelemetry.hibernate-")
	for i, u := range g.units {
		calls := g.calls[i]
		if len(calls) != 1 || t.Classify(calls[0]) != trace.CallDB {
			return false
		}
		c := calls[0]
		switch {
		case hibernate && u == c:
		case c.Scope == "opentelemetry.instrumentation.sqlalchemy" && bindsOnlyPrimaryKeys(c.Attr("db.query.text", "db.statement")):
		default:
			return false
		}
	}
	return true
}

// bindsOnlyPrimaryKeys reports whether a statement's named placeholders,
// %(name)s, are all SQLAlchemy's pk_N, and there is at least one.
func bindsOnlyPrimaryKeys(stmt string) bool {
	n := 0
	for rest := stmt; ; {
		i := strings.Index(rest, "%(")
		if i < 0 {
			return n > 0
		}
		rest = rest[i+2:]
		j := strings.Index(rest, ")s")
		if j < 0 {
			return false
		}
		name := rest[:j]
		digits := strings.TrimPrefix(name, "pk_")
		if digits == name || digits == "" || strings.Trim(digits, "0123456789") != "" {
			return false
		}
		n++
		rest = rest[j+2:]
	}
}

// namesWork reports whether a call says what it asked for. A database span
// that names neither a statement nor an operation is a driver's
// bookkeeping around the query it accompanies, such as Go's XSAM/otelsql
// sql.rows (reading a result) and sql.conn.reset_session (a pool check
// without a round trip): it repeats with its query and is never a unit of
// its own.
func namesWork(t *trace.Trace, c *trace.Span) bool {
	return t.Classify(c) != trace.CallDB ||
		c.Attr("db.query.text", "db.statement", "db.operation.name", "db.operation", "db.query.summary") != ""
}

// unitSignature is what makes two sibling subtrees the same unit: the
// unit's own operation and the distinct operations of the calls it makes.
// Most units make one call, which the struct holds without building a
// string; only a unit of several calls joins them into calls.
type unitSignature struct {
	service, op         string
	callService, callOp string // the call of a one-call unit
	calls               string // the sorted distinct calls of any other unit
	several             bool
}

func signatureOf(t *trace.Trace, u *trace.Span, calls []*trace.Span) unitSignature {
	sig := unitSignature{service: u.Service, op: t.Operation(u)}
	if len(calls) == 1 {
		sig.callService, sig.callOp = calls[0].Service, t.Operation(calls[0])
		return sig
	}
	ops := make([]string, 0, len(calls))
	for _, c := range calls {
		ops = append(ops, c.Service+" "+t.Operation(c))
	}
	slices.Sort(ops)
	ops = slices.Compact(ops)
	if len(ops) == 1 {
		// The same call made several times: it groups with the one-call
		// units of that call, as the joined signature always did.
		sig.callService, sig.callOp = calls[0].Service, t.Operation(calls[0])
		return sig
	}
	sig.calls, sig.several = strings.Join(ops, "\x00"), true
	return sig
}

// compareValues tells whether units made their calls with the same values.
func compareValues(t *trace.Trace, calls [][]*trace.Span) valueKnowledge {
	first := ""
	for i, cs := range calls {
		var b strings.Builder
		for _, c := range cs {
			v, ok := callValues(t, c)
			if !ok {
				return valuesUnknown
			}
			b.WriteString(v)
			b.WriteByte(0)
		}
		if i == 0 {
			first = b.String()
		} else if b.String() != first {
			return valuesDistinct
		}
	}
	return valuesIdentical
}

// callValues returns what a call was made with, and whether the span says:
//   - a database call: its statement as sent, with the values bound to it
//     when recorded (boundValues). A statement with placeholders and no
//     values says nothing; one without placeholders is complete (drivers
//     and ORMs that inline values, or a statement that takes none). The
//     statement is compared without its comments: sqlcommenter writes each
//     request's traceparent into them;
//   - an HTTP call: its full URL, query included;
//   - anything else: nothing.
//
// When the call's own span does not say, a lower layer of it may: Node's
// knex span records the statement with ? and no values, the pg span under
// it the same statement with $1 and db.postgresql.values.
func callValues(t *trace.Trace, c *trace.Span) (string, bool) {
	if v, ok := spanValues(t, c); ok {
		return v, true
	}
	for _, l := range t.Children(c) {
		if l.Service == c.Service && t.IsCall(l) {
			if v, ok := callValues(t, l); ok {
				return v, true
			}
		}
	}
	return "", false
}

// spanValues is callValues for one span's own attributes.
func spanValues(t *trace.Trace, c *trace.Span) (string, bool) {
	switch t.Classify(c) {
	case trace.CallDB:
		stmt := c.Attr("db.query.text", "db.statement")
		if stmt == "" {
			return "", false
		}
		bound := boundValues(c)
		if bound == "" && trace.HasPlaceholder(stmt) {
			return "", false
		}
		return trace.WithoutSQLComments(stmt) + "\x00" + bound, true
	case trace.CallHTTP:
		if u := c.Attr("url.full", "http.url"); u != "" {
			return u, true
		}
	}
	return "", false
}

// boundValues is what a database span records of the values bound to its
// statement's placeholders, in one string, or "" when it records none. The
// attributes, by who writes them:
//   - db.query.parameter.<key>, one per value: the semantic conventions'
//     name since 1.26, written by the Java agent's JDBC instrumentation with
//     otel.instrumentation.jdbc.experimental.capture-query-parameters=true,
//     and by Go's XSAM/otelsql through the attributes getter its README
//     shows for the purpose;
//   - db.statement.parameters, all values in one: OpenTelemetry Python's
//     dbapi instrumentation (so psycopg2, psycopg, sqlite3, mysql and
//     pymysql) with capture_parameters=True, and its asyncpg instrumentation,
//     as Python's str() of the parameters, e.g. "(17,)";
//   - db.postgresql.values, an array: the Node instrumentation-pg with
//     enhancedDatabaseReporting: true.
//
// OpenTelemetry .NET's SqlClient and EF Core instrumentations and Go's
// otelsql by default record none.
func boundValues(c *trace.Span) string {
	var params []string
	for _, kv := range c.Attrs {
		if strings.HasPrefix(kv.Key, "db.query.parameter.") {
			params = append(params, kv.Key+"="+kv.Value)
		}
	}
	for _, k := range []string{"db.statement.parameters", "db.postgresql.values"} {
		if v := c.Attr(k); v != "" {
			params = append(params, k+"="+v)
		}
	}
	slices.Sort(params)
	return strings.Join(params, "\x00")
}

// repeatedCalls returns the own calls that n-plus-one or redundant-call
// report in t, so that chatty-db counts each round trip under one finding
// only.
func repeatedCalls(t *trace.Trace) map[*trace.Span]bool {
	out := map[*trace.Span]bool{}
	for _, g := range repeatedUnits(t) {
		for _, cs := range g.calls {
			for _, c := range cs {
				out[c] = true
			}
		}
	}
	for _, units := range redundantReads(t) {
		for _, u := range units {
			for _, c := range t.OwnCallsUnder(u) {
				out[c] = true
			}
		}
	}
	return out
}

// wrappers returns trace.Wrapper of each call: the spans whose time is
// what the calls cost the request.
func wrappers(t *trace.Trace, calls []*trace.Span) []*trace.Span {
	out := make([]*trace.Span, len(calls))
	for i, c := range calls {
		out[i] = t.Wrapper(c)
	}
	return out
}
