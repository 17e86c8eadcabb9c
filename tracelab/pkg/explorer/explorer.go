// Package explorer is the lab's trace explorer: a web app, shipped inside
// the tracelab binary, that opens every run under .state/results (from the
// files a run saved, so it works with the stack down) and, while the stack
// is up, the traces Jaeger holds and the metrics Prometheus holds.
//
// The server does the reading (runs, trace search, findings on spans, the
// critical path, TraceQL, PromQL) with the packages the analyzer uses; the
// page (web/) only draws. A trace travels as one compact row per span,
// details on demand, so a 50,000-span trace stays a few megabytes.
package explorer

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"tracelab/pkg/trace"
)

//go:embed web
var webFiles embed.FS

// Config says where the explorer reads from.
type Config struct {
	// Results is the folder of runs (.state/results).
	Results string
	// Root is the lab's checkout, for its dashboards (dashboards/).
	Root string
	// JaegerURL and PrometheusURL are the running stack's; empty, or not
	// answering, leaves the explorer on the saved runs.
	JaegerURL, PrometheusURL string
	// Log receives a line per failed request; nil drops them.
	Log io.Writer
	// Round, when set, makes the explorer blind: it serves these traces
	// only, as the run RoundRun, and nothing computed from an answer.
	Round *Round
}

// Round is a training round's traces, already masked by pkg/train. The
// blind explorer serves them with no findings (none are computed), no
// folded repeats, no runs, dashboards or metrics, and the page draws no
// findings column, no "has finding" filter and no compare view: what a
// learner reads there is the spans as recorded.
type Round struct {
	ID     string
	Traces []*trace.Trace
}

// RoundRun is the run id of a blind explorer's round.
const RoundRun = "round"

// Server answers the page and its API.
type Server struct {
	cfg  Config
	runs *runStore
	mux  *http.ServeMux
}

// New returns the explorer's handler.
func New(cfg Config) *Server {
	s := &Server{cfg: cfg, runs: newRunStore(cfg.Results, cfg.JaegerURL), mux: http.NewServeMux()}
	web, _ := fs.Sub(webFiles, "web")
	s.mux.Handle("GET /", http.FileServerFS(web))
	s.api("GET /api/status", s.status)
	if cfg.Round != nil {
		s.runs = newRoundStore(cfg.Round)
		s.api("GET /api/runs/{run}/traces", s.searchTraces)
		s.api("GET /api/runs/{run}/traces/{variant}/{trace}", s.getTrace)
		s.api("GET /api/runs/{run}/traces/{variant}/{trace}/spans/{span}", s.getSpan)
		return s
	}
	s.api("GET /api/runs", s.listRuns)
	s.api("GET /api/runs/{run}", s.getRun)
	s.api("GET /api/runs/{run}/traces", s.searchTraces)
	s.api("GET /api/runs/{run}/traces/{variant}/{trace}", s.getTrace)
	s.api("GET /api/runs/{run}/traces/{variant}/{trace}/spans/{span}", s.getSpan)
	s.api("GET /api/runs/{run}/traceql", s.traceQL)
	s.api("GET /api/dashboards", s.listDashboards)
	s.api("GET /api/dashboards/{file}", s.getDashboard)
	s.api("GET /api/promql", s.promQL)
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// httpError is an API failure with the status it answers.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

func notFound(format string, a ...any) error {
	return &httpError{http.StatusNotFound, fmt.Sprintf(format, a...)}
}

func badRequest(format string, a ...any) error {
	return &httpError{http.StatusBadRequest, fmt.Sprintf(format, a...)}
}

// api registers a handler whose answer is JSON, or {"error": "..."}.
func (s *Server) api(pattern string, h func(r *http.Request) (any, error)) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		v, err := h(r)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if err != nil {
			code := http.StatusInternalServerError
			var he *httpError
			if errors.As(err, &he) {
				code = he.code
			}
			if s.cfg.Log != nil {
				fmt.Fprintf(s.cfg.Log, "tracelab ui: %s %s: %v\n", r.Method, r.URL.RequestURI(), err)
			}
			w.WriteHeader(code)
			v = map[string]string{"error": err.Error()}
		}
		json.NewEncoder(w).Encode(v)
	})
}

// status says what the explorer reads: the saved runs, and whether the
// running stack's Jaeger and Prometheus answer.
func (s *Server) status(r *http.Request) (any, error) {
	if s.cfg.Round != nil {
		return map[string]any{"blind": true, "round": s.cfg.Round.ID}, nil
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	return map[string]any{
		"results":    s.cfg.Results,
		"jaeger":     s.cfg.JaegerURL,
		"jaeger_up":  answers(ctx, s.cfg.JaegerURL, "/api/v3/services"),
		"prometheus": s.cfg.PrometheusURL,
		"prom_up":    answers(ctx, s.cfg.PrometheusURL, "/-/ready"),
	}, nil
}

func answers(ctx context.Context, base, path string) bool {
	if base == "" {
		return false
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+path, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
