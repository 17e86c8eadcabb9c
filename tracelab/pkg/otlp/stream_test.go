package otlp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"tracelab/internal/tracegen"
	"tracelab/pkg/trace"
)

// streamed is what a StreamFile sink saw.
type streamed struct {
	sinks   int            // sinks made
	batches int            // batches handed to the last sink
	spans   map[string]int // the last sink's traces: id -> spans
}

func stream(t *testing.T, path string, lim Limits) (*streamed, error) {
	t.Helper()
	st := &streamed{}
	err := StreamFile(context.Background(), path, lim, func() func([]*trace.Trace) {
		st.sinks++
		st.batches, st.spans = 0, map[string]int{}
		return func(batch []*trace.Trace) {
			st.batches++
			for _, tr := range batch {
				if _, twice := st.spans[tr.ID]; twice {
					t.Errorf("trace %s handed over twice", tr.ID)
				}
				st.spans[tr.ID] = len(tr.Spans)
			}
		}
	})
	return st, err
}

func writeTemp(t *testing.T, body []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "traces.json")
	if err := os.WriteFile(path, body, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// wholeSpans is the whole-file parse's answer: trace id -> spans.
func wholeSpans(t *testing.T, body []byte) map[string]int {
	t.Helper()
	traces, err := ParseReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]int{}
	for _, tr := range traces {
		m[tr.ID] = len(tr.Spans)
	}
	return m
}

