package runtime

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// The port-forwards of the EKS runtime: kubectl port-forward follows one pod
// and never reconnects, so Kube checks each before use and starts it again.

// cluster is a fake kubectl over a lab of four workloads. Its port-forwards
// can be killed, as a pod restart or a dropped connection kills a real one.
type cluster struct {
	env      map[string]map[string]string // workload -> its environment
	calls    []string                     // kubectl commands, without --context and -n
	forwards map[string]*fakeForward      // the newest port-forward of each Service
	refuse   map[string]string            // Service -> why its port-forward cannot start
	cpuUsec  int                          // what the next exec reads of a cgroup's cpu.stat
}

func newCluster() *cluster {
	return &cluster{
		env: map[string]map[string]string{
			"jaeger": {}, "otelcol": {}, "prometheus": {},
			"gateway": {"LAB_VARIANT": "default", "LAB_SETTINGS": ""},
		},
		forwards: map[string]*fakeForward{},
		refuse:   map[string]string{},
	}
}

func (c *cluster) Output(ctx context.Context, args ...string) ([]byte, error) {
	args = args[4:] // --context tracelab-eks -n tracelab
	c.calls = append(c.calls, strings.Join(args, " "))
	switch args[0] {
	case "get":
		var items []map[string]any
		for _, name := range slices.Sorted(maps.Keys(c.env)) {
			var env []map[string]string
			for k, v := range c.env[name] {
				env = append(env, map[string]string{"name": k, "value": v})
			}
			items = append(items, map[string]any{"kind": "Deployment", "metadata": map[string]any{"name": name},
				"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"env": env}}}}}})
		}
		return json.Marshal(map[string]any{"items": items})
	case "exec": // exec deployment/<name> -- sh -c 'cat .../cpu.stat ...'
		c.cpuUsec += 250000
		return fmt.Appendf(nil, "usage_usec %d\nuser_usec 0\n", c.cpuUsec), nil
	case "set":
		w := c.env[strings.TrimPrefix(args[2], "deployment/")]
		for _, change := range args[3:] {
			if k, v, ok := strings.Cut(change, "="); ok {
				w[k] = v
			} else {
				delete(w, strings.TrimSuffix(change, "-"))
			}
		}
	}
	return nil, nil
}

func (c *cluster) Forward(ctx context.Context, args ...string) (Forward, error) {
	target := args[len(args)-2]
	c.calls = append(c.calls, "port-forward "+target)
	service := strings.TrimPrefix(target, "service/")
	if why, ok := c.refuse[service]; ok {
		return nil, errors.New(why)
	}
	f := &fakeForward{c: c, service: service}
	c.forwards[service] = f
	return f, nil
}

type fakeForward struct {
	c       *cluster
	service string
	dead    error // what Err reports once the port-forward has died
}

func (f *fakeForward) Err() error { return f.dead }
func (f *fakeForward) Stop()      { f.c.calls = append(f.c.calls, "stop "+f.service) }

// calls returns and forgets the calls made so far.
func (c *cluster) took() string {
	out := strings.Join(c.calls, "\n")
	c.calls = nil
	return out
}

func TestEKSForwardsJaegerAndPrometheusAndReconnectsADeadForward(t *testing.T) {
	c := newCluster()
	k := newKube("eks", "tracelab-eks", labPorts, labInfra, c)
	ctx := context.Background()
	if err := k.Up(ctx, []string{"gateway"}, nil, "baseline"); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Endpoint("gateway"); err != nil {
		t.Fatal(err)
	}
	// Traces and the metrics-reading detectors need Jaeger and Prometheus.
	for _, service := range []string{"gateway", "jaeger", "prometheus"} {
		if c.forwards[service] == nil {
			t.Fatalf("no port-forward to service/%s after Up and Endpoint; calls:\n%s", service, c.took())
		}
	}
	c.took()

	// All alive: nothing to do, before any use.
	if err := k.Reconnect(ctx); err != nil || len(c.calls) > 0 {
		t.Fatalf("Reconnect with every port-forward alive: %v, calls %q", err, c.calls)
	}
	if _, err := k.Endpoint("gateway"); err != nil || len(c.calls) > 0 {
		t.Fatalf("Endpoint with its port-forward alive: %v, calls %q", err, c.calls)
	}

	// Prometheus's port-forward died during the load; the metrics are read
	// after it, through a new one.
	c.forwards["prometheus"].dead = errors.New("kubectl port-forward exited: error: lost connection to pod")
	if err := k.Reconnect(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := c.took(), "stop prometheus\nport-forward service/prometheus"; got != want {
		t.Errorf("Reconnect after Prometheus's port-forward died:\n%s\nwant:\n%s", got, want)
	}
	if k.PrometheusURL() != "http://127.0.0.1:19090" || k.JaegerURL() != "http://127.0.0.1:16686" {
		t.Errorf("Prometheus at %s, Jaeger at %s", k.PrometheusURL(), k.JaegerURL())
	}

	// The entrypoint's port no longer accepts connections: Endpoint starts
	// its port-forward again before it answers.
	c.forwards["gateway"].dead = errors.New("127.0.0.1:18084 no longer accepts connections")
	if url, err := k.Endpoint("gateway"); err != nil || url != "http://127.0.0.1:18084" {
		t.Fatalf("gateway endpoint %q, %v", url, err)
	}
	if got, want := c.took(), "stop gateway\nport-forward service/gateway"; got != want {
		t.Errorf("Endpoint after gateway's port-forward died:\n%s\nwant:\n%s", got, want)
	}
}

// A rollout replaces the pod a port-forward follows: Up stops it before the
// rollout and starts it again once the new pod is ready.
func TestEKSRolloutStartsTheRestartedWorkloadsForwardAgain(t *testing.T) {
	c := newCluster()
	k := newKube("eks", "tracelab-eks", labPorts, labInfra, c)
	ctx := context.Background()
	if err := k.Up(ctx, []string{"gateway"}, Settings{"gateway": {"GATEWAY_PATH_MATCHING": "ant"}}, "baseline"); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Endpoint("gateway"); err != nil {
		t.Fatal(err)
	}
	c.took()
	if err := k.Up(ctx, []string{"gateway"}, Settings{"gateway": {"GATEWAY_PATH_MATCHING": "path-pattern"}}, "fixed"); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"get deployments,statefulsets -o json",
		"rollout status deployment/jaeger --timeout=5m0s",
		"rollout status deployment/otelcol --timeout=5m0s",
		"rollout status deployment/prometheus --timeout=5m0s",
		"set env deployment/gateway GATEWAY_PATH_MATCHING=path-pattern LAB_VARIANT=fixed",
		"stop gateway",
		"rollout status deployment/gateway --timeout=5m0s",
		"port-forward service/gateway",
	}, "\n")
	if got := c.took(); got != want {
		t.Errorf("calls:\n%s\nwant:\n%s", got, want)
	}
}

// A port-forward that cannot start again fails the run with one line that
// names the Service and says where to look.
func TestEKSForwardThatCannotStartAgainIsAClearError(t *testing.T) {
	c := newCluster()
	k := newKube("eks", "tracelab-eks", labPorts, labInfra, c)
	ctx := context.Background()
	if err := k.Up(ctx, []string{"gateway"}, nil, "baseline"); err != nil {
		t.Fatal(err)
	}
	c.forwards["jaeger"].dead = errors.New("kubectl port-forward exited: error: lost connection to pod")
	c.refuse["jaeger"] = "kubectl port-forward exited: error: unable to forward port because pod is not running. Current status=Pending"
	err := k.Reconnect(ctx)
	want := "port-forward 127.0.0.1:16686 -> service/jaeger: kubectl port-forward exited: error: unable to forward port because pod is not running. Current status=Pending; is a pod of it running? kubectl --context tracelab-eks -n tracelab get pods -l app.kubernetes.io/name=jaeger"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	k.Down(ctx)
}

// kind reaches every endpoint through the NodePorts its node maps: no
// port-forward, nothing to reconnect.
func TestKindNeedsNoPortForward(t *testing.T) {
	c := newCluster()
	k := newKube("kind", "kind-tracelab", labPorts, labInfra, c)
	ctx := context.Background()
	if err := k.Up(ctx, []string{"gateway"}, nil, "baseline"); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Endpoint("gateway"); err != nil {
		t.Fatal(err)
	}
	if err := k.Reconnect(ctx); err != nil {
		t.Fatal(err)
	}
	if got := c.took(); strings.Contains(got, "port-forward") {
		t.Errorf("kind started a port-forward:\n%s", got)
	}
}

// The transcripts' port-forwards (kube_test.go) stay alive.
func (s stopRecorder) Err() error { return nil }

// execKubectl's port-forwards, against a fake kubectl that listens like
// kubectl port-forward: the test binary itself (TestFakeKubectlPortForward).

func TestExecForwardReportsItsDeath(t *testing.T) {
	fakeKubectl(t, "")
	ctx := context.Background()

	t.Run("kubectl exits", func(t *testing.T) {
		f, err := execKubectl{}.Forward(ctx, "port-forward", "service/jaeger", "16686:16686")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Stop()
		if err := f.Err(); err != nil {
			t.Fatalf("a listening port-forward reports %v", err)
		}
		tell(t, f, "exit")
		<-f.(*execForward).exited
		if err := f.Err(); err == nil || err.Error() != "kubectl port-forward exited: error: lost connection to pod" {
			t.Errorf("got %v", err)
		}
	})

	t.Run("the local port stops accepting connections", func(t *testing.T) {
		f, err := execKubectl{}.Forward(ctx, "port-forward", "service/jaeger", "16686:16686")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Stop()
		tell(t, f, "close")
		addr := f.(*execForward).addr
		if err := f.Err(); err == nil || !strings.HasPrefix(err.Error(), addr+" no longer accepts connections: ") {
			t.Errorf("got %v", err)
		}
	})
}

func TestExecForwardThatCannotStartSaysWhy(t *testing.T) {
	fakeKubectl(t, "refuse")
	_, err := execKubectl{}.Forward(context.Background(), "port-forward", "service/jaeger", "16686:16686")
	if want := "kubectl port-forward exited: error: unable to forward port because pod is not running. Current status=Pending"; err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}

// fakeKubectl puts a kubectl on the PATH that runs this test binary as
// TestFakeKubectlPortForward, in mode ("" listens, "refuse" fails to start).
func fakeKubectl(t *testing.T, mode string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := fmt.Sprintf("#!/bin/sh\nexec %q -test.run='^TestFakeKubectlPortForward$' -- \"$@\"\n", self)
	if err := os.WriteFile(filepath.Join(dir, "kubectl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("TRACELAB_FAKE_KUBECTL", "port-forward "+mode)
}

// tell sends the fake kubectl a command through its own port and waits for
// its answer, so that the command has taken effect when tell returns.
func tell(t *testing.T, f Forward, command string) {
	t.Helper()
	conn, err := net.Dial("tcp", f.(*execForward).addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintln(conn, command)
	bufio.NewReader(conn).ReadString('\n')
}

// TestFakeKubectlPortForward is not a test: it is the fake kubectl of
// fakeKubectl, and does nothing in a normal test run. Like kubectl
// port-forward, it prints where it listens and keeps running. A connection
// may tell it to exit as kubectl does when its pod goes away, or to close
// its listener.
func TestFakeKubectlPortForward(t *testing.T) {
	mode, ok := strings.CutPrefix(os.Getenv("TRACELAB_FAKE_KUBECTL"), "port-forward ")
	if !ok {
		return
	}
	if mode == "refuse" {
		fmt.Fprintln(os.Stderr, "error: unable to forward port because pod is not running. Current status=Pending")
		os.Exit(1)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	fmt.Printf("Forwarding from %s -> 16686\n", l.Addr())
	for {
		conn, err := l.Accept()
		if err != nil { // the listener is closed: stay alive until killed
			stop := make(chan os.Signal, 1)
			signal.Notify(stop, syscall.SIGTERM)
			<-stop
			os.Exit(1)
		}
		fmt.Println("Handling connection for 16686")
		line, _ := bufio.NewReader(conn).ReadString('\n')
		switch strings.TrimSpace(line) {
		case "exit":
			fmt.Fprintln(os.Stderr, "E0523 12:00:00.000000 portforward.go:424] an error occurred forwarding 16686 -> 16686: lost connection")
			fmt.Fprintln(os.Stderr, "error: lost connection to pod")
			os.Exit(1)
		case "close":
			l.Close()
			fmt.Fprintln(conn, "closed")
		}
		conn.Close()
	}
}

// CPU is read from the container's cgroup, through the workload the lab
// deployed; the workloads are listed once, not at every read.
func TestKubeReadsCPUFromTheContainersCgroup(t *testing.T) {
	c := newCluster()
	k := newKube("kind", "kind-tracelab", labPorts, labInfra, c)
	ctx := context.Background()
	first, err := k.CPUSeconds(ctx, []string{"gateway", "no-such-service"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := k.CPUSeconds(ctx, []string{"gateway"})
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 1 || first["gateway"] != 0.25 || second["gateway"] != 0.5 {
		t.Errorf("reads %v then %v; want gateway alone, 0.25 s then 0.5 s", first, second)
	}
	calls := c.took()
	if strings.Count(calls, "get deployments") != 1 || !strings.Contains(calls, "exec deployment/gateway -- sh -c") {
		t.Errorf("kubectl calls:\n%s\nwant one listing of the workloads and an exec into deployment/gateway", calls)
	}
}

// The trace explorer reaches the cluster's Jaeger and Prometheus without a
// run: on EKS through port-forwards that Down stops; on kind, NodePorts.
func TestReachTelemetryForwardsOnlyOnEKS(t *testing.T) {
	ctx := context.Background()
	eks := newCluster()
	k := newKube("eks", "tracelab-eks", labPorts, labInfra, eks)
	if err := k.ReachTelemetry(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := eks.took(), "port-forward service/jaeger\nport-forward service/prometheus"; got != want {
		t.Errorf("EKS:\n%s\nwant:\n%s", got, want)
	}
	k.Down(ctx)
	if got, want := eks.took(), "stop jaeger\nstop prometheus"; got != want {
		t.Errorf("Down:\n%s\nwant:\n%s", got, want)
	}
	kind := newCluster()
	if err := newKube("kind", "kind-tracelab", labPorts, labInfra, kind).ReachTelemetry(ctx); err != nil || kind.took() != "" {
		t.Errorf("kind: %v, calls %q", err, kind.took())
	}
}
