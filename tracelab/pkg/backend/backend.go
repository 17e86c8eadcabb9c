// Package backend holds what the clients of the trace backends' HTTP APIs
// (pkg/jaeger, pkg/tempo) share: the two ways a request fails, told apart
// because a caller answers them differently (a rejected request is the
// user's to fix, a backend that does not answer is the environment's).
package backend

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// HTTPError is an answer other than the one expected. Message is the
// backend's one-line reason, or the start of its body.
type HTTPError struct {
	Backend    string // "Jaeger", "Tempo"
	URL        string
	StatusCode int
	Status     string
	Message    string
}

func (e *HTTPError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("%s at %s answered %s", e.Backend, e.URL, e.Status)
	}
	return fmt.Sprintf("%s at %s answered %s: %s", e.Backend, e.URL, e.Status, e.Message)
}

// Rejected reports whether the backend refused the request itself (4xx).
func (e *HTTPError) Rejected() bool { return e.StatusCode >= 400 && e.StatusCode < 500 }

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
