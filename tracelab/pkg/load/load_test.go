package load

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func define(t *testing.T, yaml string) *Definition {
	t.Helper()
	d, err := ParseDefinition("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestBurstsSendAsManyAsUniform(t *testing.T) {
	uniform, err := ModelOf(map[string]string{"RATE": "30", "DURATION": "45s"})
	if err != nil {
		t.Fatal(err)
	}
	bursty, err := ModelOf(map[string]string{"RATE": "30", "DURATION": "45s", "SHAPE": "bursty", "BURST_FACTOR": "4", "BURST_MS": "300", "BURST_GAP_MS": "2000"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(uniform.Schedule); n != 1350 {
		t.Errorf("uniform: %d requests, want 30/s x 45 s = 1350", n)
	}
	if d := len(bursty.Schedule) - len(uniform.Schedule); d < -1 || d > 1 {
		t.Errorf("bursty: %d requests, uniform %d: the same mean rate must send as many", len(bursty.Schedule), len(uniform.Schedule))
	}
	// The spikes: the densest 300 ms holds about 4x what 300 ms of the
	// uniform load does (9 requests).
	most := 0
	for i, at := range bursty.Schedule {
		j := i
		for j < len(bursty.Schedule) && bursty.Schedule[j] < at+300*time.Millisecond {
			j++
		}
		most = max(most, j-i)
	}
	if most < 25 {
		t.Errorf("the densest 300 ms of the bursty schedule holds %d requests; want a 4x spike (>= 25)", most)
	}
	again, _ := ModelOf(map[string]string{"RATE": "30", "DURATION": "45s", "SHAPE": "bursty"})
	if fmt.Sprint(again.Schedule) != fmt.Sprint(bursty.Schedule) {
		t.Error("the same seed gave another schedule")
	}
	other, _ := ModelOf(map[string]string{"RATE": "30", "DURATION": "45s", "SHAPE": "bursty", "SEED": "2"})
	if fmt.Sprint(other.Schedule) == fmt.Sprint(bursty.Schedule) {
		t.Error("another seed gave the same schedule")
	}
}

func TestModelRefusesBadParameters(t *testing.T) {
	for _, p := range []map[string]string{
		{"RATE": "fast"}, {"RATE": "10", "SHAPE": "wavy"}, {"RATE": "10", "DURATION": "soon"}, {"VUS": "0"}, {"RATE": "10", "VUS": "5", "MAX_VUS": "2"},
	} {
		if _, err := ModelOf(p); err == nil {
			t.Errorf("%v: no error", p)
		}
	}
}

func TestDefinitionErrorsNameTheField(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"requests: []", "field requests"},
		{"requests: [{name: a}]", "requests[0]: name and path"},
		{"requests: [{name: a, path: /x, from: nowhere}]", `from "nowhere"`},
		{"requests: [{name: a, path: /x, weight: SHARE}]", `weight "SHARE"`},
		{"requests: [{name: a, path: '/{{.x'}]", "requests[0]"},
		{"requests: [{name: a, path: /x, colour: red}]", "colour"},
		{"requests: [{name: a, path: /x, from: ids, keep: {field: id, as: ids}}]", "none can start"},
	} {
		_, err := ParseDefinition("test.yaml", []byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v; want it to mention %s", c.yaml, err, c.want)
		}
	}
}

// Every request carries its own sampled traceparent, and its record the
// same trace id.
func TestTraceparentPerRequest(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{} // trace id -> path
	re := regexp.MustCompile(`^00-([0-9a-f]{32})-[0-9a-f]{16}-01$`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := re.FindStringSubmatch(r.Header.Get("traceparent"))
		if m == nil || r.Header.Get(headerSeq) != "" || r.Header.Get(headerRequest) != "" {
			w.WriteHeader(400)
			return
		}
		mu.Lock()
		seen[m[1]] = r.URL.Path
		mu.Unlock()
	}))
	defer srv.Close()
	d := define(t, "requests: [{name: item, path: '/items/{{int 1 9}}'}]")
	run, err := d.Run(context.Background(), Options{Target: srv.URL, Params: map[string]string{"VUS": "4", "ITERATIONS": "200"}})
	if err != nil {
		t.Fatal(err)
	}
	if run.Summary.Requests != 200 || run.Summary.Failed != 0 {
		t.Fatalf("summary %+v; want 200 requests, none failed", run.Summary)
	}
	if len(seen) != 200 {
		t.Errorf("%d distinct trace ids reached the server for 200 requests", len(seen))
	}
	for _, rec := range run.Records {
		if _, ok := seen[rec.TraceID]; !ok {
			t.Fatalf("record %+v: its trace id never reached the server", rec)
		}
	}
}

