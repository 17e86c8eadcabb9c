package trace

import (
	"fmt"
	"testing"
)

// sp builds a span for tests; times are plain integers (nanoseconds).
func sp(trace, id, parent string, start, end int64) *Span {
	return &Span{TraceID: trace, SpanID: id, ParentID: parent, Name: id, Start: start, End: end, Attrs: AttrsOf(map[string]string{})}
}

func ids(spans []*Span) string {
	s := ""
	for i, x := range spans {
		if i > 0 {
			s += ","
		}
		s += x.SpanID
	}
	return s
}

func TestGroupBuildsTreesPerTrace(t *testing.T) {
	spans := []*Span{
		sp("t2", "b", "", 50, 60),
		sp("t1", "c2", "r", 30, 40),
		sp("t1", "r", "", 0, 100),
		sp("t1", "c1", "r", 10, 20),
		sp("t1", "c1", "r", 10, 20), // duplicate from an overlapping query
		sp("t1", "g", "c1", 12, 18),
	}
	traces := Group(spans)
	if len(traces) != 2 || traces[0].ID != "t1" || traces[1].ID != "t2" {
		t.Fatalf("traces = %v, want t1 then t2 (by root start)", traces)
	}
	tr := traces[0]
	if len(tr.Spans) != 4 {
		t.Fatalf("t1 has %d spans, want 4 (duplicate dropped)", len(tr.Spans))
	}
	if tr.Root.SpanID != "r" {
		t.Errorf("root = %s, want r", tr.Root.SpanID)
	}
	if got := ids(tr.Children(tr.Root)); got != "c1,c2" {
		t.Errorf("children of r = %s, want c1,c2 (by start)", got)
	}
	if p := tr.Parent(tr.Span("g")); p == nil || p.SpanID != "c1" {
		t.Errorf("parent of g = %v, want c1", p)
	}
	if tr.Duration() != 100 {
		t.Errorf("duration = %d, want 100", tr.Duration())
	}
}

func TestOrphansBecomeRootsAndEarliestRootWins(t *testing.T) {
	tr := New("t", []*Span{
		sp("t", "late-root", "", 20, 90),
		sp("t", "orphan", "missing", 5, 50), // parent was never received
		sp("t", "kid", "orphan", 6, 10),
		sp("t", "self", "self", 30, 31), // its own parent: treated as a root
	})
	if got := ids(tr.Roots()); got != "orphan,late-root,self" {
		t.Errorf("roots = %s, want orphan,late-root,self", got)
	}
	if tr.Root.SpanID != "orphan" {
		t.Errorf("root = %s, want the earliest-starting root, orphan", tr.Root.SpanID)
	}
}

func TestParentCyclesAreCut(t *testing.T) {
	tr := New("t", []*Span{
		sp("t", "r", "", 0, 100),
		sp("t", "a", "b", 10, 20),
		sp("t", "b", "a", 15, 30),
	})
	reached := 0
	var walk func(*Span)
	walk = func(s *Span) {
		reached++
		for _, c := range tr.Children(s) {
			walk(c)
		}
	}
	for _, r := range tr.Roots() {
		walk(r)
	}
	if reached != 3 {
		t.Fatalf("walked %d spans from the roots, want all 3", reached)
	}
	if tr.Root.SpanID != "r" {
		t.Errorf("root = %s, want r", tr.Root.SpanID)
	}
}

func TestKindAndStatusNames(t *testing.T) {
	for in, want := range map[string]Kind{"SPAN_KIND_CLIENT": KindClient, "server": KindServer, "PRODUCER": KindProducer} {
		if got, ok := ParseKind(in); !ok || got != want {
			t.Errorf("ParseKind(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	if _, ok := ParseKind("SIDEWAYS"); ok {
		t.Error("ParseKind accepted SIDEWAYS")
	}
	if c, ok := ParseStatusCode("STATUS_CODE_ERROR"); !ok || c != StatusError {
		t.Errorf("ParseStatusCode(STATUS_CODE_ERROR) = %v, %v", c, ok)
	}
	if KindConsumer.String() != "CONSUMER" || Kind(42).String() != "UNSPECIFIED" {
		t.Error("Kind.String is wrong")
	}
}

func TestIsCall(t *testing.T) {
	db := sp("t", "db", "", 0, 1)
	db.Kind = KindInternal
	db.Attrs.Set("db.system", "postgresql")
	cases := []struct {
		kind  Kind
		attrs map[string]string
		want  CallType
	}{
		{KindClient, map[string]string{"http.request.method": "GET"}, CallHTTP},
		{KindClient, map[string]string{"rpc.system": "grpc"}, CallRPC},
		{KindClient, map[string]string{"db.system": "redis"}, CallCache},
		{KindInternal, map[string]string{"db.system.name": "postgresql"}, CallDB},
		{KindInternal, map[string]string{}, CallNone},
		{KindServer, map[string]string{"http.request.method": "GET"}, CallNone},
		{KindProducer, map[string]string{"messaging.system": "kafka"}, CallNone},
		{KindClient, map[string]string{}, CallOther},
	}
	for i, c := range cases {
		s := &Span{Kind: c.kind, Attrs: AttrsOf(c.attrs)}
		if got := Classify(s); got != c.want {
			t.Errorf("case %d (%v %v): Classify = %q, want %q", i, c.kind, c.attrs, got, c.want)
		}
		if IsCall(s) != (c.want != CallNone) {
			t.Errorf("case %d: IsCall disagrees with Classify", i)
		}
	}
}

func ExampleFingerprint() {
	s := &Span{
		Service: "catalog", Name: "GET", Kind: KindClient,
		Attrs: AttrsOf(map[string]string{"http.request.method": "GET", "url.full": "http://127.0.0.1:18081/prices/17?currency=EUR"}),
	}
	fmt.Println(Fingerprint(s))
	// Output: catalog GET 127.0.0.1:18081/prices/{id}?currency
}
