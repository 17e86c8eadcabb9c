// Package kubecluster starts a throwaway Kubernetes control plane for tests
// (make test-k8s): etcd, kube-apiserver, kube-controller-manager and
// kube-scheduler as plain processes on 127.0.0.1, and kwok, which plays the
// kubelet of a few fake nodes: pods are scheduled, become Running and Ready,
// and run nothing. The API server is a real one, so what it accepts (Pod
// Security admission, strict field validation, server-side apply) and what
// the controllers do with it (rollouts, volume binding, default service
// accounts) is Kubernetes' own answer, not a model of it. tracelab's binary
// does not use this package.
package kubecluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"tracelab/internal/repotest"
	"tracelab/pkg/lab"
)

// Tools are the pinned programs infra/local/tools.sh k8s builds.
type Tools struct {
	Kustomize, Kubectl                                  string
	Etcd, APIServer, ControllerManager, Scheduler, Kwok string
}

// ToolsForTest returns the tools of .state/tools-k8s.env. The cluster tests
// run in make test-k8s, which sets TRACELAB_K8S_CHECKS=1 (missing tools then
// fail); `go test ./...` (and so make test-go) skips them, so they run once
// per make test.
func ToolsForTest(t testing.TB) Tools {
	t.Helper()
	if os.Getenv("TRACELAB_K8S_CHECKS") != "1" {
		t.Skip("make test-k8s runs the Kubernetes checks (with TRACELAB_K8S_CHECKS=1)")
	}
	env, err := lab.ReadEnvFile(filepath.Join(repotest.Root(t), lab.StateDir, "tools-k8s.env"))
	if err != nil {
		t.Fatalf("the Kubernetes check tools are not installed (.state/tools-k8s.env): run 'make tools-k8s'")
	}
	tools := Tools{Kustomize: env["KUSTOMIZE_BIN"], Kubectl: env["KUBECTL_BIN"], Etcd: env["ETCD_BIN"],
		APIServer: env["KUBE_APISERVER_BIN"], ControllerManager: env["KUBE_CONTROLLER_MANAGER_BIN"],
		Scheduler: env["KUBE_SCHEDULER_BIN"], Kwok: env["KWOK_BIN"]}
	for name, path := range map[string]string{"kustomize": tools.Kustomize, "kubectl": tools.Kubectl, "etcd": tools.Etcd,
		"kube-apiserver": tools.APIServer, "kube-controller-manager": tools.ControllerManager,
		"kube-scheduler": tools.Scheduler, "kwok": tools.Kwok} {
		if _, err := os.Stat(path); path == "" || err != nil {
			t.Fatalf("%s is missing from .state/tools-k8s.env or its cache: run 'make tools-k8s'", name)
		}
	}
	return tools
}

// Cluster is a running control plane. Every part of it stops, and its
// folder goes, when the test that started it ends, failed or not.
type Cluster struct {
	t     testing.TB
	Tools Tools
	dir   string
	// Kubeconfig holds one context, Context, with the cluster's admin token.
	// It sets no current context, so a kubectl call that does not name
	// Context fails instead of reaching another cluster.
	Kubeconfig, Context string
	url                 string
	token               string
	client              *http.Client
	procs               []*process
}

// Nodes are kwok's fake nodes. kwok gives each 1000 CPUs and 1 TiB of memory
// (it fills in what a node does not declare), so scheduling never fails for
// want of room; three, so that the scheduler has a choice, as on a cluster.
const Nodes = 3

