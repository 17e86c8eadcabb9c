package main

import (
	"strings"
	"testing"
)

func TestSerializedCallsMapping(t *testing.T) {
	sql := "3 sequential independent calls could potentially be parallelized: SELECT a FROM t WHERE id = ? (3ms) -> INSERT INTO u VALUES (?) (2ms) -> UPDATE v SET x = ? (1ms). Total sequential: 6ms, potential parallel: ~3ms. If these calls …"
	if got := serializedCalls(sql); strings.Join(got, " | ") != "SELECT a FROM t WHERE id = ? | INSERT INTO u VALUES (?) | UPDATE v SET x = ?" {
		t.Errorf("serializedCalls = %q", got)
	}
	if d := psDetector(psFinding{Type: "serialized_calls", Suggestion: sql}); d != "chatty-db" {
		t.Errorf("SQL serialized_calls -> %q, want chatty-db", d)
	}
	mixed := strings.Replace(sql, "INSERT INTO u VALUES (?)", "GET /stock/{id}", 1)
	if d := psDetector(psFinding{Type: "serialized_calls", Suggestion: mixed}); d != "" {
		t.Errorf("mixed serialized_calls -> %q, want not compared", d)
	}
	for typ, want := range map[string]string{"n_plus_one_http": "n-plus-one", "redundant_sql": "redundant-call", "slow_sql": "", "chatty_service": ""} {
		if d := psDetector(psFinding{Type: typ}); d != want {
			t.Errorf("%s -> %q, want %q", typ, d, want)
		}
	}
}

// Per-trace findings of one culprit become one finding with the mean
// occurrences; unmapped types are only counted.
func TestAggregate(t *testing.T) {
	f := func(trace string, n int) psFinding {
		p := psFinding{Type: "n_plus_one_sql", TraceID: trace, Service: "books"}
		p.Pattern.Template, p.Pattern.Occurrences = "SELECT * FROM a WHERE id = ?", n
		return p
	}
	notCompared := map[string]int{}
	reqs := map[string]string{"t1": "GET /books", "t2": "GET /books", "t3": "GET /authors"}
	got := aggregate([]psFinding{f("t1", 10), f("t2", 20), f("t3", 5), {Type: "slow_sql"}}, reqs, notCompared)
	if len(got) != 2 || got[0].CallsPerTrace != 15 || got[0].Detector != "n-plus-one" || got[0].Request != "GET /books" ||
		got[1].CallsPerTrace != 5 || got[1].Request != "GET /authors" {
		t.Errorf("aggregate = %+v", got)
	}
	if notCompared["slow_sql"] != 1 {
		t.Errorf("notCompared = %v", notCompared)
	}
}
