package trace

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// render prints a critical path as "span[start,end] ...".
func render(cp CriticalPath) string {
	parts := make([]string, len(cp))
	for i, s := range cp {
		parts[i] = fmt.Sprintf("%s[%d,%d]", s.SpanID, s.Start, s.End)
	}
	return strings.Join(parts, " ")
}

// Each case was worked out by hand with the Jaeger UI's rules.
func TestCriticalPath(t *testing.T) {
	cases := []struct {
		name  string
		spans []*Span
		want  string
	}{{
		name:  "no children: the root alone",
		spans: []*Span{sp("t", "r", "", 0, 100)},
		want:  "r[0,100]",
	}, {
		name: "sequential children",
		spans: []*Span{
			sp("t", "r", "", 0, 100),
			sp("t", "a", "r", 10, 40),
			sp("t", "b", "r", 50, 90),
		},
		want: "r[0,10] a[10,40] r[40,50] b[50,90] r[90,100]",
	}, {
		// The shape of jaeger-ui's CriticalPath/testCases/test2.js: the child
		// finishing last wins, and the one it overlaps is off the path.
		name: "overlapping children",
		spans: []*Span{
			sp("t", "x", "", 1, 101),
			sp("t", "a", "x", 10, 50),
			sp("t", "c", "x", 20, 60),
		},
		want: "x[1,20] c[20,60] x[60,101]",
	}, {
		name: "nested overlap: walking back up uses the returning child's start",
		spans: []*Span{
			sp("t", "r", "", 0, 100),
			sp("t", "a", "r", 10, 90),
			sp("t", "a1", "a", 20, 50),
			sp("t", "a2", "a", 40, 80),
		},
		want: "r[0,10] a[10,40] a2[40,80] a[80,90] r[90,100]",
	}, {
		name: "a child finishing before the chosen one started is picked next",
		spans: []*Span{
			sp("t", "r", "", 0, 100),
			sp("t", "a", "r", 5, 30),
			sp("t", "b", "r", 20, 45), // overlaps c's start: skipped
			sp("t", "c", "r", 40, 95),
		},
		want: "r[0,5] a[5,30] r[30,40] c[40,95] r[95,100]",
	}, {
		// jaeger-ui would take only c and a here (it wants a predecessor
		// that ended strictly before c started) and credit b's time to r.
		name: "back-to-back children are all on the path",
		spans: []*Span{
			sp("t", "r", "", 0, 30),
			sp("t", "a", "r", 0, 10),
			sp("t", "b", "r", 10, 20),
			sp("t", "c", "r", 20, 30),
		},
		want: "a[0,10] b[10,20] c[20,30]",
	}, {
		name: "zero-length children do not stall the walk",
		spans: []*Span{
			sp("t", "r", "", 0, 30),
			sp("t", "z1", "r", 10, 10),
			sp("t", "z2", "r", 10, 10),
			sp("t", "a", "r", 10, 20),
		},
		want: "r[0,10] a[10,20] r[20,30]",
	}, {
		name: "children overflowing the parent are trimmed or dropped",
		spans: []*Span{
			sp("t", "r", "", 0, 100),
			sp("t", "early", "r", -20, 30),  // starts before the parent: trimmed to [0,30]
			sp("t", "late", "r", 60, 150),   // ends after the parent: trimmed to [60,100]
			sp("t", "after", "r", 110, 130), // entirely after the parent: dropped
			sp("t", "under-after", "after", 115, 120),
		},
		want: "early[0,30] r[30,60] late[60,100]",
	}, {
		name: "a grandchild is trimmed to its trimmed parent",
		spans: []*Span{
			sp("t", "r", "", 0, 100),
			sp("t", "a", "r", 50, 200), // -> [50,100]
			sp("t", "g", "a", 90, 180), // -> [90,100]
		},
		want: "r[0,50] a[50,90] g[90,100]",
	}, {
		name: "a child covering the whole parent",
		spans: []*Span{
			sp("t", "r", "", 10, 20),
			sp("t", "a", "r", 0, 30), // -> [10,20]
		},
		want: "a[10,20]",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := New("t", c.spans)
			if got := render(ComputeCriticalPath(tr)); got != c.want {
				t.Errorf("critical path\n got %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestCriticalPathSkipsConsumersOfProducers(t *testing.T) {
	r := sp("t", "r", "", 0, 100)
	p := sp("t", "p", "r", 10, 20)
	p.Kind = KindProducer
	c := sp("t", "c", "p", 15, 90)
	c.Kind = KindConsumer
	tr := New("t", []*Span{r, p, c})
	if got, want := render(tr.CriticalPath()), "r[0,10] p[10,20] r[20,100]"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// selfTime is, per span id, how long that span itself (not its children)
// was on the critical path: what the sections say about each span.
func selfTime(cp CriticalPath) map[string]int64 {
	m := make(map[string]int64)
	for _, s := range cp {
		m[s.SpanID] += s.Duration()
	}
	return m
}

func TestSelfTimeAndTimeUnder(t *testing.T) {
	tr := New("t", []*Span{
		sp("t", "r", "", 0, 100),
		sp("t", "c1", "r", 10, 40),
		sp("t", "s1", "c1", 12, 38), // the server span under client call c1
		sp("t", "c2", "r", 50, 90),
	})
	self := selfTime(tr.CriticalPath())
	want := map[string]int64{"r": 30, "c1": 4, "s1": 26, "c2": 40}
	for id, d := range want {
		if self[id] != d {
			t.Errorf("self time of %s = %d, want %d", id, self[id], d)
		}
	}
	if got := tr.CriticalTimeUnder([]*Span{tr.Span("c1"), tr.Span("c2")}); got != 70 {
		t.Errorf("time under c1 and c2 = %d, want 70", got)
	}
	// Listing a span and its own descendant does not count it twice.
	if got := tr.CriticalTimeUnder([]*Span{tr.Span("c1"), tr.Span("s1")}); got != 30 {
		t.Errorf("time under c1 and s1 = %d, want 30", got)
	}
}

// On random trees the sections must tile the root exactly: contiguous,
// in order, summing to the root's duration, each inside its own span.
func TestCriticalPathTilesTheRoot(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for n := 0; n < 300; n++ {
		spans := []*Span{sp("t", "s0", "", 0, 1000)}
		for i := 1; i < 2+rng.Intn(40); i++ {
			parent := spans[rng.Intn(len(spans))]
			start := parent.Start - 50 + rng.Int63n(parent.End-parent.Start+100)
			spans = append(spans, sp("t", fmt.Sprintf("s%d", i), parent.SpanID, start, start+rng.Int63n(400)))
		}
		tr := New("t", spans)
		cp := tr.CriticalPath()
		at := tr.Root.Start
		for _, sec := range cp {
			if sec.Start != at || sec.End <= sec.Start {
				t.Fatalf("tree %d: section %s[%d,%d] does not continue at %d: %s", n, sec.SpanID, sec.Start, sec.End, at, render(cp))
			}
			if sec.Start < sec.Span.Start || sec.End > sec.Span.End {
				t.Fatalf("tree %d: section %s[%d,%d] outside its span [%d,%d]", n, sec.SpanID, sec.Start, sec.End, sec.Span.Start, sec.Span.End)
			}
			at = sec.End
		}
		if at != tr.Root.End || cp.Total() != tr.Duration() {
			t.Fatalf("tree %d: path ends at %d (total %d), root ends at %d", n, at, cp.Total(), tr.Root.End)
		}
	}
}

func BenchmarkCriticalPath1600SequentialChildren(b *testing.B) {
	spans := []*Span{sp("t", "r", "", 0, 1_700_000)}
	for i := 0; i < 1600; i++ {
		spans = append(spans, sp("t", fmt.Sprintf("c%d", i), "r", int64(i)*1000+100, int64(i)*1000+900))
	}
	tr := New("t", spans)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ComputeCriticalPath(tr)
	}
}
