package cli

import (
	"errors"
	"flag"
	"io"
	"os"

	"tracelab/pkg/jaeger"
	"tracelab/pkg/otlp"
	"tracelab/pkg/redact"
)

func init() {
	register("convert", "convert traces to plain OTLP JSON or Jaeger JSON", runConvert)
}

const convertUsage = `usage: tracelab convert --file F|- --to otlp|jaeger [--out F] [--max-traces N] [--redact]

Reads traces in any form analyze reads (Jaeger api/v3, plain OTLP, Tempo, or
the Java agent's logging-otlp lines) and writes them as plain OTLP JSON
({"resourceSpans":[...]}) or as Jaeger's own JSON ({"data":[...]}, what
perf-sentinel and older tools read).

  --max-traces N  keep the N earliest traces (by root start)
  --redact        drop what describes the recording machine: host names,
                  command lines, executable paths, and every attribute whose
                  value holds the home, working or temporary directory`

// convertOut is where the output goes without --out; tests replace it.
var convertOut io.Writer = os.Stdout

func runConvert(args []string) int {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	file := fs.String("file", "", "trace file, or - for stdin")
	to := fs.String("to", "", "otlp or jaeger")
	out := fs.String("out", "", "output file (default stdout)")
	maxTraces := fs.Int("max-traces", 0, "keep the N earliest traces")
	redactMachine := fs.Bool("redact", false, "drop host names, command lines and local paths")
	if code, ok := parseFlags(fs, args, 0, convertUsage, convertOut); !ok {
		return code
	}
	if *file == "" {
		return fail(exitUsage, "convert: --file is required (a trace file, or - for stdin); see tracelab convert --help")
	}
	if *to != "otlp" && *to != "jaeger" {
		return fail(exitUsage, "convert: --to must be otlp or jaeger, got %q", *to)
	}
	if *maxTraces < 0 {
		return fail(exitUsage, "convert: --max-traces must be 0 (all) or more, got %d", *maxTraces)
	}

	in, code := openTraceFile("convert", *file)
	if code != exitOK {
		return code
	}
	traces, err := otlp.ParseReader(in)
	in.Close()
	if err != nil {
		return fail(exitUsage, "convert: %s: %v", *file, err)
	}
	if *maxTraces > 0 && len(traces) > *maxTraces {
		traces = traces[:*maxTraces] // Group orders them by root start
	}
	if *redactMachine {
		redact.Machine(traces)
	}

	w := convertOut
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return fail(exitUsage, "convert: cannot write %s: %v", *out, unwrapPathError(err))
		}
		defer f.Close()
		w = f
	}
	if *to == "jaeger" {
		err = jaeger.WriteJSON(w, traces)
	} else {
		err = otlp.Write(w, traces)
	}
	if err != nil {
		return fail(exitRuntime, "convert: writing: %v", err)
	}
	return exitOK
}

// openTraceFile opens a trace file for a command, or stdin for "-".
func openTraceFile(cmd, name string) (io.ReadCloser, int) {
	if name == "-" {
		return io.NopCloser(os.Stdin), exitOK
	}
	if st, err := os.Stat(name); err != nil {
		return nil, fail(exitUsage, "%s: cannot read %s: %v", cmd, name, unwrapPathError(err))
	} else if st.IsDir() {
		return nil, fail(exitUsage, "%s: %s is a directory; pass an OTLP JSON file", cmd, name)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, fail(exitUsage, "%s: cannot read %s: %v", cmd, name, unwrapPathError(err))
	}
	return f, exitOK
}

// unwrapPathError drops the "open <path>:" prefix the message already has.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
