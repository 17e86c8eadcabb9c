package jaeger

import (
	"bufio"
	"encoding/json"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"tracelab/pkg/trace"
)

// WriteJSON encodes traces in Jaeger's own JSON format, the one its UI
// exports and its /api/traces endpoint returns:
// {"data":[{"traceID":…,"spans":[…],"processes":{…}}]}. Tools that predate
// OTLP JSON read this format (perf-sentinel does). Times are microseconds,
// as in Jaeger; the span kind, the status and the instrumentation scope
// become the tags Jaeger's own OTLP translator writes (span.kind,
// otel.status_code, error, otel.scope.name).
func WriteJSON(w io.Writer, traces []*trace.Trace) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	if _, err := bw.WriteString(`{"data":[`); err != nil {
		return err
	}
	enc := json.NewEncoder(bw)
	for i, t := range traces {
		if i > 0 {
			bw.WriteByte(',')
		}
		if err := enc.Encode(jsonTrace(t)); err != nil {
			return err
		}
	}
	if _, err := bw.WriteString("]}\n"); err != nil {
		return err
	}
	return bw.Flush()
}

type jTrace struct {
	TraceID   string              `json:"traceID"`
	Spans     []jSpan             `json:"spans"`
	Processes map[string]jProcess `json:"processes"`
}

type jSpan struct {
	TraceID       string       `json:"traceID"`
	SpanID        string       `json:"spanID"`
	OperationName string       `json:"operationName"`
	References    []jReference `json:"references"`
	StartTime     int64        `json:"startTime"` // µs
	Duration      int64        `json:"duration"`  // µs
	Tags          []jTag       `json:"tags"`
	Logs          []struct{}   `json:"logs"`
	ProcessID     string       `json:"processID"`
}

type jReference struct {
	RefType string `json:"refType"`
	TraceID string `json:"traceID"`
	SpanID  string `json:"spanID"`
}

type jTag struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

type jProcess struct {
	ServiceName string `json:"serviceName"`
	Tags        []jTag `json:"tags"`
}

func jsonTrace(t *trace.Trace) jTrace {
	jt := jTrace{TraceID: t.ID, Spans: make([]jSpan, 0, len(t.Spans)), Processes: map[string]jProcess{}}
	pids := map[string]string{} // service -> process id
	for _, s := range t.Spans {
		pid, ok := pids[s.Service]
		if !ok {
			pid = "p" + strconv.Itoa(len(pids)+1)
			pids[s.Service] = pid
			jt.Processes[pid] = jProcess{ServiceName: s.Service, Tags: stringTags(s.ResourceAttrs, "service.name")}
		}
		js := jSpan{
			TraceID: t.ID, SpanID: s.SpanID, OperationName: s.Name,
			References: []jReference{},
			StartTime:  s.Start / 1000, Duration: s.Duration() / 1000,
			Tags: stringTags(s.Attrs.Map()), Logs: []struct{}{}, ProcessID: pid,
		}
		if s.ParentID != "" {
			js.References = append(js.References, jReference{"CHILD_OF", t.ID, s.ParentID})
		}
		if s.Kind != trace.KindUnspecified {
			js.Tags = append(js.Tags, jTag{"span.kind", "string", strings.ToLower(s.Kind.String())})
		}
		if s.Scope != "" {
			js.Tags = append(js.Tags, jTag{"otel.scope.name", "string", s.Scope})
		}
		if s.Status != trace.StatusUnset {
			js.Tags = append(js.Tags, jTag{"otel.status_code", "string", s.Status.String()})
		}
		if s.Status == trace.StatusError {
			js.Tags = append(js.Tags, jTag{"error", "bool", true})
		}
		jt.Spans = append(jt.Spans, js)
	}
	return jt
}

// stringTags renders attributes as string tags in key order, leaving out
// the keys in skip. The model keeps every value as text.
func stringTags(attrs map[string]string, skip ...string) []jTag {
	tags := make([]jTag, 0, len(attrs))
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		if !slices.Contains(skip, k) {
			tags = append(tags, jTag{k, "string", attrs[k]})
		}
	}
	return tags
}
