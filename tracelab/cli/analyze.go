package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"tracelab/pkg/analyze"
	"tracelab/pkg/detect"
	"tracelab/pkg/otlp"
)

func init() {
	register("analyze", "analyze OTLP JSON traces from a file", runAnalyze)
}

const analyzeUsage = `usage: tracelab analyze --file F|- [--format text|json]

Reads OTLP JSON traces (Jaeger api/v3 {"result":{"resourceSpans":...}},
plain OTLP {"resourceSpans":...} or Tempo {"batches":...}; several
documents may be concatenated) and reports the pathologies found, ranked by
their share of the critical path, and per request type where the time goes.`

// analyzeOut is where the report goes; tests replace it.
var analyzeOut io.Writer = os.Stdout

func runAnalyze(args []string) int {
	fs := flag.NewFlagSet("analyze", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported in one line below
	file := fs.String("file", "", "OTLP JSON file to analyze")
	format := fs.String("format", "text", "output format: text or json")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(analyzeOut, analyzeUsage)
			return exitOK
		}
		return fail(exitUsage, "analyze: %v; usage: tracelab analyze --file F|- [--format text|json]", err)
	}
	if fs.NArg() > 0 {
		return fail(exitUsage, "analyze: unexpected argument %q; usage: tracelab analyze --file F|- [--format text|json]", fs.Arg(0))
	}
	if *file == "" {
		return fail(exitUsage, "analyze: --file is required: an OTLP JSON file (Jaeger api/v3, plain OTLP or Tempo), or - for stdin")
	}
	if *format != "text" && *format != "json" {
		return fail(exitUsage, "analyze: unknown --format %q; use text or json", *format)
	}

	f, code := openTraceFile("analyze", *file)
	if code != exitOK {
		return code
	}
	defer f.Close()

	t0 := time.Now()
	traces, err := otlp.ParseReader(f)
	if err != nil {
		return fail(exitUsage, "analyze: %s: %v", *file, err)
	}
	if d := time.Since(t0); d > 2*time.Second {
		fmt.Fprintf(os.Stderr, "tracelab: read %d traces from %s in %.1fs; analyzing\n", len(traces), *file, d.Seconds())
	}
	report := analyze.Analyze(traces, detect.All())

	if *format == "json" {
		enc := json.NewEncoder(analyzeOut)
		enc.SetIndent("", "  ")
		err = enc.Encode(report)
	} else {
		err = analyze.WriteText(analyzeOut, report)
	}
	if err != nil {
		return fail(exitRuntime, "analyze: writing the report: %v", err)
	}
	return exitOK
}

// unwrapPathError drops the "open <path>:" prefix the message already has.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
