package trace

import "testing"

// Both generations of the code attributes, the stable names first.
func TestCodeOf(t *testing.T) {
	for _, tc := range []struct {
		attrs map[string]string
		want  Code
		ok    bool
	}{
		{map[string]string{"code.function.name": "com.acme.Shop.list", "code.file.path": "/app/Shop.java", "code.line.number": "12"}, Code{Function: "com.acme.Shop.list", File: "/app/Shop.java", Line: 12}, true},
		{map[string]string{"code.namespace": "com.acme.Shop", "code.function": "list", "code.filepath": "Shop.java", "code.lineno": "7"}, Code{Function: "com.acme.Shop.list", File: "Shop.java", Line: 7}, true},
		{map[string]string{"code.function": "get_user"}, Code{Function: "get_user"}, true},
		{map[string]string{"code.function.name": "a.B.c", "code.function": "old", "code.namespace": "x.Y", "code.lineno": "-3"}, Code{Function: "a.B.c"}, true},
		{map[string]string{"code.namespace": "com.acme.Shop", "http.route": "/x"}, Code{}, false},
	} {
		got, ok := CodeOf(&Span{Attrs: AttrsOf(tc.attrs)})
		if got != tc.want || ok != tc.ok {
			t.Errorf("%v: %+v, %v; want %+v, %v", tc.attrs, got, ok, tc.want, tc.ok)
		}
	}
}
