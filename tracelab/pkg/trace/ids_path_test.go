package trace

import (
	"strings"
	"testing"
)

// ParameterizePath replaces each id-looking segment and keeps everything
// else byte for byte, slashes included: the same as splitting on "/",
// replacing and joining.
func TestParameterizePathBySegments(t *testing.T) {
	splitJoin := func(path string) string {
		parts := strings.Split(path, "/")
		for i, p := range parts {
			if LooksLikeID(p) {
				parts[i] = IDPlaceholder
			}
		}
		return strings.Join(parts, "/")
	}
	for _, p := range []string{
		"", "/", "//", "123", "/123", "123/", "/prices/1017", "/prices/1017/", "/a/123/b/456",
		"//7//", "/v2/items", "/owners/7/pets/3/visits", "/books/", "/x/550e8400-e29b-41d4-a716-446655440000/y",
		"/items/12ab34cd56ef", "/api/2024-01-02/report", "/p/1017?x=1",
	} {
		if got, want := ParameterizePath(p), splitJoin(p); got != want {
			t.Errorf("ParameterizePath(%q) = %q, want %q", p, got, want)
		}
	}
	if got := ParameterizePath("/prices/1017"); got != "/prices/"+IDPlaceholder {
		t.Errorf("ParameterizePath(/prices/1017) = %q", got)
	}
}