// The request mix: weights, bodies, expected statuses, and lists that
// answers fill (an order is read only once one was created).
func TestMixKeepsAndExpects(t *testing.T) {
	var mu sync.Mutex
	created, reads := 0, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.Method == "POST" && r.URL.Path == "/orders":
			var o struct {
				Lines []struct{ ProductID int } `json:"lines"`
			}
			body, _ := io.ReadAll(r.Body)
			if json.Unmarshal(body, &o) != nil || len(o.Lines) != 3 || r.Header.Get("Content-Type") != "application/json" {
				w.WriteHeader(400)
				return
			}
			created++
			w.WriteHeader(201)
			fmt.Fprintf(w, `{"id": %d}`, created)
		case r.Method == "GET" && strings.HasPrefix(r.URL.Path, "/orders/"):
			reads++
			if id, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/orders/")); id%2 == 1 {
				w.WriteHeader(500) // the odd orders are broken
			}
		default:
			w.WriteHeader(404)
		}
	}))
	defer srv.Close()
	d := define(t, `
params: {GET_SHARE: "0", POST_SHARE: "1"}
requests:
  - name: create
    weight: POST_SHARE
    method: POST
    path: /orders
    body: '{"lines": [{{range $i, $p := distinct 3 1 5}}{{if $i}},{{end}}{"productId": {{$p}}}{{end}}]}'
    expect: 201
    keep: {field: id, as: orders, max: 2}
  - name: read
    weight: GET_SHARE
    from: orders
    path: '/orders/{{.item}}'
`)
	run, err := d.Run(context.Background(), Options{Target: srv.URL, Params: map[string]string{"GET_SHARE": "1", "POST_SHARE": "0", "ITERATIONS": "50"}})
	if err != nil {
		t.Fatal(err)
	}
	// The one user may make a second order before the first answer is
	// kept (answers are read as the user moves on to its next request).
	if created < 1 || created > 2 || created+reads != 50 {
		t.Errorf("%d created, %d read; want an order created first, then only reads", created, reads)
	}
	run, err = d.Run(context.Background(), Options{Target: srv.URL, Params: map[string]string{"GET_SHARE": "1", "ITERATIONS": "400"}})
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, rec := range run.Records {
		if rec.Failed() {
			failed++
			if rec.Name != "read" || rec.Error != "status 500, expected 200" {
				t.Errorf("unexpected failure %+v", rec)
			}
		}
	}
	if failed == 0 || run.Summary.Failed == 0 {
		t.Error("reads of the broken order did not count as failed")
	}
}

// Coordinated omission: a server that takes 100 ms per request, and one
// sender where 50 requests a second are due. A sender that measured from
// the send would report 100 ms; the open model measures from the
// scheduled instant, so the backlog shows.
func TestOpenModelMeasuresFromTheSchedule(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { time.Sleep(100 * time.Millisecond) }))
	defer srv.Close()
	d := define(t, "requests: [{name: slow, path: /}]")
	run, err := d.Run(context.Background(), Options{Target: srv.URL, Params: map[string]string{"RATE": "50", "DURATION": "1s", "VUS": "1", "MAX_VUS": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	s := run.Summary
	if s.Requests != 50 || s.P95Ms < 3000 || s.LateSends < 0.9 {
		t.Errorf("summary %+v; want 50 requests, p95 >= 3 s (the last waits ~4 s for its turn) and nearly every send late", s)
	}
	last := run.Records[len(run.Records)-1]
	if got := last.LatencyMs - last.WaitMs(); got > 1000 {
		t.Errorf("the last request took %.0f ms from its send; want about 100", got)
	}
}

func TestSetupListDrivesRequests(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/routes":
			fmt.Fprint(w, `{"routes": [{"method": "GET", "sample": "/a", "status": 200}, {"method": "DELETE", "sample": "/b", "status": 204}]}`)
		case "/a":
		case "/b":
			if r.Method == "DELETE" {
				w.WriteHeader(204)
			}
		default:
			w.WriteHeader(404)
		}
	}))
	defer srv.Close()
	d := define(t, `
setup: [{name: routes, path: /api/routes, list: routes}]
requests: [{name: route, from: routes, method: '{{.item.method}}', path: '{{.item.sample}}', expect: '{{.item.status}}'}]
`)
	run, err := d.Run(context.Background(), Options{Target: srv.URL, Params: map[string]string{"VUS": "2", "ITERATIONS": "40"}})
	if err != nil {
		t.Fatal(err)
	}
	if run.Summary.Failed != 0 {
		t.Errorf("summary %+v; every route answers its expected status", run.Summary)
	}
	if _, err := d.Run(context.Background(), Options{Target: srv.URL + "/nothing", Params: map[string]string{"ITERATIONS": "1"}}); err == nil || !strings.Contains(err.Error(), "setup GET /api/routes answered 404") {
		t.Errorf("a failing setup call: err = %v", err)
	}
}

func TestMarkedRunRoundTrips(t *testing.T) {
	var b strings.Builder
	b.WriteString("progress line\n")
	run := &Run{Model: "m", Summary: Summary{Requests: 1}, Records: []Record{{Name: "a", TraceID: "ab", Status: 200}}}
	if err := WriteMarked(&b, run); err != nil {
		t.Fatal(err)
	}
	b.WriteString("trailing\n")
	got, err := ReadMarked(b.String())
	if err != nil || got.Records[0].TraceID != "ab" || got.Summary.Requests != 1 {
		t.Fatalf("%+v, %v", got, err)
	}
	if _, err := ReadMarked("no run here"); err == nil {
		t.Error("a log without a run was read")
	}
	// As a kind Job's log showed it: the engine's summary, written to
	// standard error, read by the runtime between the marker and the JSON.
	interleaved := strings.Replace(b.String(), runBegin+"\n", runBegin+"\nclosed model: 1 users, 50 requests: 50 requests (8.5/s)\n", 1)
	if got, err := ReadMarked(interleaved); err != nil || got.Records[0].TraceID != "ab" {
		t.Errorf("a progress line inside the markers: %+v, %v", got, err)
	}
	if _, err := ReadMarked(runBegin + "\nclosed model\n" + runEnd + "\n"); err == nil || !strings.Contains(err.Error(), "no JSON line") {
		t.Errorf("markers around no JSON: %v", err)
	}
}
