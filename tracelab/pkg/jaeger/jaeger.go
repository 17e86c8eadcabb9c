// Package jaeger reads traces from Jaeger's query API (api/v3, OTLP JSON).
package jaeger

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"tracelab/pkg/backend"
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
		return nil, backend.NotAnswering("Jaeger", c.BaseURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, &backend.NotAnsweringError{Backend: "Jaeger", URL: c.BaseURL, Err: fmt.Errorf("reading the answer: %v", err)}
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
		return nil, &backend.HTTPError{Backend: "Jaeger", URL: endpoint, StatusCode: resp.StatusCode, Status: resp.Status, Message: backend.OneLine(msg)}
	}
}
