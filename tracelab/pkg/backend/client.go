package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultMaxResponseBytes bounds one answer unless told otherwise: far
// above what a window of traces needs (20 traces of 10,000 spans are about
// 60 MiB of OTLP JSON), far below what would exhaust a CI runner's memory.
const DefaultMaxResponseBytes = 256 << 20

// Retry waits: the first wait after a 429 or 503, doubling up to
// MaxRetryWait. A Retry-After header replaces the wait, kept between
// FirstRetryWait and MaxRetryWait so one header can neither park the
// command nor make it hammer the backend. Variables so tests
// can shorten them.
var (
	FirstRetryWait = 250 * time.Millisecond
	MaxRetryWait   = 10 * time.Second
)

// triesWithoutDeadline bounds the retries of a call whose context has no
// deadline (about 40 s of waiting); with a deadline, retries go on while
// the next wait fits in it.
const triesWithoutDeadline = 8

// Client sends the GETs of one backend's API.
type Client struct {
	Backend string // "Jaeger", "Tempo": names it in errors
	BaseURL string // without a trailing slash
	HTTP    *http.Client
	// MaxResponseBytes bounds each answer's body; 0 is
	// DefaultMaxResponseBytes.
	MaxResponseBytes int64
}

// NewClient returns a client whose requests are bounded by their context
// (the caller's deadline) and by http.Client.Timeout, with connecting and
// the TLS handshake bounded on their own so a silent host fails early.
func NewClient(backend, baseURL string, requestTimeout time.Duration) *Client {
	transport := &http.Transport{
		// No kept-alive connections: Jaeger's shutdown waits for open
		// ones, which made stopping the lab's stack take 20 s longer.
		DisableKeepAlives:   true,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		TLSHandshakeTimeout: 10 * time.Second,
		Proxy:               http.ProxyFromEnvironment,
	}
	return &Client{
		Backend: backend,
		BaseURL: strings.TrimRight(baseURL, "/"),
		HTTP:    &http.Client{Timeout: requestTimeout, Transport: transport},
	}
}

// Get sends GET BaseURL+pathAndQuery and hands a 200 answer's body to read,
// which must consume what it needs before returning. 429 and 503 are
// retried, waiting as Retry-After says or backing off, while the next wait
// fits in ctx's deadline. Errors: *NotAnsweringError (no answer, or the
// body broke off or ran past the deadline), *HTTPError (any status but
// 200), *TooLargeError (a body past MaxResponseBytes), *BadAnswerError
// (read failed on a body that arrived whole: not the backend's format).
func (c *Client) Get(ctx context.Context, pathAndQuery string, read func(io.Reader) error) error {
	endpoint := c.BaseURL + pathAndQuery
	if i := strings.IndexByte(endpoint, '?'); i >= 0 {
		endpoint = endpoint[:i]
	}
	start := time.Now()
	wait := FirstRetryWait
	var last *HTTPError // the answer that is being retried
	for tries := 1; ; tries++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.BaseURL+pathAndQuery, nil)
		if err != nil {
			return fmt.Errorf("%s URL %q: %v", c.Backend, c.BaseURL, err)
		}
		req.Header.Set("Accept", "application/json")
		resp, err := c.HTTP.Do(req)
		if err != nil {
			if last != nil && ctx.Err() != nil {
				// The deadline ended a retry: the answer is still the last one.
				last.Spent = time.Since(start)
				return last
			}
			return NotAnswering(c.Backend, c.BaseURL, err)
		}
		if resp.StatusCode == http.StatusOK {
			err := c.readBody(resp.Body, endpoint, read)
			resp.Body.Close()
			return err
		}
		he := &HTTPError{Backend: c.Backend, URL: endpoint, StatusCode: resp.StatusCode, Status: resp.Status, Message: errorMessage(resp.Body)}
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
			return he
		}
		next := wait
		if ra, ok := retryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			// Not below the first wait: "Retry-After: 0" on every answer
			// would make a busy loop.
			next = max(ra, FirstRetryWait)
		}
		next = min(next, MaxRetryWait)
		last = he
		he.Tries, he.Spent = tries, time.Since(start)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < next {
			he.Wait = next
			return he
		} else if !ok && tries >= triesWithoutDeadline {
			return he
		}
		t := time.NewTimer(next)
		select {
		case <-ctx.Done():
			t.Stop()
			he.Spent = time.Since(start)
			return he
		case <-t.C:
		}
		wait = min(2*wait, MaxRetryWait)
	}
}

// ReadAll runs fetch, a Get or a wrapper of it (jaeger's FindInto,
// tempo's TraceInto), and returns the whole body, for a caller that keeps
// the text rather than parsing it as it arrives.
func ReadAll(fetch func(read func(io.Reader) error) error) ([]byte, error) {
	var body []byte
	err := fetch(func(r io.Reader) error {
		var err error
		body, err = io.ReadAll(r)
		return err
	})
	return body, err
}

// readBody gives read the body cut at MaxResponseBytes and sorts out why
// read failed: the cut, the connection, or the content.
func (c *Client) readBody(body io.Reader, endpoint string, read func(io.Reader) error) error {
	limit := c.MaxResponseBytes
	if limit <= 0 {
		limit = DefaultMaxResponseBytes
	}
	lr := &limitedReader{r: body, left: limit}
	err := read(lr)
	if err == nil && !lr.over && lr.err == nil {
		// read may stop at the end of the JSON it wanted; the bytes after
		// it still count against the limit and may break off.
		_, err = io.Copy(io.Discard, lr)
	}
	switch {
	case lr.over:
		return &TooLargeError{Backend: c.Backend, URL: endpoint, Limit: limit}
	case lr.err != nil:
		return NotAnswering(c.Backend, c.BaseURL, fmt.Errorf("reading the answer: %w", cause(lr.err)))
	case err != nil:
		return &BadAnswerError{Backend: c.Backend, URL: endpoint, Err: err}
	}
	return nil
}

// limitedReader reads at most left bytes and remembers whether the body
// went past them (over) or broke off (err), which the reader's own error
// message would not say.
type limitedReader struct {
	r    io.Reader
	left int64
	over bool
	err  error
}

var errTooLarge = errors.New("the answer is larger than the limit")

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.over {
		return 0, errTooLarge
	}
	if l.left <= 0 {
		// One byte more tells a body of exactly the limit from a longer one.
		var one [1]byte
		n, err := l.r.Read(one[:])
		if n > 0 {
			l.over = true
			return 0, errTooLarge
		}
		return 0, l.note(err)
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, l.note(err)
}

func (l *limitedReader) note(err error) error {
	if err != nil && err != io.EOF && l.err == nil {
		l.err = err
	}
	return err
}

// errorMessage is the backend's reason in an error answer: Jaeger's
// {"error":{"message":…}}, or the start of the body (Tempo answers text).
func errorMessage(body io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(body, 64<<10))
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &e) == nil && e.Error.Message != "" {
		return OneLine(e.Error.Message)
	}
	return OneLine(string(b))
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil {
		if s < 0 {
			return 0, false
		}
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// FormatBytes writes n in the largest binary unit that divides it
// (256 MiB), or in bytes.
func FormatBytes(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d %s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// ParseBytes reads a size: a whole number of bytes, or one followed by
// KiB, MiB, GiB (powers of 1024) or KB, MB, GB (powers of 1000).
func ParseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	num, mult := s, int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a positive size (e.g. 256MiB, 1GB, 1048576)", s)
	}
	return n * mult, nil
}
