package backend

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func shortWaits(t *testing.T) {
	first, most := FirstRetryWait, MaxRetryWait
	FirstRetryWait, MaxRetryWait = 10*time.Millisecond, 200*time.Millisecond
	t.Cleanup(func() { FirstRetryWait, MaxRetryWait = first, most })
}

func readAll(into *string) func(io.Reader) error {
	return func(r io.Reader) error {
		b, err := io.ReadAll(r)
		*into = string(b)
		return err
	}
}

func TestRetriesTooManyRequestsThenSucceeds(t *testing.T) {
	var tries atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch tries.Add(1) {
		case 1:
			w.Header().Set("Retry-After", "1")
			http.Error(w, "slow down", http.StatusTooManyRequests)
		case 2:
			http.Error(w, "warming up", http.StatusServiceUnavailable)
		default:
			w.Write([]byte(`{"ok":true}`))
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var body string
	t0 := time.Now()
	if err := NewClient("Tempo", srv.URL, 0).Get(ctx, "/api/search", readAll(&body)); err != nil {
		t.Fatal(err)
	}
	if body != `{"ok":true}` || tries.Load() != 3 {
		t.Errorf("body %q after %d tries", body, tries.Load())
	}
	// Retry-After: 1 is honoured (the default first wait is 250 ms).
	if d := time.Since(t0); d < 900*time.Millisecond || d > 3*time.Second {
		t.Errorf("took %s; Retry-After asked for 1 s, then a 250 ms backoff", d)
	}
}

func TestTooManyRequestsForeverEndsWithinTheDeadline(t *testing.T) {
	var tries atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tries.Add(1)
		http.Error(w, "rate limited", http.StatusTooManyRequests)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	t0 := time.Now()
	err := NewClient("Jaeger", srv.URL, 0).Get(ctx, "/api/v3/traces", readAll(new(string)))
	d := time.Since(t0)
	var he *HTTPError
	if !errors.As(err, &he) || he.StatusCode != 429 || he.Rejected() {
		t.Fatalf("got %v; want a 429 that is not the request's fault", err)
	}
	if d > 2100*time.Millisecond || tries.Load() < 2 || he.Tries != int(tries.Load()) {
		t.Errorf("gave up after %s and %d tries (error says %d); want retries within the 2 s deadline", d, tries.Load(), he.Tries)
	}
	if !strings.Contains(err.Error(), "tried ") || !strings.Contains(err.Error(), "would pass the deadline") {
		t.Errorf("message %q does not say it retried until the deadline", err)
	}
}

// A Retry-After beyond the deadline ends the call at once, not at the
// deadline: the answer would be the same.
func TestRetryAfterPastTheDeadlineGivesUpAtOnce(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3600") // capped at MaxRetryWait, still past the deadline
		http.Error(w, "", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	t0 := time.Now()
	err := NewClient("Tempo", srv.URL, 0).Get(ctx, "/", readAll(new(string)))
	var he *HTTPError
	if !errors.As(err, &he) || he.Wait != MaxRetryWait || time.Since(t0) > time.Second {
		t.Errorf("got %v after %s", err, time.Since(t0))
	}
}

func TestNoDeadlineStillStopsRetrying(t *testing.T) {
	shortWaits(t)
	var tries atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tries.Add(1)
		http.Error(w, "", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	err := NewClient("Tempo", srv.URL, 0).Get(context.Background(), "/", readAll(new(string)))
	if he := (*HTTPError)(nil); !errors.As(err, &he) || tries.Load() != triesWithoutDeadline {
		t.Errorf("got %v after %d tries", err, tries.Load())
	}
}

// A body past the limit ends the read at the limit: the client never
// holds more than it, however much the server would send.
func TestAnswerLargerThanTheLimit(t *testing.T) {
	chunk := []byte(strings.Repeat(`{"resource":{},"scopeSpans":[]},`, 1024))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"resourceSpans":[`))
		for i := 0; i < 64<<20/len(chunk) && r.Context().Err() == nil; i++ { // 64 MiB unless cut off
			w.Write(chunk)
		}
	}))
	defer srv.Close()
	c := NewClient("Jaeger", srv.URL, 0)
	c.MaxResponseBytes = 1 << 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := c.Get(context.Background(), "/api/v3/traces", func(r io.Reader) error {
		var v any
		return json.NewDecoder(r).Decode(&v)
	})
	runtime.ReadMemStats(&after)
	var tl *TooLargeError
	if !errors.As(err, &tl) || !strings.Contains(err.Error(), "more than 1 MiB") {
		t.Fatalf("got %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Errorf("allocated %d MiB reading a 1 MiB-limited answer", alloc>>20)
	}

	// Exactly the limit is not too large.
	exact := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("0123456789")) }))
	defer exact.Close()
	c = NewClient("Jaeger", exact.URL, 0)
	c.MaxResponseBytes = 10
	var body string
	if err := c.Get(context.Background(), "/", readAll(&body)); err != nil || body != "0123456789" {
		t.Errorf("a body of exactly the limit: %q, %v", body, err)
	}
}

// The limit counts what read leaves unread too: trailing bytes past it are
// still too large.
func TestLimitCountsTheUnreadRest(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{}` + strings.Repeat(" ", 4096)))
	}))
	defer srv.Close()
	c := NewClient("Tempo", srv.URL, 0)
	c.MaxResponseBytes = 1024
	err := c.Get(context.Background(), "/", func(r io.Reader) error { var v any; return json.NewDecoder(r).Decode(&v) })
	if tl := (*TooLargeError)(nil); !errors.As(err, &tl) {
		t.Errorf("got %v", err)
	}
}

func TestGarbageAnswerIsABadAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<html>please log in</html>"))
	}))
	defer srv.Close()
	err := NewClient("Tempo", srv.URL, 0).Get(context.Background(), "/api/search?q=x", func(r io.Reader) error {
		var v any
		return json.NewDecoder(r).Decode(&v)
	})
	var ba *BadAnswerError
	if !errors.As(err, &ba) || ba.URL != srv.URL+"/api/search" || strings.Contains(err.Error(), "\n") {
		t.Errorf("got %v", err)
	}
}

func TestBodyBrokenOffIsNotAnswering(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.Write([]byte(`{"resourceSpans":[`))
	}))
	defer srv.Close()
	err := NewClient("Jaeger", srv.URL, 0).Get(context.Background(), "/", readAll(new(string)))
	var na *NotAnsweringError
	if !errors.As(err, &na) || !strings.Contains(err.Error(), "reading the answer") {
		t.Errorf("got %v", err)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"7":                             7 * time.Second,
		"Fri, 02 Jan 2026 03:04:15 GMT": 10 * time.Second,
		"Fri, 02 Jan 2026 03:00:00 GMT": 0, // in the past: no wait
	} {
		if got, ok := retryAfter(v, now); !ok || got != want {
			t.Errorf("retryAfter(%q) = %s, %v; want %s", v, got, ok, want)
		}
	}
	for _, v := range []string{"", "-1", "soon"} {
		if _, ok := retryAfter(v, now); ok {
			t.Errorf("retryAfter(%q) accepted", v)
		}
	}
}

func TestBytes(t *testing.T) {
	for in, want := range map[string]int64{"256MiB": 256 << 20, "1 GiB": 1 << 30, "10KB": 10000, "1048576": 1 << 20, "5B": 5} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1MiB", "lots", "1.5GiB", "99999999999GiB"} {
		if _, err := ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) accepted", in)
		}
	}
	if FormatBytes(256<<20) != "256 MiB" || FormatBytes(1000) != "1000 bytes" {
		t.Errorf("FormatBytes: %s, %s", FormatBytes(256<<20), FormatBytes(1000))
	}
}
