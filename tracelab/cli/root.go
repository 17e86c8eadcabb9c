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
	"sync"
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

// interruptible returns a context cancelled by Ctrl-C (SIGINT) or SIGTERM,
// whose cause (interrupted) says which, for the exit code.
func interruptible() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-sigs:
			cancel(interrupt{s.(syscall.Signal)})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		cancel(context.Canceled)
	}
}

// interruptGrace is how long analyze and compare may take to return after
// a signal before the process exits anyway: the detectors and the
// comparison's bootstrap do not watch the context, and the promise is an
// exit within a second of the signal.
const interruptGrace = 700 * time.Millisecond

// interruptedMu guards the one "interrupted" line a command prints, which
// either the command (interruptedFailure) or the watchdog of
// interruptibleWithin writes, whichever comes first.
var (
	interruptedMu      sync.Mutex
	interruptedPrinted bool
)

// interruptibleWithin is interruptible for a command whose work past
// reading does not stop when the context does (analyze, compare): grace
// after the signal, if the command has not returned, the process says
// "what: interrupted" and exits 128 plus the signal's number, as the
// command would have. Only for commands with nothing to clean up: the
// exit skips deferred calls.
func interruptibleWithin(what string, grace time.Duration) (context.Context, context.CancelFunc) {
	interruptedMu.Lock()
	interruptedPrinted = false // one command a process; tests run many
	interruptedMu.Unlock()
	ctx, stop := interruptible()
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		code := interruptedCode(ctx)
		if code == 0 { // stopped, not signalled
			return
		}
		select {
		case <-done:
		case <-time.After(grace):
			interruptedMu.Lock() // held until the exit: no second line
			if !interruptedPrinted {
				fmt.Fprintf(os.Stderr, "tracelab: %s: interrupted\n", what)
			}
			os.Exit(code)
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() { close(done) })
		stop()
	}
}

// interruptedFailure prints "what: interrupted" once and returns the
// signal's exit code.
func interruptedFailure(code int, what string) int {
	interruptedMu.Lock()
	defer interruptedMu.Unlock()
	if !interruptedPrinted {
		interruptedPrinted = true
		fail(code, "%s: interrupted", what)
	}
	return code
}

// interrupt is the cause of a context a signal cancelled.
type interrupt struct{ sig syscall.Signal }

func (i interrupt) Error() string { return i.sig.String() }

// interruptedCode is the exit code of a command whose context a signal
// cancelled, as a shell reports a process that signal killed: 128 plus
// its number, 130 for SIGINT and 143 for SIGTERM. 0 when none did.
func interruptedCode(ctx context.Context) int {
	var i interrupt
	if errors.As(context.Cause(ctx), &i) {
		return 128 + int(i.sig)
	}
	return 0
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
// stopped it, 143 SIGTERM (the session's end then stops what the run started).
func (ses *session) failed(err error) int {
	if code := interruptedCode(ses.ctx); code != 0 && errors.Is(err, context.Canceled) {
		return fail(code, "interrupted; stopping what the run started")
	}
	return fail(exitRuntime, "%v", err)
}
