package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"tracelab/pkg/explorer"
	"tracelab/pkg/lab"
)

func init() {
	register("ui", "open the trace explorer: every run's traces, search, compare, the dashboards (a web app on 127.0.0.1)", runUI)
}

func runUI(args []string) int {
	fs := flag.NewFlagSet("ui", flag.ContinueOnError)
	addr := fs.String("addr", "", "where to listen (default 127.0.0.1:EXPLORER_PORT of infra/local/ports.env)")
	results := fs.String("results", "", "the folder of runs (default .state/results of the checkout)")
	rtName := fs.String("runtime", "", "whose Jaeger and Prometheus to read live: local (default), kind or eks")
	if code, ok := parseFlags(fs, args, 0, "usage: tracelab ui [--addr HOST:PORT] [--results DIR] [--runtime local|kind|eks]", os.Stdout); !ok {
		return code
	}
	co, code, err := openCheckout()
	if err != nil {
		return fail(code, "%v", err)
	}
	if *addr == "" {
		*addr = explorerAddr(co)
	}
	if *results == "" {
		*results = filepath.Join(co.State, "results")
	}
	cfg := explorer.Config{Results: *results, Root: co.Root, Log: os.Stderr,
		JaegerURL:     "http://127.0.0.1:" + co.Ports["JAEGER_QUERY_PORT"],
		PrometheusURL: "http://127.0.0.1:" + co.Ports["PROMETHEUS_PORT"]}
	ctx, stop := interruptible()
	defer stop()
	// A runtime that cannot be opened (no tools yet) leaves the defaults:
	// the explorer reads the saved runs all the same. On EKS the telemetry
	// is reached by port-forwards, started here and stopped on exit.
	if rt, err := openRuntime(co, *rtName); err == nil {
		cfg.JaegerURL, cfg.PrometheusURL = rt.JaegerURL(), rt.PrometheusURL()
		if k, ok := rt.(interface{ ReachTelemetry(context.Context) error }); ok {
			if err := k.ReachTelemetry(ctx); err != nil {
				progress("the cluster's Jaeger and Prometheus cannot be reached (%v): the explorer reads the saved runs only", err)
			}
			defer rt.Down(context.Background())
		}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fail(exitRuntime, "cannot listen on %s: %v (another tracelab ui? --addr picks another port)", *addr, err)
	}
	srv := &http.Server{Handler: explorer.New(cfg), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(shut)
	}()
	fmt.Printf("trace explorer: http://%s/  (runs in %s; live: Jaeger %s, Prometheus %s; Ctrl-C stops it)\n", ln.Addr(), *results, cfg.JaegerURL, cfg.PrometheusURL)
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fail(exitRuntime, "%v", err)
	}
	return exitOK
}

// explorerAddr is where `tracelab ui` listens unless told otherwise.
func explorerAddr(co *lab.Checkout) string { return "127.0.0.1:" + co.Ports["EXPLORER_PORT"] }

// explorerURL is a page of the explorer there (path is its hash route,
// e.g. "#/run/<id>").
func explorerURL(co *lab.Checkout, path string) string {
	return "http://" + explorerAddr(co) + "/" + path
}
