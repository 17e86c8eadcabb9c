package detect

import (
	"reflect"
	"testing"
	"time"

	"tracelab/internal/tracegen"
	"tracelab/pkg/trace"
)

// n-plus-one and chatty-db (through repeatedCalls) read the same repeated
// units, and redundant-call and chatty-db the same redundant reads: each is
// computed once per trace and handed to every reader.
func TestRepeatedUnitsComputedOncePerTrace(t *testing.T) {
	spans0 := tracegen.LabTrace(tracegen.LabOptions{Items: 20, Seed: 1, Start: time.Unix(0, 0)})
	tr := trace.New(spans0[0].TraceID, spans0)
	a, b := repeatedUnits(tr), repeatedUnits(tr)
	if len(a) == 0 {
		t.Fatal("the lab trace has no repeated unit")
	}
	if &a[0] != &b[0] {
		t.Error("repeatedUnits computed again for the same trace")
	}
	// The same GET three times: a redundant read.
	srv := &trace.Span{TraceID: "r", SpanID: "s", Kind: trace.KindServer, Service: "shop", End: 100,
		Attrs: trace.AttrsOf(map[string]string{"http.request.method": "GET", "http.route": "/a"})}
	spans := []*trace.Span{srv}
	for i := range RedundantMinCalls {
		spans = append(spans, &trace.Span{TraceID: "r", SpanID: string(rune('a' + i)), ParentID: "s", Kind: trace.KindClient,
			Service: "shop", Start: int64(10 * i), End: int64(10*i + 5),
			Attrs: trace.AttrsOf(map[string]string{"http.request.method": "GET", "url.full": "http://stock/items/7"})})
	}
	rt := trace.New("r", spans)
	r1, r2 := redundantReads(rt), redundantReads(rt)
	if len(r1) != 1 {
		t.Fatalf("redundantReads = %v, want one group", r1)
	}
	if reflect.ValueOf(r1).UnsafePointer() != reflect.ValueOf(r2).UnsafePointer() {
		t.Error("redundantReads computed again for the same trace")
	}
	tr.ForgetMemos()
	if c := repeatedUnits(tr); &c[0] == &a[0] {
		t.Error("repeatedUnits kept after ForgetMemos")
	}
}