// Start brings up a control plane with Nodes Ready nodes and returns once
// it serves, or fails the test. Whenever the test fails, the tail of each
// part's log is printed at its end: that is usually where the reason is.
func Start(t testing.TB, tools Tools) *Cluster {
	t.Helper()
	begin := time.Now()
	c := &Cluster{t: t, Tools: tools, dir: t.TempDir(), Context: "tracelab-test"}
	// Cleanups run last-registered first: the processes stop before
	// t.TempDir's own cleanup removes their folder.
	t.Cleanup(c.stop)
	pki, err := newPKI(c.dir)
	if err != nil {
		t.Fatalf("kubecluster: %v", err)
	}
	c.token = pki.token
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM([]byte(pki.caPEM))
	c.client = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}

	var etcdURL string
	c.startOnFreePorts("etcd", 2, func(ports []string) {
		etcdURL = "http://127.0.0.1:" + ports[0]
		peerURL := "http://127.0.0.1:" + ports[1]
		c.start("etcd", tools.Etcd,
			"--name", "test", "--data-dir", filepath.Join(c.dir, "etcd"),
			"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
			"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
			"--initial-cluster", "test="+peerURL,
			// A test cluster lives for seconds; losing it on a power cut is fine.
			"--unsafe-no-fsync")
	}, func() error { return c.waitHTTP("etcd", etcdURL+"/readyz", nil) })

	c.startOnFreePorts("kube-apiserver", 1, func(ports []string) {
		c.url = "https://127.0.0.1:" + ports[0]
		c.start("kube-apiserver", tools.APIServer,
			"--etcd-servers", etcdURL,
			"--bind-address", "127.0.0.1", "--secure-port", ports[0],
			"--tls-cert-file", pki.servingCert, "--tls-private-key-file", pki.servingKey,
			"--token-auth-file", pki.tokenFile,
			"--authorization-mode", "Node,RBAC",
			// As on kind and EKS: privileged containers are the namespaces'
			// Pod Security level's to refuse, not the whole cluster's.
			"--allow-privileged=true",
			// PodSecurity is one of the defaults; named so that a default
			// changing upstream cannot turn off what the tests rely on.
			"--enable-admission-plugins", "PodSecurity",
			"--service-account-issuer", "https://kubernetes.default.svc",
			"--service-account-key-file", pki.saPublic, "--service-account-signing-key-file", pki.saPrivate,
			"--service-cluster-ip-range", "10.96.0.0/16",
			// The kubernetes Service's endpoint would be 127.0.0.1, which
			// Endpoints may not hold; nothing here reaches the API server
			// through the Service.
			"--endpoint-reconciler-type", "none",
			"--cert-dir", filepath.Join(c.dir, "apiserver-certs"))
	}, func() error {
		return c.waitHTTP("kube-apiserver", c.url+"/readyz", map[string]string{"Authorization": "Bearer " + c.token})
	})

	components := c.writeKubeconfig("components.kubeconfig", true)
	c.Kubeconfig = c.writeKubeconfig("kubeconfig", false)
	c.start("kube-controller-manager", tools.ControllerManager,
		"--kubeconfig", components, "--leader-elect=false", "--secure-port=0",
		// Each namespace's default ServiceAccount, which the ServiceAccount
		// admission requires of every pod, comes from its controllers.
		"--service-account-private-key-file", pki.saPrivate, "--root-ca-file", pki.caFile)
	c.start("kube-scheduler", tools.Scheduler, "--kubeconfig", components, "--leader-elect=false", "--secure-port=0")
	kwokConfig := filepath.Join(c.dir, "kwok.yaml")
	// An explicit, empty configuration: kwok otherwise reads ~/.kwok. With
	// no stages configured it uses its defaults: nodes become Ready, pods
	// Running and Ready at once, a Job's pods complete.
	os.WriteFile(kwokConfig, []byte("apiVersion: config.kwok.x-k8s.io/v1alpha1\nkind: KwokConfiguration\noptions: {}\n"), 0o644)
	// Nodes renew a lease, as kubelets do: without one kwok's only
	// heartbeat is a status update every 20 to 45 s, against the
	// controller-manager's 50 s grace, and the nodes flap NotReady under load.
	c.start("kwok", tools.Kwok, "--kubeconfig", components, "--config", kwokConfig, "--manage-all-nodes=true",
		"--node-lease-duration-seconds=40")

	var nodes strings.Builder
	for i := range Nodes {
		fmt.Fprintf(&nodes, `---
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-%d
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {kubernetes.io/hostname: kwok-node-%d, kubernetes.io/os: linux, kubernetes.io/arch: amd64, type: kwok}
`, i, i)
	}
	c.Apply(nodes.String())
	c.Kubectl("wait", "--for=condition=Ready", "node", "--all", "--timeout=60s")
	c.WaitForServiceAccount("default")
	t.Logf("kubecluster: Kubernetes control plane with %d kwok nodes ready in %s", Nodes, time.Since(begin).Round(100*time.Millisecond))
	return c
}

