package runtime

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"tracelab/pkg/lab"
)

// execProcessCompose runs the process-compose binary that make tools built.
type execProcessCompose struct {
	bin, dir string
	env      []string
}

// environ is what process-compose expands its file with, and what every
// process inherits: the tool paths, the ports and the state folder.
func environ(c *lab.Checkout, tools map[string]string) []string {
	env := os.Environ()
	for _, m := range []map[string]string{tools, c.Ports} {
		for k, v := range m {
			env = append(env, k+"="+v)
		}
	}
	return append(env, "LAB_ROOT="+c.Root, "LAB_STATE="+c.State, "LAB_VERSION="+version(c.Root), "PC_DISABLE_TUI=1")
}

// version is the checkout's commit, recorded on every span as service.version.
func version(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "dev"
	}
	return strings.TrimSpace(string(out))
}

func (p *execProcessCompose) Call(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, p.bin, args...)
	// The client's own log defaults to /tmp/process-compose-$USER-client.log,
	// shared by every checkout of that user name. A stale one left by a
	// deleted user of the same name (CI recreates its user) refuses to open
	// and the client dies before asking anything, so it logs in the state
	// folder instead.
	clientLog := filepath.Join(p.dir, ".state", "logs", "process-compose-client.log")
	if err := os.MkdirAll(filepath.Dir(clientLog), 0o755); err != nil {
		return nil, err
	}
	cmd.Env = append(p.env, "PC_LOG_FILE="+clientLog)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("process-compose %s: %v: %s", args[0], err, lastLine(stderr.String()))
	}
	return out, nil
}

func (p *execProcessCompose) Launch(args []string, logPath string) (int, error) {
	out, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 0, err
	}
	defer out.Close()
	cmd := exec.Command(p.bin, args...)
	cmd.Env = p.env
	cmd.Dir = p.dir
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group, so a Ctrl-C meant for tracelab reaches
	// process-compose only through tracelab's orderly Down.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	go cmd.Wait() // reap it if it dies while tracelab still runs
	return cmd.Process.Pid, nil
}

func (p *execProcessCompose) Alive(pid int) bool {
	return syscall.Kill(pid, 0) == nil && !isZombie(pid)
}

func (p *execProcessCompose) Stop(pid int) { syscall.Kill(pid, syscall.SIGTERM) }

func (p *execProcessCompose) Kill(pid int) {
	syscall.Kill(-pid, syscall.SIGKILL)
	syscall.Kill(pid, syscall.SIGKILL)
}

func isZombie(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the command name in parentheses.
	s := string(data)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z'
	}
	return false
}

// lastLine is the last non-blank line of a command's error output: where
// process-compose and kubectl say what went wrong.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
