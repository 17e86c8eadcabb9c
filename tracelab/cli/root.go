package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"tracelab/pkg/lab"
	"tracelab/pkg/load"
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

// parseNamed is parseFlags for a command that takes one name, before or
// after its flags; name is "" when none was given.
func parseNamed(fs *flag.FlagSet, args []string, usage string, out io.Writer) (name string, code int, ok bool) {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
		code, ok = parseFlags(fs, args, 0, usage, out)
		return name, code, ok
	}
	code, ok = parseFlags(fs, args, 1, usage, out)
	return fs.Arg(0), code, ok
}

// session is what one run of scenarios needs: the runtime, the load, and a
// context that Ctrl-C cancels.
type session struct {
	rt         runtime.Runtime
	load       load.Driver
	ctx        context.Context
	wasRunning bool // the stack was up before this run
	end        func()
}

// startSession opens the runtime and its load driver. Its end stops, whatever
// happened, the stack this run started (unless keep), and only then the
// interrupt handling, so a second Ctrl-C cannot cut the teardown short.
func startSession(co *lab.Checkout, rtName string, keep bool) (*session, error) {
	rt, err := openRuntime(co, rtName)
	if err != nil {
		return nil, err
	}
	ses := &session{rt: rt, load: rt.LoadDriver(), wasRunning: rt.Running()}
	ctx, stop := interruptible()
	ses.ctx = ctx
	ses.end = func() {
		if !ses.wasRunning && !keep {
			rt.Down(context.Background())
		}
		stop()
	}
	return ses, nil
}

// failed is the exit for a run that stopped on err: 130 when Ctrl-C
// stopped it (the session's end then stops what the run started).
func (ses *session) failed(err error) int {
	if errors.Is(err, context.Canceled) {
		return fail(130, "interrupted; stopping what the run started")
	}
	return fail(exitRuntime, "%v", err)
}
