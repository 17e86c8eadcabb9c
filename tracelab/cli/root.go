package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"tracelab/pkg/lab"
	"tracelab/pkg/runtime"
)

// openCheckout finds the lab's checkout and reads it. Not finding one is
// a usage error; an unreadable ports.env is a runtime error, as it was when
// each runtime read the file itself.
func openCheckout() (*lab.Checkout, int, error) {
	root, err := lab.Find()
	if err != nil {
		return nil, exitUsage, err
	}
	co, err := lab.Open(root)
	if err != nil {
		return nil, exitRuntime, err
	}
	return co, exitOK, nil
}

// openRuntime returns the runtime named by --runtime or RUNTIME (default local).
func openRuntime(co *lab.Checkout, name string) (runtime.Runtime, error) {
	if name == "" {
		name = os.Getenv("RUNTIME")
	}
	return runtime.New(name, co, progress)
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
