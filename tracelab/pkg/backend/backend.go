// Package backend holds what the clients of the trace backends' HTTP APIs
// (pkg/jaeger, pkg/tempo) share: one bounded GET (see Client) and the ways
// a request fails, told apart because a caller answers them differently: a
// rejected request, an answer that is not the backend's format or one too
// large are the user's to fix; a backend that does not answer, fails (5xx)
// or keeps asking to wait (429) is the environment's.
package backend

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// HTTPError is an answer other than the one expected. Message is the
// backend's one-line reason, or the start of its body.
type HTTPError struct {
	Backend    string // "Jaeger", "Tempo"
	URL        string
	StatusCode int
	Status     string
	Message    string
	// Tries counts the requests sent when the answer was one that is
	// retried (429, 503) and the retries ran out; 0 otherwise.
	Tries int
	Spent time.Duration // from the first try to giving up, with Tries
	// Wait is the wait before the next try that the deadline left no room
	// for; 0 when the tries ran out otherwise.
	Wait time.Duration
}

func (e *HTTPError) Error() string {
	s := fmt.Sprintf("%s at %s answered %s", e.Backend, e.URL, e.Status)
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Tries > 0 {
		s += fmt.Sprintf(" (tried %d times over %s", e.Tries, e.Spent.Round(100*time.Millisecond))
		if e.Wait > 0 {
			s += fmt.Sprintf("; waiting %s more would pass the deadline", e.Wait.Round(100*time.Millisecond))
		}
		s += ")"
	}
	return s
}

// Rejected reports whether the backend refused the request itself (4xx),
// which sending it again will not change. 429 asks the client to come back
// later, so it is not.
func (e *HTTPError) Rejected() bool {
	return e.StatusCode >= 400 && e.StatusCode < 500 && e.StatusCode != http.StatusTooManyRequests
}

// BadAnswerError is a 200 answer that cannot be read: not the backend's
// format (the URL most often names something else: Grafana's UI, a login
// proxy), or past a limit of the parser.
type BadAnswerError struct {
	Backend string
	URL     string
	Err     error
}

func (e *BadAnswerError) Error() string {
	return fmt.Sprintf("%s at %s gave an answer tracelab cannot read (%v); check that the URL is %s's query API", e.Backend, e.URL, OneLine(e.Err.Error()), e.Backend)
}

func (e *BadAnswerError) Unwrap() error { return e.Err }

// TooLargeError is an answer longer than the client's MaxResponseBytes.
type TooLargeError struct {
	Backend string
	URL     string
	Limit   int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s at %s answered more than %s, the most one answer may hold; narrow the window or the query, lower the number of traces, or raise max-response-bytes", e.Backend, e.URL, FormatBytes(e.Limit))
}

// NotAnsweringError is a request that got no HTTP answer: connection
// refused, a timeout, a broken connection.
type NotAnsweringError struct {
	Backend string
	URL     string
	Err     error
}

func (e *NotAnsweringError) Error() string {
	return fmt.Sprintf("%s is not answering at %s: %v", e.Backend, e.URL, e.Err)
}

func (e *NotAnsweringError) Unwrap() error { return e.Err }

// NotAnswering wraps the error of an HTTP client call, keeping the cause
// and saying so when it was a timeout.
func NotAnswering(backend, url string, err error) *NotAnsweringError {
	return &NotAnsweringError{Backend: backend, URL: url, Err: cause(err)}
}

func cause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return fmt.Errorf("no answer in time (%v)", ue.Err)
		}
		return ue.Err
	}
	return err
}

// OneLine folds a message to one line of at most 300 characters.
func OneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return s
}