// Kubectl runs kubectl on the cluster and returns its standard output;
// a failure fails the test.
func (c *Cluster) Kubectl(args ...string) []byte {
	c.t.Helper()
	out, err := c.TryKubectl("", args...)
	if err != nil {
		c.t.Fatalf("%v", err)
	}
	return out
}

// TryKubectl runs kubectl on the cluster with stdin, and returns its output
// or an error that holds its standard error.
func (c *Cluster) TryKubectl(stdin string, args ...string) ([]byte, error) {
	out, _, err := c.kubectl(stdin, args...)
	return out, err
}

func (c *Cluster) kubectl(stdin string, args ...string) ([]byte, string, error) {
	cmd := exec.Command(c.Tools.Kubectl, append([]string{"--kubeconfig", c.Kubeconfig, "--context", c.Context}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, stderr.String(), fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, stderr.String(), nil
}

// FieldManager names the test's changes in managedFields, as a person's
// kubectl apply would be named.
const FieldManager = "tracelab-test"

// TryApply server-side applies YAML with strict field validation: the API
// server refuses an unknown or duplicate field instead of dropping it. A
// warning from the server is an error too: it is how the API server speaks
// of what it accepts today and will not tomorrow (a deprecated API), and of
// a workload whose pods the namespace's Pod Security level will refuse
// (enforcement itself applies to pods, which the controllers create later).
// Extra arguments go to kubectl apply (--dry-run=server: admission and
// validation without storing).
func (c *Cluster) TryApply(yaml string, extra ...string) ([]byte, error) {
	args := append([]string{"apply", "--server-side", "--field-manager", FieldManager, "--validate=strict", "-f", "-"}, extra...)
	out, stderr, err := c.kubectl(yaml, args...)
	if err != nil {
		return out, err
	}
	var warnings []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "Warning: ") {
			warnings = append(warnings, l)
		}
	}
	if len(warnings) > 0 {
		return out, fmt.Errorf("kubectl apply: the API server warns:\n  %s", strings.Join(warnings, "\n  "))
	}
	return out, nil
}

// Apply is TryApply; a refusal fails the test.
func (c *Cluster) Apply(yaml string) []byte {
	c.t.Helper()
	out, err := c.TryApply(yaml)
	if err != nil {
		c.t.Fatalf("%v", err)
	}
	return out
}

// WaitForServiceAccount waits for a namespace's default ServiceAccount,
// which the controller-manager creates shortly after the namespace: until
// then the API server refuses every pod there.
func (c *Cluster) WaitForServiceAccount(namespace string) {
	c.t.Helper()
	if err := c.poll("the default ServiceAccount of namespace "+namespace, 60*time.Second, func() error {
		_, err := c.TryKubectl("", "-n", namespace, "get", "serviceaccount", "default", "-o", "name")
		return err
	}); err != nil {
		c.t.Fatalf("kubecluster: %v while waiting for the default ServiceAccount", err)
	}
}

func (c *Cluster) logTails() {
	for _, p := range c.procs {
		c.t.Logf("---- last lines of %s's log ----\n%s", p.name, tail(p.log, 15))
	}
}

