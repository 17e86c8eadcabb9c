package analyze

import (
	"tracelab/pkg/detect"
	"tracelab/pkg/trace"
)

// codeIndex remembers, per span operation of a service, the code that
// made such spans (trace.CodeOf): the span's own code attributes, or else
// those of its nearest ancestor in the same service, usually the handler
// (a controller span, a server span). It keeps one entry per distinct
// operation, never a span, so memory follows the operations, not the
// input. A finding then names its code by its operation or its parent's
// (codeOf).
type codeIndex map[segmentKey]*codeEntry

type codeEntry struct {
	code  *trace.Code // nil until a span of the operation resolves
	own   bool        // the span itself carried the attributes
	tries int         // spans looked at without an answer
}

// codeTries is how many spans of an operation are looked at before the
// index stops asking: an instrumentation that records code attributes on
// an operation records them every time, so a few spans settle it, and an
// input without any costs a map look-up per span after that.
const codeTries = 8

func (ix codeIndex) add(t *trace.Trace) {
	for _, s := range t.Spans {
		k := segmentKey{s.Service, t.Operation(s)}
		e := ix[k]
		if e == nil {
			e = &codeEntry{}
			ix[k] = e
		}
		if e.code != nil || e.tries >= codeTries {
			continue
		}
		e.tries++
		// The nearest span of the same service with code attributes: a
		// different service's handler is not the code that made this span.
		for p := s; p != nil && p.Service == s.Service; p = t.Parent(p) {
			if c, ok := trace.CodeOf(p); ok {
				c.Span = t.Operation(p)
				e.code, e.own = &c, p == s
				break
			}
		}
	}
}

// codeOf is the code of a finding: the code attributes its culprit spans
// carry themselves, else the code of the parent the calls are made under
// (its own or its handler's), else the culprit's nearest ancestor's. A
// finding whose operation names no span (dispatch-overhead's time before
// the handler) gets none: the handler did not cause it.
func (ix codeIndex) codeOf(f detect.Finding) *trace.Code {
	op := ix[segmentKey{f.Service, f.Operation}]
	if op != nil && op.own {
		return op.code
	}
	if f.ParentOperation != "" {
		if p := ix[segmentKey{f.Service, f.ParentOperation}]; p != nil && p.code != nil {
			return p.code
		}
	}
	if op != nil {
		return op.code
	}
	return nil
}