func generated(t *testing.T, spans int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, trace.Group(tracegen.Generate(spans, 1))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A file written by Write is handed over batch by batch, each trace once
// and whole.
func TestStreamFileHandsOverEachTraceOnceAndWhole(t *testing.T) {
	body := generated(t, 60_000)
	st, err := stream(t, writeTemp(t, body), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if st.sinks != 1 {
		t.Errorf("%d sinks made, want 1", st.sinks)
	}
	if st.batches < 5 {
		t.Errorf("%d batches for 60,000 spans: the traces were not handed over as they completed", st.batches)
	}
	if want := wholeSpans(t, body); !mapsEqual(st.spans, want) {
		t.Errorf("streamed %d traces, the whole parse %d, or their spans differ", len(st.spans), len(want))
	}
}

// On a file too large to hold, what stays in memory is the batch being
// read, not the file: the live heap at each batch does not grow with the
// spans read.
func TestStreamFileMemoryFollowsTheBatch(t *testing.T) {
	path := writeTemp(t, generated(t, 400_000))
	var peaks []uint64
	err := StreamFile(context.Background(), path, Limits{}, func() func([]*trace.Trace) {
		return func([]*trace.Trace) {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peaks = append(peaks, ms.HeapAlloc)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(peaks) < 20 {
		t.Fatalf("%d batches", len(peaks))
	}
	early, late := slices.Max(peaks[:len(peaks)/4]), slices.Max(peaks[len(peaks)*3/4:])
	t.Logf("live heap: at most %d KiB in the first quarter of the batches, %d KiB in the last", early>>10, late>>10)
	// A quarter of the file's spans kept would be about 40 MiB.
	if late > early+16<<20 {
		t.Errorf("the live heap grew from %d KiB to %d KiB while reading: traces are kept", early>>10, late>>10)
	}
}

// A span the first pass could not see (its key written with an escape)
// comes after its trace was handed over: the file is read again, whole.
func TestStreamFileReadsAgainWhenATraceComesBack(t *testing.T) {
	span := func(key, id string) string {
		return fmt.Sprintf(`{"%s":"0af7651916cd43dd8448eb211c80319c","spanId":"%016x","name":"op","startTimeUnixNano":"1","endTimeUnixNano":"2"}`, key, id)
	}
	doc := fmt.Sprintf(`{"resourceSpans":[{"scopeSpans":[{"spans":[%s,%s]}]},{"scopeSpans":[{"spans":[%s]}]}]}`,
		span("traceId", "1"), span("traceId", "2"), span(`trace\u0049d`, "3"))
	st, err := stream(t, writeTemp(t, []byte(doc)), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if st.sinks != 2 || st.spans["0af7651916cd43dd8448eb211c80319c"] != 3 {
		t.Errorf("%d sinks, the last got %v; want 2 sinks and the trace with its 3 spans", st.sinks, st.spans)
	}
}

// A link's traceId counts as a span in the first pass, so that trace never
// reaches its count: it is handed over at the end, whole.
func TestStreamFileHandsOverUncountedTracesAtTheEnd(t *testing.T) {
	a, b := "0af7651916cd43dd8448eb211c80319c", "1bf7651916cd43dd8448eb211c80319c"
	doc := fmt.Sprintf(`{"resourceSpans":[{"scopeSpans":[{"spans":[
		{"traceId":%q,"spanId":"0000000000000001","name":"a","startTimeUnixNano":"1","endTimeUnixNano":"2","links":[{"traceId":%q,"spanId":"0000000000000009"}]},
		{"traceId":%q,"spanId":"0000000000000002","name":"b","startTimeUnixNano":"1","endTimeUnixNano":"2"}]}]}]}`, a, b, b)
	st, err := stream(t, writeTemp(t, []byte(doc)), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if st.sinks != 1 || st.spans[a] != 1 || st.spans[b] != 1 || len(st.spans) != 2 {
		t.Errorf("%d sinks, got %v; want one sink and both traces", st.sinks, st.spans)
	}
}

// Every form ParseReader takes streams to the same traces: concatenated
// documents, a trace spread over them, bare ResourceSpans lines, Tempo's
// batches, ids in base64.
func TestStreamFileReadsEveryForm(t *testing.T) {
	docs := map[string]string{
		"plain":         plainOTLP,
		"jaeger":        `{"result":` + plainOTLP + `}`,
		"tempo":         strings.Replace(plainOTLP, `"resourceSpans"`, `"batches"`, 1),
		"concatenated":  plainOTLP + "\n" + strings.ReplaceAll(plainOTLP, `"spanId":"`, `"spanId":"f`),
		"agent-line":    `{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"x"}}]},"scopeSpans":[{"spans":[{"traceId":"AAECAwQFBgcICQoLDA0ODw==","spanId":"AAECAwQFBgc=","name":"y","startTimeUnixNano":"1","endTimeUnixNano":"2"}]}]}` + "\n",
		"spaced-colons": strings.ReplaceAll(plainOTLP, `"traceId":`, "\"traceId\" :\n "),
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			st, err := stream(t, writeTemp(t, []byte(doc)), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if want := wholeSpans(t, []byte(doc)); st.sinks != 1 || !mapsEqual(st.spans, want) {
				t.Errorf("%d sinks, streamed %v; the whole parse %v", st.sinks, st.spans, want)
			}
		})
	}
}

// The limits hold as they do for a whole parse.
func TestStreamFileKeepsTheLimits(t *testing.T) {
	_, err := stream(t, writeTemp(t, generated(t, 20_000)), Limits{MaxSpans: 1000})
	var le *LimitError
	if !errors.As(err, &le) || le.Flag != "--max-spans" {
		t.Errorf("got %v, want the --max-spans limit", err)
	}
}

// The first pass counts every span wherever the buffer ends.
func TestCountSpansAcrossBufferBoundaries(t *testing.T) {
	body := generated(t, 3_000)
	want, err := countSpansBuf(bytes.NewReader(body), len(body)+1)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range want {
		total += int(n)
	}
	if total < 3_000 {
		t.Fatalf("counted %d spans in one buffer, want the 3,000 or more written", total)
	}
	for size := 2 * countSpansWindow; size < 2*countSpansWindow+97; size += 7 {
		got, err := countSpansBuf(bytes.NewReader(body), size)
		if err != nil {
			t.Fatal(err)
		}
		if !mapsEqual(got, want) {
			t.Fatalf("with a %d-byte buffer the counts differ", size)
		}
	}
}

func mapsEqual[K, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
