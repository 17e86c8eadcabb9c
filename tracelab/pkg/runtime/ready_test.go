package runtime

import (
	"path/filepath"
	"strings"
	"testing"

	"tracelab/internal/labtest"
)

// The message of a start that failed names the check, as the lab's own
// process-compose files declare it, with the ports filled in.
func TestReadinessCheckIsNamed(t *testing.T) {
	c := labtest.Open(t, filepath.Join("..", "..", ".."))
	l := newLocal(c, nil)
	for name, want := range map[string]string{
		"jaeger":    "GET http://127.0.0.1:" + c.Ports["JAEGER_QUERY_PORT"] + "/",
		"customers": "GET http://127.0.0.1:" + c.Ports["CUSTOMERS_PORT"] + "/",
	} {
		if got := l.readinessCheck(name); !strings.HasPrefix(got, want) {
			t.Errorf("%s: %q, want %q...", name, got, want)
		}
	}
	if got := l.readinessCheck("no-such"); !strings.Contains(got, "process-compose.yaml") {
		t.Errorf("unknown process: %q", got)
	}
}

func TestReadyLimitStretchesWithLoad(t *testing.T) {
	limit, why := readyLimit()
	if limit < 5*60e9 || limit > 20*60e9 || !strings.Contains(why, "per CPU") {
		t.Errorf("limit %s (%s)", limit, why)
	}
}
