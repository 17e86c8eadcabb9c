// Package networkhops tests the lab's one toxiproxy configurer,
// k8s/base/data/configure-toxiproxy.sh, against a real toxiproxy: as the
// local runtime runs it (infra/local/run-toxiproxy.sh) and as the Kubernetes
// pod does (watch). It needs only the toxiproxy binary of the tool cache and
// curl, not the rest of the stack, and uses ports the OS hands out.
package networkhops

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"tracelab/internal/labtest"
	"tracelab/internal/repotest"
	"tracelab/pkg/components"
)

func configurer(t *testing.T) string {
	return filepath.Join(repotest.Root(t), "k8s", "base", "data", "configure-toxiproxy.sh")
}

// toxiproxyBin is TOXIPROXY_BIN from the environment or .state/tools.env,
// as the local runtime finds it.
func toxiproxyBin(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not on PATH; the toxiproxy configurer is not tested")
	}
	bin := os.Getenv("TOXIPROXY_BIN")
	if bin == "" {
		bin = labtest.Tools(t)["TOXIPROXY_BIN"]
	}
	if _, err := os.Stat(bin); bin == "" || err != nil {
		t.Skip("no toxiproxy binary (TOXIPROXY_BIN, or .state/tools.env from 'make tools'); the toxiproxy configurer is not tested")
	}
	return bin
}

// hops is the environment a runtime gives the configurer, on loopback with
// fresh ports.
type hops map[string]string

func newHops(t *testing.T) hops {
	return hops{
		"TOXIPROXY_PORT":        repotest.FreePort(t),
		"TOXIPROXY_LISTEN_HOST": "127.0.0.1",
		"POSTGRES_HOST":         "127.0.0.1",
		"POSTGRES_PORT":         repotest.FreePort(t),
		"POSTGRES_PROXY_PORT":   repotest.FreePort(t),
		"KAFKA_HOST":            "127.0.0.1",
		"KAFKA_PROXIED_PORT":    repotest.FreePort(t),
		"KAFKA_PROXY_PORT":      repotest.FreePort(t),
	}
}

// environ is h plus extra on top of PATH only, so that a latency set in the
// test's own environment cannot leak in.
func (h hops) environ(extra ...string) []string {
	env := []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range h {
		env = append(env, k+"="+v)
	}
	return append(env, extra...)
}

func (h hops) api() string { return "http://127.0.0.1:" + h["TOXIPROXY_PORT"] }

func (h hops) run(t *testing.T, mode string, extra ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(configurer(t), mode)
	cmd.Env = h.environ(extra...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// await polls ready until it holds, or fails the test after the timeout.
func await(t *testing.T, what string, timeout time.Duration, ready func() bool) {
	t.Helper()
	for deadline := time.Now().Add(timeout); !ready(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %s", what, timeout)
		}
	}
}

// startToxiproxy starts the server on h's API port and waits until it answers.
func (h hops) startToxiproxy(t *testing.T, bin string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, "-host", "127.0.0.1", "-port", h["TOXIPROXY_PORT"])
	cmd.Env = []string{"LOG_LEVEL=warn"}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	await(t, "toxiproxy answering on "+h.api(), 10*time.Second, func() bool {
		resp, err := http.Get(h.api() + "/version")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == http.StatusOK
	})
	return cmd
}

func (h hops) inPlace(t *testing.T) bool {
	_, _, err := h.run(t, "check")
	return err == nil
}

type proxy struct {
	Name, Listen, Upstream string
	Enabled                bool
	Toxics                 []struct {
		Name, Type, Stream string
		Attributes         struct{ Latency, Jitter int }
	}
}

func (h hops) proxies(t *testing.T) map[string]proxy {
	t.Helper()
	resp, err := http.Get(h.api() + "/proxies")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]proxy{}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("GET /proxies: %v", err)
	}
	return out
}

// wantHop fails unless the proxy forwards listenKey to upstreamKey, is
// enabled and adds latency ms to the answers, and nothing else.
func (h hops) wantHop(t *testing.T, all map[string]proxy, name, listenKey, upstreamKey string, latency int) {
	t.Helper()
	p, ok := all[name]
	if !ok {
		t.Fatalf("no proxy %s; proxies: %+v", name, all)
	}
	if want := "127.0.0.1:" + h[listenKey]; p.Listen != want {
		t.Errorf("%s listens on %s, want %s (%s)", name, p.Listen, want, listenKey)
	}
	if want := "127.0.0.1:" + h[upstreamKey]; p.Upstream != want {
		t.Errorf("%s forwards to %s, want %s (%s)", name, p.Upstream, want, upstreamKey)
	}
	if !p.Enabled {
		t.Errorf("%s is not enabled", name)
	}
	if len(p.Toxics) != 1 {
		t.Fatalf("%s has %d toxics, want the one network-hop: %+v", name, len(p.Toxics), p.Toxics)
	}
	x := p.Toxics[0]
	if x.Name != "network-hop" || x.Type != "latency" || x.Stream != "downstream" || x.Attributes.Latency != latency || x.Attributes.Jitter != 0 {
		t.Errorf("%s's toxic is %+v, want network-hop: latency %d ms, jitter 0, downstream", name, x, latency)
	}
}

