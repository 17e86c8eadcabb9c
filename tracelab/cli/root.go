package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"tracelab/pkg/runtime"
)

// labRoot finds the checkout: TRACELAB_ROOT, or the nearest parent of the
// working directory that holds infra/local/ports.env.
func labRoot() (string, error) {
	if r := os.Getenv("TRACELAB_ROOT"); r != "" {
		return filepath.Abs(r)
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "infra", "local", "ports.env")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the lab's checkout (no infra/local/ports.env above the working directory); set TRACELAB_ROOT")
		}
		dir = parent
	}
}

// openRuntime returns the runtime named by --runtime or RUNTIME (default local).
func openRuntime(root, name string) (runtime.Runtime, error) {
	if name == "" {
		name = os.Getenv("RUNTIME")
	}
	return runtime.New(name, root, progress)
}

var started = time.Now()

// progress prints a timestamped line on stderr, so stdout stays parseable.
func progress(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "%6s  %s\n", time.Since(started).Round(time.Second), fmt.Sprintf(format, a...))
}

// interruptible returns a context cancelled by Ctrl-C or SIGTERM.
func interruptible() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// splitName accepts the positional name before or after the flags.
func splitName(args []string) (string, []string) {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return args[0], args[1:]
	}
	return "", args
}
