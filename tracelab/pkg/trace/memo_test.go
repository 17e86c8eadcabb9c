package trace

import (
	"sync"
	"sync/atomic"
	"testing"
)

type memoTestKey struct{ n int }

// Detectors running at once on one trace get one computation between
// them, and a forgotten memo is computed again on the next ask.
func TestMemoComputesOncePerTrace(t *testing.T) {
	tr := New("t", []*Span{{TraceID: "t", SpanID: "a"}})
	var calls atomic.Int32
	compute := func() any { calls.Add(1); return []int{1, 2, 3} }
	var wg sync.WaitGroup
	results := make([][]int, 16)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = tr.Memo(memoTestKey{1}, compute).([]int)
		}()
	}
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Fatalf("computed %d times, want once", n)
	}
	for _, r := range results {
		if &r[0] != &results[0][0] {
			t.Fatal("callers got different results")
		}
	}
	tr.Memo(memoTestKey{2}, compute)
	if n := calls.Load(); n != 2 {
		t.Errorf("another key computed %d times in all, want 2", n)
	}
	tr.ForgetMemos()
	tr.Memo(memoTestKey{1}, compute)
	if n := calls.Load(); n != 3 {
		t.Errorf("after ForgetMemos: %d computations in all, want 3", n)
	}
}

// The cached call type is the package function's answer for every span.
func TestTraceClassifyMatchesClassify(t *testing.T) {
	spans := []*Span{
		{TraceID: "t", SpanID: "r", Kind: KindServer, Attrs: AttrsOf(map[string]string{"http.request.method": "GET"})},
		{TraceID: "t", SpanID: "h", ParentID: "r", Kind: KindClient, Attrs: AttrsOf(map[string]string{"http.request.method": "GET"})},
		{TraceID: "t", SpanID: "d", ParentID: "r", Kind: KindInternal, Attrs: AttrsOf(map[string]string{"db.system": "postgresql"})},
		{TraceID: "t", SpanID: "c", ParentID: "r", Kind: KindClient, Attrs: AttrsOf(map[string]string{"db.system.name": "redis"})},
		{TraceID: "t", SpanID: "g", ParentID: "r", Kind: KindClient, Attrs: AttrsOf(map[string]string{"rpc.system": "grpc"})},
		{TraceID: "t", SpanID: "m", ParentID: "r", Kind: KindClient, Attrs: AttrsOf(map[string]string{"messaging.system": "kafka"})},
		{TraceID: "t", SpanID: "o", ParentID: "r", Kind: KindClient},
		{TraceID: "t", SpanID: "p", ParentID: "r", Kind: KindProducer, Attrs: AttrsOf(map[string]string{"messaging.system": "kafka"})},
	}
	tr := New("t", spans)
	seen := map[CallType]bool{}
	for _, s := range tr.Spans {
		if got, want := tr.Classify(s), Classify(s); got != want {
			t.Errorf("span %s: Trace.Classify = %q, Classify = %q", s.SpanID, got, want)
		}
		if tr.IsCall(s) != IsCall(s) {
			t.Errorf("span %s: Trace.IsCall = %v, IsCall = %v", s.SpanID, tr.IsCall(s), IsCall(s))
		}
		seen[tr.Classify(s)] = true
	}
	if len(seen) != len(callTypes) {
		t.Errorf("the spans cover %d of the %d call types", len(seen), len(callTypes))
	}
}
