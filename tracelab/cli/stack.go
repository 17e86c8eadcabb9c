package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"tracelab/pkg/components"
	"tracelab/pkg/lab"
)

func init() {
	register("up", "start the telemetry stack and the given services (default: all)", runUp)
	register("down", "stop everything the lab started", runDown)
	register("status", "show the lab's processes and endpoints", runStatus)
	register("logs", "follow the lab's logs (optionally of one process)", runLogs)
}

// allServices are the services described under services/ (service.yaml).
func allServices(root string) []string { return components.ServiceNames(root) }

func runUp(args []string) int {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	rtName := fs.String("runtime", "", "runtime: local (default), kind or eks")
	variant := fs.String("variant", "default", "value of the lab.variant resource attribute")
	if code, ok := parseFlags(fs, args, -1, "usage: tracelab up [--runtime local|kind|eks] [--variant NAME] [SERVICE...]", os.Stdout); !ok {
		return code
	}
	co, code, err := openCheckout()
	if err != nil {
		return fail(code, "%v", err)
	}
	rt, err := openRuntime(co, *rtName)
	if err != nil {
		return fail(exitRuntime, "%v", err)
	}
	services := fs.Args()
	if len(services) == 0 {
		services = allServices(co.Root)
	}
	ctx, stop := interruptible()
	defer stop()
	if err := rt.Up(ctx, services, lab.Settings{}, *variant); err != nil {
		rt.Down(context.Background())
		return fail(exitRuntime, "%v", err)
	}
	progress("ready: %s; Jaeger %s, Prometheus %s; the trace explorer: make ui (%s)", strings.Join(services, ", "), rt.JaegerURL(), rt.PrometheusURL(), explorerURL(co, ""))
	return exitOK
}

func runDown(args []string) int {
	if code, ok := parseFlags(flag.NewFlagSet("down", flag.ContinueOnError), args, 0, "usage: tracelab down", os.Stdout); !ok {
		return code
	}
	co, code, err := openCheckout()
	if err != nil {
		return fail(code, "%v", err)
	}
	rt, err := openRuntime(co, "")
	if errors.Is(err, lab.ErrNoTools) {
		return exitOK // without tools nothing was started
	}
	if err != nil {
		return fail(exitRuntime, "%v", err)
	}
	if err := rt.Down(context.Background()); err != nil {
		return fail(exitRuntime, "%v", err)
	}
	return exitOK
}

func runStatus(args []string) int {
	if code, ok := parseFlags(flag.NewFlagSet("status", flag.ContinueOnError), args, 0, "usage: tracelab status", os.Stdout); !ok {
		return code
	}
	co, code, err := openCheckout()
	if err != nil {
		return fail(code, "%v", err)
	}
	rt, err := openRuntime(co, "")
	if err != nil {
		return fail(exitRuntime, "%v", err)
	}
	out, err := rt.Status(context.Background())
	if err != nil {
		return fail(exitRuntime, "%v", err)
	}
	fmt.Print(out)
	return exitOK
}

// runLogs follows the per-process log files the local runtime writes.
func runLogs(args []string) int {
	fs := flag.NewFlagSet("logs", flag.ContinueOnError)
	if code, ok := parseFlags(fs, args, 1, "usage: tracelab logs [PROCESS]", os.Stdout); !ok {
		return code
	}
	co, code, err := openCheckout()
	if err != nil {
		return fail(code, "%v", err)
	}
	dir := filepath.Join(co.State, "logs")
	files, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	if name := fs.Arg(0); name != "" {
		files = []string{filepath.Join(dir, name+".log")}
		if _, err := os.Stat(files[0]); err != nil {
			return fail(exitUsage, "no log for %q in .state/logs", name)
		}
	}
	if len(files) == 0 {
		return fail(exitUsage, "no logs yet in .state/logs; start the lab with 'make up'")
	}
	cmd := exec.Command("tail", append([]string{"-n", "20", "-F"}, files...)...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	ctx, stop := interruptible()
	defer stop()
	if err := cmd.Start(); err != nil {
		return fail(exitRuntime, "%v", err)
	}
	go func() { <-ctx.Done(); cmd.Process.Kill() }()
	cmd.Wait()
	return exitOK
}
