package jaeger

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"tracelab/pkg/backend"
)

func TestNotAnsweringIsOneClearError(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c := New("http://" + addr)
	err := c.Ping(context.Background())
	if err == nil || !strings.Contains(err.Error(), "Jaeger is not answering at http://"+addr) {
		t.Fatalf("got %v", err)
	}
	if _, err := c.FindTraces(context.Background(), "svc", time.Now(), time.Now(), 1); err == nil {
		t.Fatal("FindTraces succeeded against a closed port")
	}
}

func TestFindTracesQueryAndNotFound(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.RawQuery
		http.Error(w, `{"error":{"httpCode":404,"message":"No traces found"}}`, http.StatusNotFound)
	}))
	defer srv.Close()
	from := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	body, err := New(srv.URL).FindTraces(context.Background(), "catalog", from, from.Add(time.Minute), 7)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), `"resourceSpans":[]`) {
		t.Errorf("404 should read as no traces, got %s", body)
	}
	for _, want := range []string{"query.service_name=catalog", "query.num_traces=7", "query.start_time_min=2026-01-02T03%3A04%3A05Z", "query.raw_traces=true"} {
		if !strings.Contains(got, want) {
			t.Errorf("query %q lacks %q", got, want)
		}
	}
}

func TestFindSendsOperationAndSortsErrors(t *testing.T) {
	var got string
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.RawQuery
		if status != http.StatusOK {
			http.Error(w, `{"error":{"httpCode":503,"message":"storage unavailable"}}`, status)
			return
		}
		w.Write([]byte(`{"result":{"resourceSpans":[]}}`))
	}))
	defer srv.Close()
	c := New(srv.URL)
	now := time.Now()
	if _, err := c.Find(context.Background(), Query{Service: "catalog", Operation: "GET /catalog/summary", From: now, To: now, Limit: 3}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "query.operation_name=GET+%2Fcatalog%2Fsummary") {
		t.Errorf("query %q lacks the operation", got)
	}
	status = http.StatusServiceUnavailable
	// A deadline too short for a retry's wait: the 503 is the answer.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Find(ctx, Query{Service: "catalog", From: now, To: now, Limit: 3})
	var he *backend.HTTPError
	if !errors.As(err, &he) || he.StatusCode != 503 || he.Message != "storage unavailable" {
		t.Errorf("got %v", err)
	}
}
