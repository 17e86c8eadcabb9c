//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"tracelab/pkg/compare"
	"tracelab/pkg/detect"
	"tracelab/pkg/result"
)

// whileStackUp holds the checks a scenario's smoke run makes before its
// stack goes down (see runSmoke).
var whileStackUp = map[string]map[string]func(*testing.T, result.Result){
	"nplus1":         {"compare-over-jaeger": compareOverJaeger, "explorer-in-chromium": checkExplorer},
	"kafka-batching": {"kill-each-process": killEachProcess},
}

// compareOverJaeger runs `tracelab compare` over the lab's Jaeger, the
// baseline variant's window against the fixed one's, and requires the
// verdict of the judge's own comparison (result.json's "compared"): the
// same pass, the same findings resolved and none new.
func compareOverJaeger(t *testing.T, res result.Result) {
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
	judged, ok := res.Compared["fixed"]
	if !ok {
		t.Fatalf("result.json has no comparison of fixed with baseline: %v", res.Compared)
	}
	if !judged.Verdict.Pass || len(judged.Resolved) == 0 {
		t.Fatalf("the judge's comparison %+v; this check compares a fix that passed", judged.Verdict)
	}
	r := tracelab(t, nil, "compare", "--baseline", windows["baseline"], "--candidate", windows["fixed"], "--format", "json")
	if r.code != 0 {
		t.Fatalf("compare exited %d, the judge's comparison passed: %s\n%s", r.code, r.stderr, r.stdout)
	}
	var got compare.Result
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("compare's JSON: %v", err)
	}
	if a, b := keys(got.Resolved), keys(judged.Resolved); a != b || len(got.New) != 0 {
		t.Errorf("over Jaeger: resolved %s, new %d; the judge: resolved %s", a, len(got.New), b)
	}

	// The reverse is a regression: the N+1 comes back, exit 1.
	if r := tracelab(t, nil, "compare", "--baseline", windows["fixed"], "--candidate", windows["baseline"]); r.code != 1 {
		t.Errorf("fixed -> baseline exited %d, want 1: %s", r.code, r.stderr)
	}
}

// keys names findings as compare matches them.
func keys(fs []detect.Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, strings.Join([]string{f.Detector, f.Service, f.Request, f.Operation}, "|"))
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}