// process is one running part of the cluster.
type process struct {
	name, log string
	cmd       *exec.Cmd
	exited    chan struct{}
	err       error
}

func (c *Cluster) start(name, bin string, args ...string) {
	c.t.Helper()
	p := &process{name: name, log: filepath.Join(c.dir, name+".log"), exited: make(chan struct{})}
	f, err := os.Create(p.log)
	if err != nil {
		c.t.Fatal(err)
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	p.cmd.Dir = c.dir
	p.cmd.SysProcAttr = dieWithParent()
	if err := p.cmd.Start(); err != nil {
		f.Close()
		c.t.Fatalf("kubecluster: starting %s: %v", name, err)
	}
	go func() { p.err = p.cmd.Wait(); f.Close(); close(p.exited) }()
	c.procs = append(c.procs, p)
}

// stop ends the parts in the reverse order of their start (kwok and the
// controllers before the API server, the API server before etcd), each by
// SIGTERM and, after 10 s, SIGKILL. On failure the logs' tails come first,
// while the files still exist.
func (c *Cluster) stop() {
	if c.t.Failed() {
		c.logTails()
	}
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i]
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-p.exited
		}
	}
}

// errPortTaken is a part's exit because another process bound its port
// between repotest.FreePort and the part's own bind: other tests' clusters
// run beside this one, and the kernel hands the same free ports to all.
var errPortTaken = errors.New("its port was taken")

// poll calls check until it succeeds, a part of the cluster exits, or the
// timeout passes. A part that exited because its port was taken is
// errPortTaken, for startOnFreePorts to start it again; anything else
// fails the test.
func (c *Cluster) poll(what string, timeout time.Duration, check func() error) error {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return nil
		}
		for _, p := range c.procs {
			select {
			case <-p.exited:
				if log, _ := os.ReadFile(p.log); bytes.Contains(log, []byte("address already in use")) {
					return fmt.Errorf("%s: %w", p.name, errPortTaken)
				}
				c.t.Fatalf("kubecluster: %s exited (%v) while waiting for %s", p.name, p.err, what)
			default:
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("kubecluster: %s not ready after %s: %v", what, timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// startOnFreePorts starts a part on n ports chosen just before, and waits
// until ready says it serves. When another process took one of the ports
// first, the part is started again on new ones, up to three times.
func (c *Cluster) startOnFreePorts(name string, n int, start func(ports []string), ready func() error) {
	c.t.Helper()
	for attempt := 1; ; attempt++ {
		ports := make([]string, n)
		for i := range ports {
			ports[i] = repotest.FreePort(c.t)
		}
		start(ports)
		err := ready()
		if err == nil {
			return
		}
		if !errors.Is(err, errPortTaken) || attempt == 3 {
			c.t.Fatalf("kubecluster: %s: %v (attempt %d)", name, err, attempt)
		}
		c.t.Logf("kubecluster: %s lost its port to another process; starting it on another", name)
		c.procs = c.procs[:len(c.procs)-1] // it has exited; nothing to stop
	}
}

func (c *Cluster) waitHTTP(name, url string, header map[string]string) error {
	c.t.Helper()
	return c.poll(name+" ("+url+")", 60*time.Second, func() error {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := c.client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		return nil
	})
}

func (c *Cluster) writeKubeconfig(name string, current bool) string {
	c.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: v1
kind: Config
clusters:
  - name: %[1]s
    cluster: {server: %[2]q, certificate-authority: %[3]q}
users:
  - name: admin
    user: {token: %[4]q}
contexts:
  - name: %[1]s
    context: {cluster: %[1]s, user: admin}
`, c.Context, c.url, filepath.Join(c.dir, "ca.crt"), c.token)
	if current {
		fmt.Fprintf(&b, "current-context: %s\n", c.Context)
	}
	path := filepath.Join(c.dir, name)
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		c.t.Fatal(err)
	}
	return path
}

func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
