package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"tracelab/pkg/analyze"
	"tracelab/pkg/load"
)

func init() {
	register("load", "send a load definition's requests (loadtests/*.yaml) and keep a record per request", runLoad)
	withSubcommands("load", loadUsage)
}

const loadUsage = `usage: tracelab load run DEFINITION --target URL [--param NAME=VALUE]... [--out FILE|-]

Sends the requests of a load definition (loadtests/*.yaml;
docs/load.md) to URL, each with a fresh sampled W3C traceparent, on the
open model (RATE, DURATION, SHAPE...) or the closed one (VUS with
ITERATIONS or DURATION), and prints a summary. Progress goes to stderr
every 10 s; with --out - it goes to stdout, before the run.

  --param NAME=VALUE  a model parameter (RATE, VUS, ...) or one of the
                      definition's params; repeat for several
  --out FILE          write the run (summary and one record per request,
                      with its trace id) as JSON; - writes it to stdout
                      between marker lines, as a Kubernetes Job does`

// loadOut is where the summary goes, loadLog the progress; tests replace
// them.
var (
	loadOut io.Writer = os.Stdout
	loadLog io.Writer = os.Stderr
)

// params collects repeated --param NAME=VALUE flags.
type params map[string]string

func (p params) String() string { return "" }

func (p params) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not NAME=VALUE", s)
	}
	p[k] = v
	return nil
}

func runLoad(args []string) int {
	short, _, _ := strings.Cut(loadUsage, "\n")
	// Main answers "tracelab load" alone with the usage; a direct call
	// (the tests make them) gets the usage error.
	if len(args) == 0 || args[0] != "run" {
		return fail(exitUsage, "load: %s", short)
	}
	fs := flag.NewFlagSet("load run", flag.ContinueOnError)
	target := fs.String("target", "", "base URL")
	out := fs.String("out", "", "write the run as JSON")
	p := params{}
	fs.Var(p, "param", "NAME=VALUE")
	file, code, ok := parseNamed(fs, args[1:], loadUsage, loadOut)
	if !ok {
		return code
	}
	if file == "" || *target == "" {
		return fail(exitUsage, "load run: a definition and --target are required; %s", short)
	}
	def, err := load.ReadDefinition(file)
	if err != nil {
		return fail(exitUsage, "load run: %v", err)
	}
	if err := def.CheckParams(p); err != nil {
		return fail(exitUsage, "load run: %v", err)
	}
	ctx, stop := interruptible()
	defer stop()
	log := loadLog
	if *out == "-" {
		// A Job's log is the container's two streams merged by the runtime,
		// which splits a line over 16 KiB (the run's JSON) into pieces: a
		// line of the other stream, copied late, can land between them and
		// break the JSON. One stream keeps the order it was written in.
		log = loadOut
	}
	progress := func(format string, a ...any) { fmt.Fprintf(log, format+"\n", a...) }
	run, err := def.Run(ctx, load.Options{Target: *target, Params: p, Progress: progress})
	if err != nil {
		if ctx.Err() != nil {
			return fail(exitRuntime, "load run: interrupted")
		}
		return fail(exitRuntime, "load run: %v", err)
	}
	s := run.Summary
	summary := fmt.Sprintf("%s: %d requests (%.1f/s), %.1f%% failed, p50 %s, p95 %s, max %s", run.Model, s.Requests, s.ThroughputRPS,
		100*s.Failed, analyze.FormatMs(s.P50Ms), analyze.FormatMs(s.P95Ms), analyze.FormatMs(s.MaxMs))
	if s.LateSends > 0 {
		summary += fmt.Sprintf(", %.2f%% of sends over %g ms late", 100*s.LateSends, load.LateSendMs)
	}
	fmt.Fprintln(loadOut, summary)
	switch *out {
	case "-":
		err = load.WriteMarked(loadOut, run)
	case "":
	default:
		var data []byte
		if data, err = json.Marshal(run); err == nil {
			err = os.WriteFile(*out, data, 0o644)
		}
	}
	if err != nil {
		return fail(exitRuntime, "load run: %v", err)
	}
	return exitOK
}
