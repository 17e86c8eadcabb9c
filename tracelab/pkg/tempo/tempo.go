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
	"time"

	"tracelab/pkg/backend"
)

type Client struct {
	*backend.Client
}

// New returns a client whose requests each time out after 60 s unless
// their context ends sooner.
func New(baseURL string) *Client {
	return &Client{backend.NewClient("Tempo", baseURL, 60*time.Second)}
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
	var ans struct {
		Traces []TraceSummary `json:"traces"`
	}
	err := c.Get(ctx, "/api/search?"+q.Encode(), func(r io.Reader) error {
		if err := json.NewDecoder(r).Decode(&ans); err != nil {
			return fmt.Errorf("the search answer: %v", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
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
	return backend.ReadAll(func(read func(io.Reader) error) error { return c.TraceInto(ctx, traceID, read) })
}

// TraceInto is Trace handing the answer's body to read as it arrives (see
// backend.Client.Get).
func (c *Client) TraceInto(ctx context.Context, traceID string, read func(io.Reader) error) error {
	return c.Get(ctx, "/api/traces/"+url.PathEscape(traceID), read)
}

// Traces fetches each trace by id, in order, handing each body to read. A
// trace the search found but Tempo no longer holds (404) is skipped and
// counted in missing. progress, when not nil, is called after each trace.
func (c *Client) Traces(ctx context.Context, ids []string, read func(io.Reader) error, progress func(done, total int)) (missing int, err error) {
	for i, id := range ids {
		err := c.TraceInto(ctx, id, read)
		var he *backend.HTTPError
		switch {
		case errors.As(err, &he) && he.StatusCode == http.StatusNotFound:
			missing++
		case err != nil:
			return 0, err
		}
		if progress != nil {
			progress(i+1, len(ids))
		}
	}
	return missing, nil
}
