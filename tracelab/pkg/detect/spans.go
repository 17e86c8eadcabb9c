package detect

import "tracelab/pkg/trace"

// SpansIn returns the spans of t a finding is about, in t's order: those
// it lists in Evidence["highlight_span_ids"] when t holds them (a detector
// that names its example's spans); or else the spans whose operation is the
// finding's, called from its parent operation when it names one (in its
// example trace, from the example's parent span). A trace the finding did
// not affect gives none, so the same rule marks the example in the report
// and finds, in the explorer, every trace that shows the finding.
func (f *Finding) SpansIn(t *trace.Trace) []*trace.Span {
	var out []*trace.Span
	// []string from a run in memory, []any once read back from result.json.
	switch ids := f.Evidence["highlight_span_ids"].(type) {
	case []string:
		for _, id := range ids {
			if s := t.Span(id); s != nil {
				out = append(out, s)
			}
		}
	case []any:
		for _, id := range ids {
			if id, ok := id.(string); ok {
				if s := t.Span(id); s != nil {
					out = append(out, s)
				}
			}
		}
	}
	if len(out) > 0 || f.Operation == "" {
		return out
	}
	parentID, _ := f.Evidence["example_parent_span_id"].(string)
	if example, _ := f.Evidence["example_trace_id"].(string); example != t.ID {
		parentID = ""
	}
	for _, s := range t.Spans {
		op := t.Operation(s)
		if op != f.Operation && s.Service+" "+op != f.Operation {
			continue
		}
		p := t.Parent(s)
		switch {
		case parentID != "":
			if p == nil || p.SpanID != parentID {
				continue
			}
		case f.ParentOperation != "":
			if p == nil || (t.Operation(p) != f.ParentOperation && p.Service+" "+t.Operation(p) != f.ParentOperation) {
				continue
			}
		}
		out = append(out, s)
	}
	return out
}
