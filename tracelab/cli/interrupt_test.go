package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SIGINT and SIGTERM stop analyze and compare within a second, with 130
// and 143, wherever they read: a regular file, a FIFO no writer opens,
// stdin that stays open, and stdin that never ends. Each runs tracelab as
// a process of its own and signals it once it is reading. compare reads a
// regular file as it reads a FIFO (source.readFile), and the sparse file
// below is no test of it: it reads zeros as an empty input at once.

// spansDoc is an OTLP JSON document's opening, then n whole resourceSpans
// of one span each, with the array left open.
func spansDoc(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"resourceSpans":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(resourceSpan(i))
	}
	return b.Bytes()
}

func resourceSpan(i int) string {
	return fmt.Sprintf(`{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"s"}}]},"scopeSpans":[{"spans":[{"traceId":"%032x","spanId":"%016x","name":"GET /","kind":2,"startTimeUnixNano":"1000","endTimeUnixNano":"2000"}]}]}`, i+1, i+1)
}

// endlessSpans is stdin that never ends: resourceSpans after resourceSpans.
// ready is closed once 1 MiB has been read, by then tracelab is reading.
type endlessSpans struct {
	n, read int
	ready   chan struct{}
	pending []byte
}

func (e *endlessSpans) Read(b []byte) (int, error) {
	if len(e.pending) == 0 {
		e.pending = []byte("," + resourceSpan(e.n))
		if e.n == 0 {
			e.pending = []byte(`{"resourceSpans":[` + resourceSpan(e.n))
		}
		e.n++
	}
	n := copy(b, e.pending)
	e.pending = e.pending[n:]
	if e.read += n; e.read >= 1<<20 && e.read-n < 1<<20 {
		close(e.ready)
	}
	return n, nil
}

type interruptCase struct {
	name  string
	args  []string
	start func(t *testing.T, cmd *exec.Cmd) (ready func())
}

// runInterrupted starts tracelab, waits until ready says it is reading,
// sends sig, and returns the exit code, the time from the signal to the
// exit, and stderr; -1 for one still running 5 s after the signal.
func runInterrupted(t *testing.T, c interruptCase, sig syscall.Signal) (int, time.Duration, string) {
	t.Helper()
	bin, err := tracelabBinary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, c.args...)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	ready := c.start(t, cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	readyc := make(chan struct{})
	go func() {
		ready()
		close(readyc)
	}()
	select {
	case <-readyc:
	case <-exited:
		t.Fatalf("%s: exited before it was signalled: exit %d, stderr %q", c.name, cmd.ProcessState.ExitCode(), errOut.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: not reading after 30 s", c.name)
	}
	t0 := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-exited
		return -1, time.Since(t0), "still running 5 s after the signal; killed"
	}
	return cmd.ProcessState.ExitCode(), time.Since(t0), errOut.String()
}

