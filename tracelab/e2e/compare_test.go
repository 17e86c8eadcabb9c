//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"testing"
	"time"

	"tracelab/pkg/scenario"
)

// whileStackUp holds the checks a scenario's smoke run makes before its
// stack goes down (see runSmoke).
var whileStackUp = map[string]func(*testing.T, scenario.Result){
	"nplus1": compareOverJaeger,
}

// compareOverJaeger runs `tracelab compare` over the lab's Jaeger, the
// baseline variant's window against the fixed one's, and requires the
// verdict the scenario's judge gave: the fix passes, and the N+1 is listed
// as resolved.
func compareOverJaeger(t *testing.T, res scenario.Result) {
	windows := map[string]string{}
	jaeger := "http://127.0.0.1:" + labPorts(t)["JAEGER_QUERY_PORT"]
	for _, v := range res.Variants {
		q := url.Values{}
		q.Set("service", "catalog")
		q.Set("start", v.Window.Start.UTC().Format(time.RFC3339Nano))
		q.Set("end", v.Window.End.UTC().Format(time.RFC3339Nano))
		q.Set("limit", "100")
		windows[v.Variant] = fmt.Sprintf("jaeger:%s?%s", jaeger, q.Encode())
	}
	r := tracelab(t, nil, "compare", "--baseline", windows["baseline"], "--candidate", windows["fixed"], "--format", "json")
	if res.Verdict != "pass" {
		t.Fatalf("the judge's verdict is %q; this check compares a passing run", res.Verdict)
	}
	if r.code != 0 {
		t.Fatalf("compare exited %d, the judge passed: %s\n%s", r.code, r.stderr, r.stdout)
	}
	var out struct {
		Resolved []struct {
			Detector string `json:"detector"`
			Service  string `json:"service"`
		} `json:"resolved"`
		New []json.RawMessage `json:"new"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("compare's JSON: %v", err)
	}
	if len(out.Resolved) != 1 || out.Resolved[0].Detector != "n-plus-one" || out.Resolved[0].Service != "catalog" || len(out.New) != 0 {
		t.Errorf("resolved %+v, new %d; want catalog's n-plus-one resolved and nothing new", out.Resolved, len(out.New))
	}

	// The reverse is a regression: the N+1 comes back, exit 1.
	if r := tracelab(t, nil, "compare", "--baseline", windows["fixed"], "--candidate", windows["baseline"]); r.code != 1 {
		t.Errorf("fixed -> baseline exited %d, want 1: %s", r.code, r.stderr)
	}
}
