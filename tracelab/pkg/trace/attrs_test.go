package trace

import (
	"slices"
	"testing"
)

func TestAttrsSortedLookupAndSet(t *testing.T) {
	a := AttrsOf(map[string]string{"b": "2", "a": "1", "c": ""})
	if want := (Attrs{{"a", "1"}, {"b", "2"}, {"c", ""}}); !slices.Equal(a, want) {
		t.Fatalf("AttrsOf = %v, want %v", a, want)
	}
	if v, ok := a.Get("c"); !ok || v != "" {
		t.Errorf(`Get("c") = %q, %v; want "", true (present though empty)`, v, ok)
	}
	if _, ok := a.Get("d"); ok {
		t.Error(`Get("d") found a key that is absent`)
	}
	a.Set("b", "20")
	a.Set("aa", "x")
	if want := (Attrs{{"a", "1"}, {"aa", "x"}, {"b", "20"}, {"c", ""}}); !slices.Equal(a, want) {
		t.Fatalf("after Set: %v, want %v", a, want)
	}
	// Past eight keys Get searches by halves: every key must still be found.
	m := map[string]string{}
	for _, k := range []string{"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9", "k10"} {
		m[k] = "v" + k
	}
	big := AttrsOf(m)
	for k, v := range m {
		if got := big.Value(k); got != v {
			t.Errorf("Value(%q) = %q, want %q", k, got, v)
		}
	}
	if big.Value("k") != "" {
		t.Error(`Value("k") found a key that is absent`)
	}
	s := &Span{Attrs: a}
	if got := s.Attr("c", "b"); got != "20" {
		t.Errorf(`Attr("c", "b") = %q, want the first non-empty, "20"`, got)
	}
}