// upstream answers each line with its name and the line, so a round trip
// shows which upstream a proxy reaches.
func upstream(t *testing.T, name, port string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					fmt.Fprintf(c, "%s %s", name, line)
				}
			}()
		}
	}()
}

// roundTrip sends one line through the proxy on port, after one unmeasured
// exchange that opens the path, and returns the answer and its time.
func roundTrip(t *testing.T, port string) (string, time.Duration) {
	t.Helper()
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	var answer string
	var took time.Duration
	for range 2 {
		start := time.Now()
		if _, err := io.WriteString(c, "ping\n"); err != nil {
			t.Fatal(err)
		}
		if answer, err = r.ReadString('\n'); err != nil {
			t.Fatalf("through 127.0.0.1:%s: %v", port, err)
		}
		took = time.Since(start)
	}
	return strings.TrimSpace(answer), took
}

// The local runtime: run-toxiproxy.sh starts toxiproxy, the configurer sets
// the scenario's latencies, including 0, from .state/env/toxiproxy.env, the
// readiness probe's check passes, and each hop reaches its own upstream with
// its latency. SIGTERM, process-compose's stop, ends it.
func TestLocalRuntime(t *testing.T) {
	bin := toxiproxyBin(t)
	h := newHops(t)
	upstream(t, "postgres", h["POSTGRES_PORT"])
	upstream(t, "kafka", h["KAFKA_PROXIED_PORT"])
	state := t.TempDir()
	os.MkdirAll(filepath.Join(state, "env"), 0o755)
	if err := os.WriteFile(filepath.Join(state, "env", "toxiproxy.env"), []byte("DB_LATENCY_MS=0\nKAFKA_LATENCY_MS=80\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if h.inPlace(t) {
		t.Fatal("check passes before anything runs")
	}
	launcher := exec.Command(filepath.Join(repotest.Root(t), "infra", "local", "run-toxiproxy.sh"))
	launcher.Env = append(hops{"TOXIPROXY_PORT": h["TOXIPROXY_PORT"], "POSTGRES_PORT": h["POSTGRES_PORT"],
		"POSTGRES_PROXY_PORT": h["POSTGRES_PROXY_PORT"], "KAFKA_PROXIED_PORT": h["KAFKA_PROXIED_PORT"],
		"KAFKA_PROXY_PORT": h["KAFKA_PROXY_PORT"]}.environ(), "LAB_STATE="+state, "TOXIPROXY_BIN="+bin)
	var logs bytes.Buffer
	launcher.Stdout, launcher.Stderr = &logs, &logs
	if err := launcher.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- launcher.Wait() }()
	t.Cleanup(func() { launcher.Process.Kill() })
	await(t, "toxiproxy ready", 20*time.Second, func() bool {
		select {
		case err := <-exited:
			t.Fatalf("run-toxiproxy.sh exited (%v):\n%s", err, logs.String())
		default:
		}
		return h.inPlace(t)
	})
	all := h.proxies(t)
	h.wantHop(t, all, "postgres", "POSTGRES_PROXY_PORT", "POSTGRES_PORT", 0)
	h.wantHop(t, all, "kafka", "KAFKA_PROXY_PORT", "KAFKA_PROXIED_PORT", 80)
	if answer, _ := roundTrip(t, h["POSTGRES_PROXY_PORT"]); answer != "postgres ping" {
		t.Errorf("the postgres hop answered %q, want its upstream's %q", answer, "postgres ping")
	}
	answer, took := roundTrip(t, h["KAFKA_PROXY_PORT"])
	if answer != "kafka ping" {
		t.Errorf("the kafka hop answered %q, want its upstream's %q", answer, "kafka ping")
	}
	if took < 80*time.Millisecond {
		t.Errorf("a round trip through the kafka hop took %s, want at least its 80 ms", took)
	}
	launcher.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("run-toxiproxy.sh still runs 10 s after SIGTERM:\n%s", logs.String())
	}
}

// A bad latency from the scenario stops the local start with the
// configurer's error, and the toxiproxy it started goes with it.
func TestLocalRuntimeRefusesABadLatency(t *testing.T) {
	bin := toxiproxyBin(t)
	h := newHops(t)
	state := t.TempDir()
	os.MkdirAll(filepath.Join(state, "env"), 0o755)
	os.WriteFile(filepath.Join(state, "env", "toxiproxy.env"), []byte("KAFKA_LATENCY_MS=fast\n"), 0o644)
	launcher := exec.Command(filepath.Join(repotest.Root(t), "infra", "local", "run-toxiproxy.sh"))
	launcher.Env = append(h.environ(), "LAB_STATE="+state, "TOXIPROXY_BIN="+bin)
	out, err := launcher.CombinedOutput()
	if err == nil {
		t.Fatalf("run-toxiproxy.sh accepted KAFKA_LATENCY_MS=fast:\n%s", out)
	}
	if !strings.Contains(string(out), "configure-toxiproxy: KAFKA_LATENCY_MS must be a whole number of milliseconds from 0 to 10000, got 'fast'\n") {
		t.Errorf("run-toxiproxy.sh's output does not name the bad setting:\n%s", out)
	}
	if resp, err := http.Get(h.api() + "/version"); err == nil {
		resp.Body.Close()
		t.Error("toxiproxy still answers after run-toxiproxy.sh failed")
	}
}

