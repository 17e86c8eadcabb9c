package otlp

import (
	"bytes"
	"testing"

	"tracelab/internal/tracegen"
	"tracelab/pkg/trace"
)

// BenchmarkParseSpans reads 100k generated spans (the lab's shapes, as
// Write prints them) from memory, so it measures the parser alone:
//
//	go test ./pkg/otlp -run '^$' -bench ParseSpans -benchmem -count 5
func BenchmarkParseSpans(b *testing.B) {
	data, n := generatedOTLP(b)
	for b.Loop() {
		got, err := ParseSpans(bytes.NewReader(data))
		if err != nil || len(got) != n {
			b.Fatalf("%d spans, %v", len(got), err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "spans/s")
}

// generatedOTLP is 100k generated spans as Write prints them, and their
// count; it sets the benchmark's bytes and turns on its allocation count.
func generatedOTLP(b *testing.B) ([]byte, int) {
	spans := tracegen.Generate(100_000, 1)
	var buf bytes.Buffer
	if err := Write(&buf, trace.Group(spans)); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	return buf.Bytes(), len(spans)
}

// BenchmarkParseReader is BenchmarkParseSpans with the spans grouped into
// traces (trace.New: dedup, links, and the broken-trace counts), as every
// caller reads them.
func BenchmarkParseReader(b *testing.B) {
	data, n := generatedOTLP(b)
	for b.Loop() {
		if _, err := ParseReader(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "spans/s")
}
