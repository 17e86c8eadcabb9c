package tempo

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"tracelab/pkg/backend"
)

// The search answer's shape follows the example in Tempo's HTTP API docs
// (GET /api/search); see testdata/tempo/README.md.
const searchAnswer = `{"traces":[
 {"traceID":"2f3e0cee77ae5dc9c17ade3689eb2e54","rootServiceName":"shop-backend","rootTraceName":"update-billing","startTimeUnixNano":"1684778327699392724","durationMs":557},
 {"traceID":"4a9c1d0e5b7f3a2c8e6d4b1a0f9e8d7c","rootServiceName":"shop-backend","rootTraceName":"update-billing","startTimeUnixNano":"1684778328102000000","durationMs":12}],
 "metrics":{"inspectedBytes":"292781","completedJobs":1,"totalJobs":1}}`

func TestSearchAndTraces(t *testing.T) {
	var query string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/search":
			query = r.URL.RawQuery
			w.Write([]byte(searchAnswer))
		case r.URL.Path == "/api/traces/2f3e0cee77ae5dc9c17ade3689eb2e54":
			w.Write([]byte(`{"batches":[]}`))
		default:
			http.Error(w, "trace not found", http.StatusNotFound)
		}
	}))
	defer srv.Close()
	c := New(srv.URL + "/")
	from := time.Unix(1684778280, 0)
	found, err := c.Search(context.Background(), `{ .service.name = "shop-backend" }`, from, from.Add(90*time.Second), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0].TraceID != "2f3e0cee77ae5dc9c17ade3689eb2e54" || found[0].RootTraceName != "update-billing" || found[0].DurationMs != 557 {
		t.Errorf("found %+v", found)
	}
	for _, want := range []string{"q=%7B+.service.name+%3D+%22shop-backend%22+%7D", "start=1684778280", "end=1684778370", "limit=1"} {
		if !strings.Contains(query, want) {
			t.Errorf("query %q lacks %q", query, want)
		}
	}
	var calls []int
	var docs []string
	read := func(r io.Reader) error { b, err := io.ReadAll(r); docs = append(docs, string(b)); return err }
	missing, err := c.Traces(context.Background(), []string{"2f3e0cee77ae5dc9c17ade3689eb2e54", "4a9c1d0e5b7f3a2c8e6d4b1a0f9e8d7c"}, read, func(done, total int) { calls = append(calls, done) })
	if err != nil || len(docs) != 1 || missing != 1 || len(calls) != 2 {
		t.Errorf("docs %d, missing %d, progress %v, err %v", len(docs), missing, calls, err)
	}
}

func TestErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "invalid TraceQL query: parse error at line 1, col 3:\nsyntax error", http.StatusBadRequest)
	}))
	defer srv.Close()
	_, err := New(srv.URL).Search(context.Background(), "{ foo", time.Now(), time.Now(), 5)
	var he *backend.HTTPError
	if !errors.As(err, &he) || he.StatusCode != 400 || he.Message != "invalid TraceQL query: parse error at line 1, col 3: syntax error" || he.URL != srv.URL+"/api/search" {
		t.Errorf("got %v", err)
	}

	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	_, err = New("http://"+addr).Search(context.Background(), "{}", time.Now(), time.Now(), 5)
	var na *backend.NotAnsweringError
	if !errors.As(err, &na) || !strings.HasPrefix(err.Error(), "Tempo is not answering at http://"+addr+": ") {
		t.Errorf("got %v", err)
	}
}
