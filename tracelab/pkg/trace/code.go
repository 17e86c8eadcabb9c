package trace

import "strconv"

// Code is where in the source a span was made, as its OpenTelemetry code
// attributes say. The semantic conventions renamed them when they became
// stable (v1.33.0, "Code attributes semantic convention stability
// migration guide"): code.function.name is the fully qualified name
// (com.example.MyHttpService.serveRequest) that replaced code.namespace
// plus code.function, code.file.path replaced code.filepath and
// code.line.number replaced code.lineno. Instrumentations emit either
// generation: the Java agent 2.x writes code.namespace and code.function
// on Spring MVC controller spans, Quarkus 3 writes code.function.name on
// its server spans. CodeOf reads both, the stable names first.
type Code struct {
	// Function is the fully qualified function or method name, e.g.
	// "dev.tracelab.orders.OrdersResource.create"; a bare name when the
	// span names no namespace.
	Function string `json:"function,omitempty"`
	// File is the source file as the process saw it: often absolute, in a
	// build or container path, so it is matched by its end.
	File string `json:"file,omitempty"`
	// Line is the line in File, 0 when not recorded.
	Line int `json:"line,omitempty"`
	// Span is the operation of the span that carries the attributes: the
	// finding's own span, or the ancestor (the handler) whose code made it.
	Span string `json:"span"`
}

// CodeOf returns the code attributes of s; ok is false when s carries
// neither a function nor a file.
func CodeOf(s *Span) (c Code, ok bool) {
	a := s.Attrs
	c.Function = a.Value("code.function.name")
	if c.Function == "" {
		fn, ns := a.Value("code.function"), a.Value("code.namespace")
		switch {
		case fn != "" && ns != "":
			c.Function = ns + "." + fn
		default:
			c.Function = fn
		}
	}
	c.File = a.Value("code.file.path")
	if c.File == "" {
		c.File = a.Value("code.filepath")
	}
	line := a.Value("code.line.number")
	if line == "" {
		line = a.Value("code.lineno")
	}
	if n, err := strconv.Atoi(line); err == nil && n > 0 {
		c.Line = n
	}
	return c, c.Function != "" || c.File != ""
}
