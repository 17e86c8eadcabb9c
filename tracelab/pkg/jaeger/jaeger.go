// Package jaeger reads traces from Jaeger's query API (api/v3, OTLP JSON).
package jaeger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

type Client struct {
	BaseURL string
	HTTP    *http.Client
}

func New(baseURL string) *Client {
	// No kept-alive connections: Jaeger's shutdown waits for open ones, which
	// made stopping the stack take 20 s longer.
	transport := &http.Transport{DisableKeepAlives: true}
	return &Client{BaseURL: baseURL, HTTP: &http.Client{Timeout: 60 * time.Second, Transport: transport}}
}

// Ping checks that the query API answers.
func (c *Client) Ping(ctx context.Context) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.BaseURL+"/api/v3/services", nil)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("Jaeger is not answering at %s: %v", c.BaseURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("Jaeger at %s answered %s", c.BaseURL, resp.Status)
	}
	return nil
}

// FindTraces returns the OTLP JSON document ({"result":{"resourceSpans":…}})
// of up to limit traces that have a span of service starting in [from, to].
// No trace found is an empty document, not an error.
func (c *Client) FindTraces(ctx context.Context, service string, from, to time.Time, limit int) ([]byte, error) {
	return c.Find(ctx, Query{Service: service, From: from, To: to, Limit: limit})
}

// Query selects traces for Find: those with a span of Service (and, when
// Operation is set, of that operation) starting in [From, To], at most Limit.
type Query struct {
	Service, Operation string
	From, To           time.Time
	Limit              int
}

// HTTPError is an answer other than 200 (or 404, which is no traces).
// Message is the one-line reason Jaeger gave, or the start of its body.
type HTTPError struct {
	URL        string
	StatusCode int
	Status     string
	Message    string
}

func (e *HTTPError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("Jaeger at %s answered %s", e.URL, e.Status)
	}
	return fmt.Sprintf("Jaeger at %s answered %s: %s", e.URL, e.Status, e.Message)
}

// NotAnsweringError is a request that got no HTTP answer: connection
// refused, a timeout, a broken connection.
type NotAnsweringError struct {
	URL string
	Err error
}

func (e *NotAnsweringError) Error() string {
	return fmt.Sprintf("Jaeger is not answering at %s: %v", e.URL, e.Err)
}

func (e *NotAnsweringError) Unwrap() error { return e.Err }

// Find is FindTraces with an operation name: GET /api/v3/traces.
func (c *Client) Find(ctx context.Context, fq Query) ([]byte, error) {
	q := url.Values{}
	q.Set("query.service_name", fq.Service)
	if fq.Operation != "" {
		q.Set("query.operation_name", fq.Operation)
	}
	q.Set("query.start_time_min", fq.From.UTC().Format(time.RFC3339Nano))
	q.Set("query.start_time_max", fq.To.UTC().Format(time.RFC3339Nano))
	q.Set("query.num_traces", strconv.Itoa(fq.Limit))
	// Raw: the lab measures spans as recorded, without clock-skew adjustment.
	q.Set("query.raw_traces", "true")
	endpoint := c.BaseURL + "/api/v3/traces"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"?"+q.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("Jaeger URL %q: %v", c.BaseURL, err)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, &NotAnsweringError{URL: c.BaseURL, Err: urlErrorCause(err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, &NotAnsweringError{URL: c.BaseURL, Err: fmt.Errorf("reading the answer: %v", urlErrorCause(err))}
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return body, nil
	case http.StatusNotFound:
		return []byte(`{"result":{"resourceSpans":[]}}`), nil
	default:
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		msg := ""
		if json.Unmarshal(body, &e) == nil {
			msg = e.Error.Message
		}
		if msg == "" {
			msg = string(body)
		}
		return nil, &HTTPError{URL: endpoint, StatusCode: resp.StatusCode, Status: resp.Status, Message: oneLine(msg)}
	}
}

// urlErrorCause drops the `Get "<url with the whole query>":` prefix: the
// error names the server already.
func urlErrorCause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return fmt.Errorf("no answer in time (%v)", ue.Err)
		}
		return ue.Err
	}
	return err
}

// oneLine folds a message to one line of at most 300 characters.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return s
}
