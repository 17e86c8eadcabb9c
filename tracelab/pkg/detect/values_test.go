package detect_test

import (
	"fmt"
	"testing"

	"tracelab/pkg/detect"
	"tracelab/pkg/trace"
)

// dbLoopTrace is one request that runs the same statement 8 times, one
// after another; attrs(i) gives the i-th call's statement and parameters.
func dbLoopTrace(attrs func(i int) map[string]string) *trace.Trace {
	root := &trace.Span{TraceID: "t1", SpanID: "r", Name: "GET /books", Kind: trace.KindServer, Service: "shop",
		Attrs: trace.AttrsOf(map[string]string{"http.request.method": "GET", "http.route": "/books"})}
	spans := []*trace.Span{root}
	for i := 0; i < 8; i++ {
		s := int64(i) * 1_000_000
		a := map[string]string{"db.system": "postgresql"}
		for k, v := range attrs(i) {
			a[k] = v
		}
		spans = append(spans, &trace.Span{TraceID: "t1", SpanID: fmt.Sprintf("c%d", i), ParentID: "r", Name: "SELECT",
			Kind: trace.KindClient, Service: "shop", Start: s, End: s + 900_000, Attrs: trace.AttrsOf(a)})
		root.End = s + 1_000_000
	}
	return trace.New("t1", spans)
}

// What each driver's spans say about the values decides between
// n-plus-one (different rows: join or batch) and redundant-call (the same
// row again: cache); where the spans do not tell, n-plus-one-or-redundant
// names both.
func TestValuesAcrossDriversAndLanguages(t *testing.T) {
	stmt := func(q string) func(int) map[string]string {
		return func(int) map[string]string { return map[string]string{"db.statement": q} }
	}
	with := func(q, key string, value func(i int) string) func(int) map[string]string {
		return func(i int) map[string]string { return map[string]string{"db.statement": q, key: value(i)} }
	}
	differ := func(i int) string { return fmt.Sprintf("(%d,)", 17+i) }
	same := func(int) string { return "(17,)" }
	for name, tc := range map[string]struct {
		attrs        func(int) map[string]string
		want, values string
	}{
		"psycopg2 %s, no values":       {stmt(`SELECT * FROM author WHERE id = %s`), "n-plus-one-or-redundant", ""},
		"pyformat, no values":          {stmt(`SELECT * FROM author WHERE id = %(id)s`), "n-plus-one-or-redundant", ""},
		"oracle :1, no values":         {stmt(`SELECT * FROM author WHERE id = :1`), "n-plus-one-or-redundant", ""},
		"named :id, no values":         {stmt(`SELECT * FROM author WHERE id = :id`), "n-plus-one-or-redundant", ""},
		"SqlClient @p1, no values":     {stmt(`SELECT * FROM author WHERE id = @p1`), "n-plus-one-or-redundant", ""},
		"EF Core @__id_0, no values":   {stmt(`SELECT * FROM author WHERE id = @__id_0`), "n-plus-one-or-redundant", ""},
		"Python parameters, distinct":  {with(`SELECT * FROM author WHERE id = %s`, "db.statement.parameters", differ), "n-plus-one", "distinct"},
		"Python parameters, identical": {with(`SELECT * FROM author WHERE id = %s`, "db.statement.parameters", same), "redundant-call", ""},
		"pg values, distinct":          {with(`SELECT * FROM author WHERE id = $1`, "db.postgresql.values", func(i int) string { return fmt.Sprintf(`["%d"]`, i) }), "n-plus-one", "distinct"},
		"Java parameter, identical":    {with(`SELECT * FROM author WHERE id = ?`, "db.query.parameter.0", func(int) string { return "5" }), "redundant-call", ""},
		"inlined literals, distinct": {func(i int) map[string]string {
			return map[string]string{"db.statement": fmt.Sprintf(`SELECT * FROM author WHERE id = %d`, i)}
		}, "n-plus-one", "distinct"},
		"inlined, only comments differ": {func(i int) map[string]string {
			return map[string]string{"db.statement": fmt.Sprintf(`SELECT * FROM author WHERE id = 3 /*traceparent='00-%032d-01'*/`, i)}
		}, "redundant-call", ""},
	} {
		tr := []*trace.Trace{dbLoopTrace(tc.attrs)}
		var got []detect.Finding
		got = append(got, detect.NPlusOne{}.Detect(tr)...)
		got = append(got, detect.RedundantCall{}.Detect(tr)...)
		got = append(got, detect.NPlusOneOrRedundant{}.Detect(tr)...)
		if len(got) != 1 || got[0].Detector != tc.want {
			t.Errorf("%s: got %v, want one %s", name, ids(got), tc.want)
			continue
		}
		if v, _ := got[0].Evidence["parameter_values"].(string); tc.values != "" && v != tc.values {
			t.Errorf("%s: parameter_values %q, want %q", name, v, tc.values)
		}
	}
}

func ids(fs []detect.Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Detector
	}
	return out
}

// Node's knex span records the statement with ? and no values; the pg span
// it wraps records the same query with $1 and db.postgresql.values. The
// values are read from that lower layer.
func TestValuesFromALowerLayerOfTheCall(t *testing.T) {
	root := &trace.Span{TraceID: "t2", SpanID: "r", Name: "GET /orders", Kind: trace.KindServer, Service: "shop",
		Attrs: trace.AttrsOf(map[string]string{"http.request.method": "GET", "http.route": "/orders"})}
	spans := []*trace.Span{root}
	for i := 0; i < 8; i++ {
		s := int64(i) * 1_000_000
		knex := &trace.Span{TraceID: "t2", SpanID: fmt.Sprintf("k%d", i), ParentID: "r", Name: "select shop.customers",
			Kind: trace.KindClient, Service: "shop", Start: s, End: s + 900_000,
			Attrs: trace.AttrsOf(map[string]string{"db.system.name": "postgresql", "db.query.text": `select * from "customers" where "id" = ?`})}
		pg := &trace.Span{TraceID: "t2", SpanID: fmt.Sprintf("p%d", i), ParentID: knex.SpanID, Name: "pg.query:SELECT shop",
			Kind: trace.KindClient, Service: "shop", Start: s + 100_000, End: s + 800_000,
			Attrs: trace.AttrsOf(map[string]string{"db.system.name": "postgresql", "db.query.text": `select * from "customers" where "id" = $1`,
				"db.postgresql.values": fmt.Sprintf(`["%d"]`, 100+i)})}
		spans = append(spans, knex, pg)
		root.End = s + 1_000_000
	}
	fs := detect.NPlusOne{}.Detect([]*trace.Trace{trace.New("t2", spans)})
	if len(fs) != 1 || fs[0].Evidence["parameter_values"] != "distinct" {
		t.Fatalf("want one n-plus-one with distinct values, got %+v", fs)
	}
}