// openedBy waits until pid has path open.
func openedBy(pid func() int, path string) {
	for {
		if p := pid(); p != 0 {
			fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", p))
			for _, fd := range fds {
				if target, _ := os.Readlink(fd); target == path {
					return
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestInterruptsStopReadingFilesAndStdin(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs tracelab")
	}
	dir := t.TempDir()
	// A sparse file of 64 GiB of zeros: the first pass reads it for
	// minutes, on no disk.
	huge := filepath.Join(dir, "huge.json")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	other := writeAnalyzeInput(t, "other.json", string(spansDoc(3))+"]}")

	pidOf := func(cmd *exec.Cmd) func() int {
		return func() int {
			if cmd.Process == nil {
				return 0
			}
			return cmd.Process.Pid
		}
	}
	regularFile := func(t *testing.T, cmd *exec.Cmd) func() {
		return func() { openedBy(pidOf(cmd), huge) }
	}
	// A FIFO that no one writes: opening it blocks until a writer comes.
	// tracelab has it open for reading once a non-blocking open for
	// writing succeeds; the writer then stays and writes nothing.
	fifo := func(t *testing.T, cmd *exec.Cmd) func() {
		p := filepath.Join(t.TempDir(), "fifo")
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
		cmd.Args = append(cmd.Args, p)
		return func() {
			for {
				fd, err := syscall.Open(p, syscall.O_WRONLY|syscall.O_NONBLOCK, 0)
				if err == nil {
					t.Cleanup(func() { syscall.Close(fd) })
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	// stdin that stays open: 1 MiB of spans, then nothing, never closed.
	// Writing the 1 MiB returns once tracelab has read all but a pipe's
	// buffer of it.
	openStdin := func(t *testing.T, cmd *exec.Cmd) func() {
		w, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close() })
		return func() { w.Write(spansDoc(4000)) }
	}
	endlessStdin := func(t *testing.T, cmd *exec.Cmd) func() {
		e := &endlessSpans{ready: make(chan struct{})}
		cmd.Stdin = e
		return func() { <-e.ready }
	}
	for _, c := range []interruptCase{
		{"analyze --file (regular)", []string{"analyze", "--file", huge}, regularFile},
		{"analyze --file (FIFO)", []string{"analyze", "--file"}, fifo},
		{"analyze --file - (open stdin)", []string{"analyze", "--file", "-"}, openStdin},
		{"analyze --file - (endless stdin)", []string{"analyze", "--file", "-"}, endlessStdin},
		{"compare (open stdin side)", []string{"compare", "--candidate", other, "--baseline", "-"}, openStdin},
		{"compare (FIFO side)", []string{"compare", "--candidate", other, "--baseline"}, fifo},
	} {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			code, took, errOut := runInterrupted(t, c, sig)
			want := 128 + int(sig)
			t.Logf("%s, %v: exit %d after %v", c.name, sig, code, took.Round(time.Millisecond))
			if code != want || took > time.Second {
				t.Errorf("%s, %v: exit %d after %v; want %d within 1 s; stderr %q", c.name, sig, code, took.Round(time.Millisecond), want, errOut)
				continue
			}
			if !strings.HasSuffix(errOut, ": interrupted\n") || strings.Count(errOut, "\n") != 1 {
				t.Errorf("%s, %v: stderr %q; want one line ending in interrupted", c.name, sig, errOut)
			}
		}
	}
}

// cpuSeconds is the CPU time pid has used, user and system, from
// /proc/pid/stat; 0 when it cannot be read.
func cpuSeconds(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command's name, which is in parentheses and
	// may hold spaces: utime and stime are the 12th and 13th of them.
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	var ut, st float64
	fmt.Sscan(f[11], &ut)
	fmt.Sscan(f[12], &st)
	return (ut + st) / 100 // clock ticks; Linux's USER_HZ is 100
}

// An interrupt during the work that follows reading stops the command
// within a second as well. compare's bootstrap of 20,000 requests a side
// takes tens of CPU seconds after the 5 MB of both sides are read in a
// fraction of one; the signal comes once the process has used 1.5 CPU
// seconds, well into it. Nothing in the bootstrap watches for the
// signal: before the watchdog (interruptibleWithin) this ran to the end.
func TestInterruptsStopTheAnalysis(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs tracelab")
	}
	var b bytes.Buffer
	b.WriteString(`{"resourceSpans":[`)
	for i := range 20000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"s"}}]},"scopeSpans":[{"spans":[{"traceId":"%032x","spanId":"%016x","name":"GET /","kind":2,"startTimeUnixNano":"1000","endTimeUnixNano":"%d"}]}]}`, i+1, i+1, 1_000_000+(i*7919)%1_000_000)
	}
	b.WriteString(`]}`)
	side := writeAnalyzeInput(t, "side.json", b.String())
	busy := func(t *testing.T, cmd *exec.Cmd) func() {
		return func() {
			for cmd.Process == nil || cpuSeconds(cmd.Process.Pid) < 1.5 {
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
	c := interruptCase{"compare (bootstrap)", []string{"compare", "--baseline", side, "--candidate", side}, busy}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		code, took, errOut := runInterrupted(t, c, sig)
		t.Logf("%s, %v: exit %d after %v", c.name, sig, code, took.Round(time.Millisecond))
		if want := 128 + int(sig); code != want || took > time.Second {
			t.Errorf("%s, %v: exit %d after %v; want %d within 1 s; stderr %q", c.name, sig, code, took.Round(time.Millisecond), want, errOut)
			continue
		}
		if errOut != "tracelab: compare: interrupted\n" {
			t.Errorf("%s, %v: stderr %q; want one line, compare: interrupted", c.name, sig, errOut)
		}
	}
}