// Every bad setting is one line on stderr and a non-zero exit, before
// toxiproxy is touched.
func TestBadSettingsFail(t *testing.T) {
	bin := toxiproxyBin(t)
	h := newHops(t)
	h.startToxiproxy(t, bin)
	cases := [][]string{
		{"DB_LATENCY_MS=-1"}, {"DB_LATENCY_MS=10001"}, {"DB_LATENCY_MS=abc"}, {"DB_LATENCY_MS="},
		{"KAFKA_LATENCY_MS=010"}, {"KAFKA_LATENCY_MS=1.5"}, {"KAFKA_LATENCY_MS= 20"}, {"KAFKA_LATENCY_MS=99999999999999999999"},
	}
	for _, extra := range cases {
		name, value, _ := strings.Cut(extra[0], "=")
		_, stderr, err := h.run(t, "apply", extra...)
		want := fmt.Sprintf("configure-toxiproxy: %s must be a whole number of milliseconds from 0 to 10000, got '%s'\n", name, value)
		if err == nil || stderr != want {
			t.Errorf("%s: exit %v, stderr %q; want a failure and %q", extra[0], err, stderr, want)
		}
	}
	for _, unset := range []string{"POSTGRES_HOST", "KAFKA_PROXY_PORT", "TOXIPROXY_PORT"} {
		without := hops{}
		for k, v := range h {
			if k != unset {
				without[k] = v
			}
		}
		_, stderr, err := without.run(t, "apply")
		if err == nil || !strings.HasPrefix(stderr, "configure-toxiproxy: "+unset+" is not set") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("without %s: exit %v, stderr %q; want a failure and one line naming it", unset, err, stderr)
		}
	}
	if _, stderr, err := h.run(t, "start"); err == nil || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "usage:") {
		t.Errorf("an unknown mode: exit %v, stderr %q; want a failure and one usage line", err, stderr)
	}
	if all := h.proxies(t); len(all) != 0 {
		t.Errorf("bad settings left proxies behind: %+v", all)
	}
}

// Unset latencies are the defaults infra/components.yaml declares, which
// the configurer reads from the file make generate writes beside it.
func TestUnsetLatenciesAreTheDescriptionsDefaults(t *testing.T) {
	bin := toxiproxyBin(t)
	h := newHops(t)
	h.startToxiproxy(t, bin)
	if _, stderr, err := h.run(t, "apply"); err != nil {
		t.Fatalf("apply: %v\n%s", err, stderr)
	}
	lab, err := components.Load(repotest.Root(t))
	if err != nil {
		t.Fatal(err)
	}
	declared := lab.Infra("toxiproxy").Settings
	all := h.proxies(t)
	for name, key := range map[string]string{"postgres": "DB_LATENCY_MS", "kafka": "KAFKA_LATENCY_MS"} {
		if len(all[name].Toxics) != 1 {
			t.Fatalf("%s: toxics %+v", name, all[name].Toxics)
		}
		if got := strconv.Itoa(all[name].Toxics[0].Attributes.Latency); got != declared[key].Default {
			t.Errorf("%s unset gives %s ms; %s declares the default %q", key, got, components.InfraFile, declared[key].Default)
		}
	}
}

// Kubernetes: watch configures toxiproxy once it answers, and again after
// toxiproxy restarts and forgets its proxies; check follows both.
func TestWatchReconfiguresARestartedToxiproxy(t *testing.T) {
	bin := toxiproxyBin(t)
	h := newHops(t)
	watch := exec.Command(configurer(t), "watch")
	watch.Env = h.environ("DB_LATENCY_MS=7", "KAFKA_LATENCY_MS=0")
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { watch.Process.Kill(); watch.Wait() })

	server := h.startToxiproxy(t, bin)
	await(t, "hops in place", 20*time.Second, func() bool { return h.inPlace(t) })
	all := h.proxies(t)
	h.wantHop(t, all, "postgres", "POSTGRES_PROXY_PORT", "POSTGRES_PORT", 7)
	h.wantHop(t, all, "kafka", "KAFKA_PROXY_PORT", "KAFKA_PROXIED_PORT", 0)

	server.Process.Kill()
	await(t, "toxiproxy gone", 10*time.Second, func() bool { return !h.inPlace(t) })
	h.startToxiproxy(t, bin)
	await(t, "hops in place again after the restart", 20*time.Second, func() bool { return h.inPlace(t) })
	all = h.proxies(t)
	h.wantHop(t, all, "postgres", "POSTGRES_PROXY_PORT", "POSTGRES_PORT", 7)
	h.wantHop(t, all, "kafka", "KAFKA_PROXY_PORT", "KAFKA_PROXIED_PORT", 0)
}
