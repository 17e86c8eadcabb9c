package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"tracelab/corpus"
	"tracelab/pkg/jaeger"
	"tracelab/pkg/trace"
)

// perf-sentinel (robintra/perf-sentinel, crates.io) reads Jaeger's JSON
// export ({"data":[…]}), not OTLP JSON, from a file of at most
// [daemon] max_payload_size bytes: 16 MiB by default, 100 MiB at most
// (sentinel-core config.rs, validate_daemon_limits). Its findings are per
// trace.

// maxInput is perf-sentinel's hard ceiling on an input file.
const maxInput = 100 << 20

// psConfig raises perf-sentinel's input limit from its 16 MiB default to
// the ceiling and leaves every detection threshold at its default.
const psConfig = "[daemon]\nmax_payload_size = 104857600\n"

// psFinding is the part of a perf-sentinel finding the comparison reads.
type psFinding struct {
	Type       string `json:"type"`
	TraceID    string `json:"trace_id"`
	Service    string `json:"service"`
	Suggestion string `json:"suggestion"`
	Pattern    struct {
		Template    string `json:"template"`
		Occurrences int    `json:"occurrences"`
	} `json:"pattern"`
}

// perfSentinel runs the perf-sentinel binary in a scratch directory (so
// no .perf-sentinel.toml or acknowledgments file of the caller's applies).
type perfSentinel struct {
	bin, dir string
}

func newPerfSentinel(bin string) (*perfSentinel, error) {
	dir, err := os.MkdirTemp("", "bench-detect-")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(psConfig), 0o644); err != nil {
		return nil, err
	}
	return &perfSentinel{bin: bin, dir: dir}, nil
}

func (p *perfSentinel) command(input string) *exec.Cmd {
	cmd := exec.Command(p.bin, "analyze", "--input", input, "--format", "json",
		"--config", filepath.Join(p.dir, "config.toml"), "--no-acknowledgments")
	cmd.Dir = p.dir
	return cmd
}

