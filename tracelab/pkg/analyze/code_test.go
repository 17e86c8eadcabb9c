package analyze

import (
	"testing"

	"tracelab/pkg/detect"
	"tracelab/pkg/trace"
)

// A finding's code: the calls' own attributes first, else the parent's
// (its own or its handler's), never another service's.
func TestFindingCode(t *testing.T) {
	span := func(id, parent, service, name string, kind trace.Kind, attrs map[string]string) *trace.Span {
		return &trace.Span{TraceID: "5b8efff798038103d269b633813fc60c", SpanID: id, ParentID: parent, Service: service, Name: name, Kind: kind, Start: 1, End: 2, Attrs: trace.AttrsOf(attrs)}
	}
	tr := trace.New("5b8efff798038103d269b633813fc60c", []*trace.Span{
		span("0000000000000001", "", "shop", "GET /items", trace.KindServer, map[string]string{"code.function.name": "com.acme.Shop.items"}),
		span("0000000000000002", "0000000000000001", "shop", "ItemRepo.find", trace.KindInternal, map[string]string{"code.namespace": "com.acme.ItemRepo", "code.function": "find"}),
		span("0000000000000003", "0000000000000002", "shop", "SELECT items", trace.KindClient, map[string]string{"db.system": "postgresql"}),
		span("0000000000000004", "0000000000000003", "db-proxy", "SELECT items", trace.KindServer, nil),
	})
	ix := codeIndex{}
	ix.add(tr)
	for _, tc := range []struct {
		f    detect.Finding
		want string // function; "" for none
	}{
		{detect.Finding{Service: "shop", Operation: tr.Operation(tr.Spans[1])}, "com.acme.ItemRepo.find"},
		{detect.Finding{Service: "shop", Operation: tr.Operation(tr.Spans[2]), ParentOperation: "GET /items"}, "com.acme.Shop.items"},
		{detect.Finding{Service: "shop", Operation: tr.Operation(tr.Spans[2])}, "com.acme.ItemRepo.find"},
		{detect.Finding{Service: "db-proxy", Operation: tr.Operation(tr.Spans[3])}, ""},
		{detect.Finding{Service: "shop", Operation: "dispatch before the handler"}, ""},
	} {
		got := ""
		if c := ix.codeOf(tc.f); c != nil {
			got = c.Function
		}
		if got != tc.want {
			t.Errorf("%s %q (parent %q): code %q, want %q", tc.f.Service, tc.f.Operation, tc.f.ParentOperation, got, tc.want)
		}
	}
}
