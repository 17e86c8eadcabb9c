package source

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var now = time.Date(2026, 11, 23, 12, 40, 0, 0, time.UTC)

// analyze's flags and compare's SRC name the same source the same way.
func TestFlagsAndSRCAreOneSource(t *testing.T) {
	for _, tc := range []struct {
		flags map[string]string
		src   string
	}{
		{map[string]string{"jaeger": "http://j:16686/", "service": "catalog", "operation": "GET /x", "since": "10m", "limit": "5", "timeout": "5s", "max-response-bytes": "1MiB"},
			"jaeger:http://j:16686/?" + url.Values{"service": {"catalog"}, "operation": {"GET /x"}, "since": {"10m"}, "limit": {"5"}, "timeout": {"5s"}, "max-response-bytes": {"1MiB"}}.Encode()},
		{map[string]string{"tempo": "http://t:3200", "query": "{ }", "start": "2026-11-23T12:00:00Z", "end": "2026-11-23T12:30:00Z"},
			"tempo:http://t:3200?" + url.Values{"query": {"{ }"}, "start": {"2026-11-23T12:00:00Z"}, "end": {"2026-11-23T12:30:00Z"}}.Encode()},
		{map[string]string{"file": "traces.json"}, "traces.json"},
	} {
		a, err := Parse(tc.flags, Flags, now)
		if err != nil {
			t.Fatalf("%v: %v", tc.flags, err)
		}
		b, err := ParseSRC(tc.src, now)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("flags %+v\nSRC   %+v", *a, *b)
		}
	}
	s, _ := Parse(map[string]string{"jaeger": "http://j", "service": "s"}, Flags, now)
	if s.Limit != DefaultLimit || s.Timeout != DefaultTimeout || s.MaxResponseBytes != DefaultMaxResponseBytes || !s.From.Equal(now.Add(-DefaultSince)) || !s.To.Equal(now) {
		t.Errorf("defaults: %+v", *s)
	}
}

func TestSRCMessagesNameParameters(t *testing.T) {
	for src, want := range map[string]string{
		"jaeger:http://j?service=s&limit=0":             `limit="0": it must be a whole number`,
		"jaeger:http://j?service=s&bogus=1":             `the jaeger: source has an unknown parameter "bogus"`,
		"jaeger:http://j?service=s&query=x":             `the jaeger: source has an unknown parameter "query"`,
		"jaeger:http://j":                               "the jaeger: source needs service=S",
		"tempo:http://t?query=%7B%7D&since=1h&since=2h": `gives "since" 2 times`,
		"tempo:http://t?query=x&max-response-bytes=0":   "max-response-bytes=: \"0\" is not a positive size",
		"jaeger:localhost:16686?service=s":              "is not an http(s) URL",
	} {
		if _, err := ParseSRC(src, now); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", src, err, want)
		}
	}
}

// Fail closed: a file that yields no trace is an error, whatever the
// reason, not an empty analysis.
func TestFileWithoutTracesIsAnError(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"no-trace-id.json":  `{"resourceSpans":[{"scopeSpans":[{"spans":[{"spanId":"0102030405060708","name":"GET /x","kind":2,"startTimeUnixNano":"1","endTimeUnixNano":"9"}]}]}]}`,
		"empty-list.json":   `{"resourceSpans":[]}`,
		"jaeger-empty.json": `{"result":{"resourceSpans":[]}}`,
		"empty.json":        "",
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := ParseSRC(p, now)
		if err != nil {
			t.Fatal(err)
		}
		traces, err := s.Fetch(context.Background())
		if err == nil || len(traces) != 0 || Environment(err) {
			t.Errorf("%s: %d traces, %v; want an input error", name, len(traces), err)
		}
		var nt *NoTracesError
		if content != "" && !errors.As(err, &nt) {
			t.Errorf("%s: %v; want NoTracesError", name, err)
		}
	}
}

// The parser's limits are parameters of every kind of source; 0 is refused
// (it would silently mean the default), -1 lifts a limit.
func TestLimitParameters(t *testing.T) {
	now := time.Now()
	s, err := Parse(map[string]string{"file": "x.json", "max-attr-depth": "64", "max-spans": "-1"}, Flags, now)
	if err != nil {
		t.Fatal(err)
	}
	if s.Limits.MaxDepth != 64 || s.Limits.MaxSpans != -1 || s.Limits.MaxValueBytes != 0 {
		t.Errorf("limits %+v", s.Limits)
	}
	s, err = ParseSRC("tempo:http://t:3200?query=x&max-trace-spans=10", now)
	if err != nil || s.Limits.MaxSpansPerTrace != 10 {
		t.Errorf("tempo source: %+v, %v", s, err)
	}
	for _, v := range []string{"0", "-2", "many"} {
		if _, err := Parse(map[string]string{"file": "x.json", "max-attr-bytes": v}, Flags, now); err == nil || !strings.Contains(err.Error(), "--max-attr-bytes") {
			t.Errorf("max-attr-bytes %q: %v", v, err)
		}
	}
}
