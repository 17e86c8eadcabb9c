// Package trace is tracelab's model of a distributed trace: spans grouped by
// trace id and linked into a tree, plus the measurements every detector needs
// (operation fingerprints, call classification, sibling concurrency and the
// critical path).
//
// The model is deliberately small and independent of any wire format; the
// otlp package fills it from OTLP JSON.
package trace

// Kind is the OpenTelemetry span kind. The numeric values are the OTLP enum
// values, so a kind read from JSON as a number maps one to one.
type Kind int

// Span kinds, numbered as in opentelemetry/proto/trace/v1/trace.proto.
const (
	KindUnspecified Kind = 0
	KindInternal    Kind = 1
	KindServer      Kind = 2
	KindClient      Kind = 3
	KindProducer    Kind = 4
	KindConsumer    Kind = 5
)

var kindNames = [...]string{"UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER"}

// String returns the short upper-case name, e.g. "CLIENT".
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "UNSPECIFIED"
}

// ParseKind accepts both the OTLP enum name ("SPAN_KIND_CLIENT") and the
// short form ("CLIENT", "client").
func ParseKind(s string) (Kind, bool) {
	u := upperASCII(s)
	if len(u) > len("SPAN_KIND_") && u[:len("SPAN_KIND_")] == "SPAN_KIND_" {
		u = u[len("SPAN_KIND_"):]
	}
	for i, n := range kindNames {
		if u == n {
			return Kind(i), true
		}
	}
	return KindUnspecified, false
}

// StatusCode is the OpenTelemetry span status code.
type StatusCode int

// Status codes, numbered as in OTLP.
const (
	StatusUnset StatusCode = 0
	StatusOK    StatusCode = 1
	StatusError StatusCode = 2
)

// String returns "UNSET", "OK" or "ERROR".
func (c StatusCode) String() string {
	switch c {
	case StatusOK:
		return "OK"
	case StatusError:
		return "ERROR"
	}
	return "UNSET"
}

// ParseStatusCode accepts "STATUS_CODE_ERROR", "ERROR", "error", ...
func ParseStatusCode(s string) (StatusCode, bool) {
	u := upperASCII(s)
	if len(u) > len("STATUS_CODE_") && u[:len("STATUS_CODE_")] == "STATUS_CODE_" {
		u = u[len("STATUS_CODE_"):]
	}
	switch u {
	case "UNSET":
		return StatusUnset, true
	case "OK":
		return StatusOK, true
	case "ERROR":
		return StatusError, true
	}
	return StatusUnset, false
}

// Span is one timed operation. Times are Unix nanoseconds: integers keep a
// million spans compact and make interval arithmetic exact.
type Span struct {
	TraceID  string // lower-case hex
	SpanID   string // lower-case hex
	ParentID string // lower-case hex; "" for a root
	Name     string
	Kind     Kind
	Service  string // resource attribute service.name
	Scope    string // instrumentation scope name, e.g. "io.opentelemetry.http-url-connection"
	Start    int64  // Unix nanoseconds
	End      int64  // Unix nanoseconds

	// Attrs are the span attributes (see Attrs). ResourceAttrs is shared
	// by all the spans of one resource: treat it as read-only.
	Attrs         Attrs
	ResourceAttrs map[string]string

	Status        StatusCode
	StatusMessage string

	// idx is the span's position in its Trace's Spans; set by NewTrace so
	// tree look-ups are slice indexing instead of map look-ups.
	idx int32
}

// Duration is End-Start in nanoseconds, never negative.
func (s *Span) Duration() int64 {
	if s.End < s.Start {
		return 0
	}
	return s.End - s.Start
}

// Attr returns the value of the first of keys that is present and not empty.
// Semantic-convention names changed over the years (http.method became
// http.request.method, ...), so callers usually pass old and new names.
func (s *Span) Attr(keys ...string) string {
	for _, k := range keys {
		if v := s.Attrs.Value(k); v != "" {
			return v
		}
	}
	return ""
}

func upperASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'a' && c <= 'z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'a' && b[j] <= 'z' {
					b[j] -= 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