// analyze writes traces as Jaeger JSON and returns perf-sentinel's
// findings. Traces over its input limit are split into several files by
// trace: its detectors work per trace, so nothing is lost (only its
// cross-trace slow-query percentiles, which are not compared here, see
// fewer traces at once).
func (p *perfSentinel) analyze(traces []*trace.Trace) ([]psFinding, error) {
	var buf bytes.Buffer
	if err := jaeger.WriteJSON(&buf, traces); err != nil {
		return nil, err
	}
	if buf.Len() > maxInput && len(traces) > 1 {
		a, err := p.analyze(traces[:len(traces)/2])
		if err != nil {
			return nil, err
		}
		b, err := p.analyze(traces[len(traces)/2:])
		return append(a, b...), err
	}
	input := filepath.Join(p.dir, "traces.jaeger.json")
	if err := os.WriteFile(input, buf.Bytes(), 0o644); err != nil {
		return nil, err
	}
	var stdout, stderr bytes.Buffer
	cmd := p.command(input)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("perf-sentinel analyze: %v: %s", err, firstLine(stderr.String()))
	}
	var report struct {
		Findings []psFinding `json:"findings"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
		return nil, fmt.Errorf("perf-sentinel analyze: reading its JSON report: %v", err)
	}
	return report.Findings, nil
}

// psDetector maps a perf-sentinel finding type to the tracelab detector
// id it is compared with ("" = not compared). testdata/corpus/README.md,
// "perf-sentinel mapping", says why.
func psDetector(f psFinding) string {
	switch f.Type {
	case "n_plus_one_sql", "n_plus_one_http":
		return "n-plus-one"
	case "redundant_sql", "redundant_http":
		return "redundant-call"
	case "serialized_calls":
		if allSQL(serializedCalls(f.Suggestion)) {
			return "chatty-db"
		}
	}
	return ""
}

// psMapping is psDetector for people, printed with the report.
var psMapping = [][2]string{
	{"n_plus_one_sql, n_plus_one_http", "n-plus-one"},
	{"redundant_sql, redundant_http", "redundant-call"},
	{"serialized_calls whose calls are all SQL", "chatty-db"},
}

// serializedCalls reads the templates of a serialized_calls finding from
// its suggestion, the only place its JSON names them:
// "N sequential independent calls could potentially be parallelized:
// T1 (3ms) -> T2 (5ms). Total sequential: …".
func serializedCalls(suggestion string) []string {
	_, rest, ok := strings.Cut(suggestion, "parallelized: ")
	if !ok {
		return nil
	}
	chain, _, _ := strings.Cut(rest, ". Total sequential:")
	var calls []string
	for _, c := range strings.Split(chain, " -> ") {
		if i := strings.LastIndex(c, " ("); i >= 0 {
			c = c[:i]
		}
		calls = append(calls, c)
	}
	return calls
}

var httpMethods = []string{"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE", "CONNECT"}

// allSQL says whether every template is a statement rather than an HTTP
// call: perf-sentinel writes HTTP templates as "METHOD /path".
func allSQL(templates []string) bool {
	if len(templates) == 0 {
		return false
	}
	for _, t := range templates {
		method, path, _ := strings.Cut(t, " ")
		if slices.Contains(httpMethods, method) && strings.HasPrefix(path, "/") {
			return false
		}
	}
	return true
}

// psCulprit is what makes perf-sentinel findings the same culprit.
type psCulprit struct{ typ, service, request, template string }

// requests names the request each trace serves, by trace id, as tracelab's
// findings name it: the operation of the trace's request span, or "".
func requests(traces []*trace.Trace) map[string]string {
	m := map[string]string{}
	for _, t := range traces {
		if r := t.Request(); r != nil {
			m[t.ID] = t.Operation(r)
		}
	}
	return m
}

// aggregate turns perf-sentinel's per-trace findings into one finding per
// distinct culprit (type, service, request, template), as tracelab
// reports them, with the mean occurrences over the traces that show it.
// The request is the one the finding's trace serves (requestOf, by trace
// id): perf-sentinel's own endpoint is the I/O span's http.route or
// http.target when it reads Jaeger JSON, which client spans rarely carry.
// Types with no tracelab counterpart are counted in notCompared.
func aggregate(fs []psFinding, requestOf map[string]string, notCompared map[string]int) []corpus.Finding {
	type agg struct {
		traces      map[string]bool
		occurrences int
		example     psFinding
	}
	byCulprit := map[psCulprit]*agg{}
	var order []psCulprit
	for _, f := range fs {
		if psDetector(f) == "" {
			notCompared[f.Type]++
			continue
		}
		k := psCulprit{f.Type, f.Service, requestOf[f.TraceID], f.Pattern.Template}
		a := byCulprit[k]
		if a == nil {
			a = &agg{traces: map[string]bool{}, example: f}
			byCulprit[k] = a
			order = append(order, k)
		}
		a.traces[f.TraceID] = true
		a.occurrences += f.Pattern.Occurrences
	}
	var out []corpus.Finding
	for _, k := range order {
		a := byCulprit[k]
		f := corpus.Finding{
			Detector:      psDetector(a.example),
			Service:       k.service,
			Request:       k.request,
			Operation:     k.template,
			CallsPerTrace: float64(a.occurrences) / float64(len(a.traces)),
			Summary:       fmt.Sprintf("%s in %d trace(s): %s", k.typ, len(a.traces), a.example.Suggestion),
			NoHost:        strings.HasSuffix(k.typ, "_http"),
		}
		if k.typ == "serialized_calls" {
			// Its template is the parent's endpoint, not a statement, and
			// it does not name the database.
			f.Operation = strings.Join(serializedCalls(a.example.Suggestion), " -> ")
			f.OperationUnknown = true
		}
		out = append(out, f)
	}
	return out
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
