// Package tempo reads traces from Grafana Tempo's query API: a TraceQL
// search (GET /api/search) for trace ids, then each trace by id
// (GET /api/traces/<id>, OTLP JSON {"batches":[…]}).
package tempo

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

	"tracelab/pkg/backend"
)

type Client struct {
	BaseURL string
	HTTP    *http.Client
}

func New(baseURL string) *Client {
	transport := &http.Transport{DisableKeepAlives: true}
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), HTTP: &http.Client{Timeout: 60 * time.Second, Transport: transport}}
}

// TraceSummary is one trace of a search answer, as Tempo describes it.
type TraceSummary struct {
	TraceID           string `json:"traceID"`
	RootServiceName   string `json:"rootServiceName"`
	RootTraceName     string `json:"rootTraceName"`
	StartTimeUnixNano string `json:"startTimeUnixNano"`
	DurationMs        int64  `json:"durationMs"`
}

// Search runs a TraceQL query over [from, to] (Tempo takes whole seconds)
// and returns up to limit traces. No trace found is an empty list.
func (c *Client) Search(ctx context.Context, traceQL string, from, to time.Time, limit int) ([]TraceSummary, error) {
	q := url.Values{}
	q.Set("q", traceQL)
	q.Set("start", strconv.FormatInt(from.Unix(), 10))
	// Round the end up so a window shorter than a second is not empty.
	end := to.Unix()
	if to.After(time.Unix(end, 0)) {
		end++
	}
	q.Set("end", strconv.FormatInt(end, 10))
	q.Set("limit", strconv.Itoa(limit))
	body, err := c.get(ctx, "/api/search?"+q.Encode())
	if err != nil {
		return nil, err
	}
	var ans struct {
		Traces []TraceSummary `json:"traces"`
	}
	if err := json.Unmarshal(body, &ans); err != nil {
		return nil, fmt.Errorf("Tempo at %s: the search answer is not Tempo's JSON: %v", c.BaseURL, err)
	}
	traces := ans.Traces[:0]
	for _, t := range ans.Traces {
		if t.TraceID != "" {
			traces = append(traces, t)
		}
	}
	if len(traces) > limit {
		traces = traces[:limit]
	}
	return traces, nil
}

// Trace returns one trace's OTLP JSON ({"batches":[…]}), which
// otlp.ParseReader reads.
func (c *Client) Trace(ctx context.Context, traceID string) ([]byte, error) {
	return c.get(ctx, "/api/traces/"+url.PathEscape(traceID))
}

// Traces fetches each trace by id and returns their documents, in order.
// A trace the search found but Tempo no longer holds (404) is skipped and
// counted in missing. progress, when not nil, is called after each trace.
func (c *Client) Traces(ctx context.Context, ids []string, progress func(done, total int)) (docs [][]byte, missing int, err error) {
	for i, id := range ids {
		doc, err := c.Trace(ctx, id)
		var he *backend.HTTPError
		switch {
		case errors.As(err, &he) && he.StatusCode == http.StatusNotFound:
			missing++
		case err != nil:
			return nil, 0, err
		default:
			docs = append(docs, doc)
		}
		if progress != nil {
			progress(i+1, len(ids))
		}
	}
	return docs, missing, nil
}

func (c *Client) get(ctx context.Context, pathAndQuery string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.BaseURL+pathAndQuery, nil)
	if err != nil {
		return nil, fmt.Errorf("Tempo URL %q: %v", c.BaseURL, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, backend.NotAnswering("Tempo", c.BaseURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, &backend.NotAnsweringError{Backend: "Tempo", URL: c.BaseURL, Err: fmt.Errorf("reading the answer: %v", err)}
	}
	if resp.StatusCode != http.StatusOK {
		endpoint := c.BaseURL + pathAndQuery
		if i := strings.IndexByte(endpoint, '?'); i >= 0 {
			endpoint = endpoint[:i]
		}
		return nil, &backend.HTTPError{Backend: "Tempo", URL: endpoint, StatusCode: resp.StatusCode, Status: resp.Status, Message: backend.OneLine(string(body))}
	}
	return body, nil
}
