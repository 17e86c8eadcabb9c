package tracegen

import "testing"

func TestGenerateIsDeterministic(t *testing.T) {
	a, b := Generate(5000, 3), Generate(5000, 3)
	if len(a) != len(b) || len(a) < 5000 {
		t.Fatalf("lengths %d, %d", len(a), len(b))
	}
	for i := range a {
		if a[i].SpanID != b[i].SpanID || a[i].Start != b[i].Start || a[i].Name != b[i].Name {
			t.Fatalf("span %d differs", i)
		}
	}
}
