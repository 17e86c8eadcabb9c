package analyze

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"tracelab/internal/tracegen"
	"tracelab/pkg/detect"
	"tracelab/pkg/otlp"
	"tracelab/pkg/trace"
)

// The throughput benchmarks behind `make bench`:
//
//	go test ./pkg/analyze -run '^$' -bench 'BenchmarkAnalyze1M|BenchmarkParseAnalyze1M' -benchtime 1x
//
// BenchmarkAnalyze1M measures grouping and analysis of a million spans
// already in memory; BenchmarkParseAnalyze1M measures the whole
// `tracelab analyze --file` path from a million-span OTLP JSON file on
// disk, read trace by trace. Both report spans/s; the second also MB/s.

const benchSpans = 1_000_000

func BenchmarkAnalyze1M(b *testing.B) {
	spans := tracegen.Generate(benchSpans, 1)
	b.ReportAllocs()
	b.ResetTimer()
	var elapsed time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		Analyze(trace.Group(spans), detect.All())
		elapsed += time.Since(t0)
	}
	b.ReportMetric(float64(len(spans))*float64(b.N)/elapsed.Seconds(), "spans/s")
}

func BenchmarkParseAnalyze1M(b *testing.B) {
	path := filepath.Join(b.TempDir(), "traces.json")
	spans := tracegen.Generate(benchSpans, 1)
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := otlp.Write(f, trace.Group(spans)); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	n := len(spans)
	spans = nil
	runtime.GC()

	b.SetBytes(st.Size())
	b.ReportAllocs()
	b.ResetTimer()
	var elapsed time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		var an *Analyzer
		err := otlp.StreamFile(context.Background(), path, otlp.Limits{}, func() func([]*trace.Trace) {
			an = NewAnalyzer(detect.All())
			return an.Add
		})
		if err != nil {
			b.Fatal(err)
		}
		rep := an.Report()
		elapsed += time.Since(t0)
		if rep.Spans != n {
			b.Fatalf("analyzed %d spans, wrote %d", rep.Spans, n)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/elapsed.Seconds(), "spans/s")
	b.ReportMetric(float64(st.Size())/(1<<20), "file-MB")
}
