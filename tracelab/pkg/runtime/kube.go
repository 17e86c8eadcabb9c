package runtime

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"tracelab/pkg/kubectl"
	"tracelab/pkg/lab"
)

// Kube is the runtime of a Kubernetes cluster on which the lab is deployed
// from k8s/overlays/<name> (make kind-up, make eks-up). It drives the cluster
// with kubectl only:
//   - a variant's settings become the workload's environment (kubectl set
//     env), and Up waits for the rollout, as the local runtime restarts a
//     process;
//   - endpoints keep the local runtime's ports on 127.0.0.1: kind maps them
//     from NodePorts (k8s/kind/cluster.yaml), EKS reaches them by kubectl
//     port-forward, which tracelab starts, checks before each use, starts
//     again when it died, and stops;
//   - traces come from the cluster's Jaeger and metrics from its
//     Prometheus, by the same query APIs and at the same ports.
//
// The cluster and the lab on it outlive a tracelab run (make kind-down and
// make eks-down remove them); what a run starts, the port-forwards, does not.
type Kube struct {
	name      string // kind or eks
	context   string // the kubectl context, never the user's current one implicitly
	namespace string
	portFwd   bool // reach endpoints by port-forward (EKS) rather than NodePorts (kind)
	ports     map[string]string
	infra     []string // the telemetry stack a scenario needs, as on the local runtime
	kubectl   Kubectl
	forwards  map[string]portForward // by the Service it reaches
	progress  Progress
	// cpuTargets is what CPUSeconds execs into, by service: deployment/x
	// reaches a ready pod of the current rollout.
	cpuTargets map[string]string
	// The workloads the last Up rolled out, and their containers' restart
	// counts at Exited's first look after it.
	watched  []string
	restarts map[string]podContainer
	// routed waits until a URL through kube-proxy reaches a live pod
	// (waitRouted); nil where nothing routes (tests with a fake kubectl).
	routed func(ctx context.Context, url string) error
	// nodePorts says, by Service name, which are NodePorts (see nodePort).
	nodePorts map[string]bool
}

// portForward is one of the port-forwards a run started, with the port it
// keeps on 127.0.0.1 (the component's port in ports.env).
type portForward struct {
	Forward
	port string
}

// Kubectl runs kubectl; tests replace it with recorded interactions.
type Kubectl interface {
	// Output runs kubectl with args and returns its standard output.
	Output(ctx context.Context, args ...string) ([]byte, error)
	// Forward starts `kubectl port-forward` with args and returns once it
	// listens.
	Forward(ctx context.Context, args ...string) (Forward, error)
}

// Forward is a running kubectl port-forward.
type Forward interface {
	// Err is nil while the port-forward carries connections, and otherwise
	// says why it does not: kubectl exited (the pod it follows went away,
	// or its connection to the API server dropped), or the local port no
	// longer accepts connections.
	Err() error
	// Stop ends it, dead or alive.
	Stop()
}

// The kubectl contexts make kind-up and make eks-up create; KUBE_CONTEXT
// overrides them.
var kubeContexts = map[string]string{"kind": "kind-tracelab", "eks": "tracelab-eks"}

// Namespace is where k8s/base puts the lab.
const Namespace = "tracelab"

// The environment variables tracelab keeps on a workload: LAB_VARIANT is
// recorded on every span (lab.variant); LAB_SETTINGS names the variables the
// current variant set, so that the next variant removes those it does not set.
const (
	envVariant  = "LAB_VARIANT"
	envSettings = "LAB_SETTINGS"
)

// rolloutTimeout bounds one workload's rollout: a Java service starts in
// well under a minute, but pulling an image on a fresh EKS node takes longer.
const rolloutTimeout = 5 * time.Minute

func NewKube(name string, c *lab.Checkout, progress Progress) (*Kube, error) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		return nil, fmt.Errorf("kubectl is not installed; the %s runtime needs it (docs/kubernetes.md)", name)
	}
	ctx := os.Getenv("KUBE_CONTEXT")
	if ctx == "" {
		ctx = kubeContexts[name]
	}
	infra, err := c.AlwaysInfra()
	if err != nil {
		return nil, err
	}
	k := newKube(name, ctx, c.Ports, infra, execKubectl{})
	k.routed = waitRouted
	if progress != nil {
		k.progress = progress
	}
	return k, nil
}

func newKube(name, context string, ports map[string]string, infra []string, k Kubectl) *Kube {
	return &Kube{name: name, context: context, namespace: Namespace, portFwd: name == "eks",
		ports: ports, infra: infra, kubectl: k, forwards: map[string]portForward{}, progress: func(string, ...any) {}}
}

func (k *Kube) Name() string { return k.name }

// CPUSeconds implements Runtime, from each service's container cgroup
// (kubectl exec): the pod's own accounting, whatever node it runs on. The
// workloads are listed once: the runner reads CPU several times a second.
func (k *Kube) CPUSeconds(ctx context.Context, services []string) (map[string]float64, error) {
	if k.cpuTargets == nil {
		ws, err := k.workloads(ctx)
		if err != nil {
			return nil, err
		}
		k.cpuTargets = map[string]string{}
		for name, w := range ws {
			k.cpuTargets[name] = w.kind + "/" + w.name
		}
	}
	out := map[string]float64{}
	for _, name := range services {
		target, ok := k.cpuTargets[name]
		if !ok {
			continue
		}
		raw, err := k.run(ctx, append([]string{"exec", target, "--"}, cgroupCPUCommand...)...)
		if err != nil {
			continue
		}
		if sec, err := cgroupCPU(raw); err == nil {
			out[name] = sec
		}
	}
	return out, nil
}

// JITSeconds implements JITCounter, from the threads the JVM's container
// lists in its /proc (kubectl exec).
func (k *Kube) JITSeconds(ctx context.Context, service string) (float64, bool) {
	if _, err := k.CPUSeconds(ctx, nil); err != nil {
		return 0, false
	}
	target, ok := k.cpuTargets[service]
	if !ok {
		return 0, false
	}
	out, err := k.run(ctx, append([]string{"exec", target, "--"}, jitCommand...)...)
	if err != nil {
		return 0, false
	}
	return jitStats(out)
}

// CPUs implements Runtime: the CPU limit of the service's container, which
// the kernel enforces by quota whatever the node has (LAB_CPUS, the local
// runtime's taskset list, pins nothing here), or the machine's CPUs when the
// limit cannot be read.
func (k *Kube) CPUs(ctx context.Context, service string, _ map[string]string) float64 {
	if ws, err := k.workloads(ctx); err == nil {
		if cpus, err := parseCPUQuantity(ws[service].cpuLimit); err == nil && cpus > 0 {
			return cpus
		}
	}
	return float64(goruntime.NumCPU())
}

// parseCPUQuantity reads a Kubernetes CPU quantity: "2", "1.5" or "500m".
func parseCPUQuantity(q string) (float64, error) {
	if milli, ok := strings.CutSuffix(q, "m"); ok {
		v, err := strconv.ParseFloat(milli, 64)
		return v / 1000, err
	}
	return strconv.ParseFloat(q, 64)
}

// Running is false: the cluster outlives tracelab, and nothing tracelab
// starts on it (port-forwards) survives the run that started it, so the
// scenario runner always calls Down, which stops only those.
func (k *Kube) Running() bool { return false }

func (k *Kube) run(ctx context.Context, args ...string) ([]byte, error) {
	return k.kubectl.Output(ctx, append([]string{"--context", k.context, "-n", k.namespace}, args...)...)
}

// workload is what Up needs of a Deployment or StatefulSet.
type workload struct {
	kind, name      string
	env             map[string]string // of all its containers
	cpuLimit        string            // of its first container that has one
	replicas, ready int
}

// workloads lists the lab's Deployments and StatefulSets by name.
func (k *Kube) workloads(ctx context.Context) (map[string]workload, error) {
	out, err := k.run(ctx, "get", "deployments,statefulsets", "-o", "json")
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%v; is the %s cluster up? ('make %s-up', or KUBE_CONTEXT for another context)", err, k.name, k.name)
	}
	var list struct {
		Items []struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Status struct {
				ReadyReplicas int `json:"readyReplicas"`
			} `json:"status"`
			Spec struct {
				Replicas *int `json:"replicas"`
				Template struct {
					Spec struct {
						Containers []struct {
							Env []struct {
								Name  string `json:"name"`
								Value string `json:"value"`
							} `json:"env"`
							Resources struct {
								Limits map[string]string `json:"limits"`
							} `json:"resources"`
						} `json:"containers"`
					} `json:"spec"`
				} `json:"template"`
			} `json:"spec"`
		} `json:"items"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, fmt.Errorf("kubectl get deployments,statefulsets: unexpected output: %v", err)
	}
	m := map[string]workload{}
	for _, it := range list.Items {
		w := workload{kind: strings.ToLower(it.Kind), name: it.Metadata.Name, env: map[string]string{}, replicas: 1, ready: it.Status.ReadyReplicas}
		if it.Spec.Replicas != nil {
			w.replicas = *it.Spec.Replicas
		}
		// kubectl set env sets every container, so a variable of any of
		// them is the workload's (toxiproxy's DB_LATENCY_MS is read by its
		// configurer's container).
		for _, c := range it.Spec.Template.Spec.Containers {
			if w.cpuLimit == "" {
				w.cpuLimit = c.Resources.Limits["cpu"]
			}
			for _, e := range c.Env {
				if _, seen := w.env[e.Name]; !seen {
					w.env[e.Name] = e.Value
				}
			}
		}
		m[w.name] = w
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("the lab is not deployed in namespace %s of context %s; run 'make %s-up'", k.namespace, k.context, k.name)
	}
	return m, nil
}

// Up applies each service's settings to its workload, one at a time in the
// scenario's order, and waits for each rollout: a service may need the one
// before it from its first request on. A workload whose settings are already
// in place is not restarted.
func (k *Kube) Up(ctx context.Context, services []string, settings Settings, variant string) error {
	all, err := k.workloads(ctx)
	if err != nil {
		return err
	}
	restarted := map[string]string{} // forwarded Service -> its port, for forwards whose pod is being replaced
	k.watched, k.restarts = nil, nil
	want := append(append([]string{}, k.infra...), services...)
	for _, name := range want {
		w, ok := all[name]
		if !ok {
			return fmt.Errorf("%s has no Deployment or StatefulSet in namespace %s of context %s; is k8s/overlays/%s applied? ('make %s-up')", name, k.namespace, k.context, k.name, k.name)
		}
		changes := envChanges(w.env, settings[name], variant)
		if len(changes) > 0 {
			k.progress("setting %s on %s/%s", strings.Join(changes, " "), w.kind, name)
			if _, err := k.run(ctx, append([]string{"set", "env", w.kind + "/" + name}, changes...)...); err != nil {
				return err
			}
			// A port-forward follows one pod, and this one is being replaced.
			if f, ok := k.forwards[name]; ok {
				restarted[name] = f.port
				k.stopForward(name)
			}
		}
		if _, err := k.run(ctx, "rollout", "status", w.kind+"/"+name, "--timeout="+rolloutTimeout.String()); err != nil {
			return fmt.Errorf("%s/%s did not become ready: %v; see kubectl --context %s -n %s describe %s/%s", w.kind, name, err, k.context, k.namespace, w.kind, name)
		}
		if len(changes) > 0 && !k.portFwd && k.routed != nil {
			if err := k.waitReplacedGone(ctx, name); err != nil {
				return err
			}
			if url, err := k.Endpoint(name); err == nil && k.nodePort(ctx, name) {
				k.progress("waiting until kube-proxy routes service/%s to its new pod", name)
				if err := k.routed(ctx, url); err != nil {
					return fmt.Errorf("%s rolled out, but its Service does not answer at %s: %v; see kubectl --context %s -n kube-system logs -l k8s-app=kube-proxy", name, url, err, k.context)
				}
			}
		}
	}
	k.watched = want
	if !k.portFwd {
		return nil
	}
	// Trace collection and the metrics-reading detectors need Jaeger and
	// Prometheus on every run.
	maps.Copy(restarted, k.telemetry())
	for _, service := range slices.Sorted(maps.Keys(restarted)) {
		if err := k.forward(ctx, service, restarted[service]); err != nil {
			return err
		}
	}
	return nil
}

// A finished rollout does not mean the Service routes to the new pod:
// kube-proxy rewrites the node's rules when it sees the new endpoints,
// seconds later on a busy node. A connection made in between is translated
// to the replaced pod's address, and its conntrack entry keeps every retry
// of its SYN going there. Seen on kind, 2026-11-26: the load's first
// connection hung 63 s on the old pod's address, then failed with "no
// route to host". The NodePort goes through the same rules as the
// ClusterIP (one kube-proxy sync writes both), so answers through it, each
// on a new connection, show that the Service's routing is current.
const (
	routedAnswers = 3
	routedTimeout = 2 * time.Minute
	routedTry     = 2 * time.Second
)

// waitReplacedGone returns once no pod of the workload is terminating: a
// replaced pod still answers while it shuts down, so answers through the
// Service prove nothing about its routing until the pod is gone (seen on
// kind: the check passed on the old pod, whose address the load's
// connection then found dead).
func (k *Kube) waitReplacedGone(ctx context.Context, name string) error {
	ctx, cancel := context.WithTimeout(ctx, rolloutTimeout)
	defer cancel()
	for {
		out, err := k.run(ctx, "get", "pods", "-l", "app.kubernetes.io/name="+name,
			"-o", `jsonpath={range .items[*]}{.metadata.deletionTimestamp}{"\n"}{end}`)
		if err != nil {
			return fmt.Errorf("the replaced pods of %s: %v", name, err)
		}
		if strings.TrimSpace(string(out)) == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("a replaced pod of %s is still terminating after %s", name, rolloutTimeout)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// nodePort reports whether the workload's Service is a NodePort, which kind
// maps to the host: only through one can tracelab see the routing of a
// new pod. toxiproxy, Kafka and PostgreSQL are reached inside the cluster
// only, and a check at their host port never answers (seen on kind:
// chatty-db and kafka-batching timed out on toxiproxy's). The Services are
// listed once.
func (k *Kube) nodePort(ctx context.Context, name string) bool {
	if k.nodePorts == nil {
		out, err := k.run(ctx, "get", "services", "-o", "json")
		if err != nil {
			return false
		}
		var list struct {
			Items []struct {
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
				Spec struct {
					Type string `json:"type"`
				} `json:"spec"`
			} `json:"items"`
		}
		if json.Unmarshal(out, &list) != nil {
			return false
		}
		k.nodePorts = map[string]bool{}
		for _, it := range list.Items {
			k.nodePorts[it.Metadata.Name] = it.Spec.Type == "NodePort"
		}
	}
	return k.nodePorts[name]
}

// waitRouted returns once url answers routedAnswers requests in a row, any
// HTTP status, each on a connection of its own within routedTry.
func waitRouted(ctx context.Context, url string) error {
	client := &http.Client{Timeout: routedTry, Transport: &http.Transport{DisableKeepAlives: true}}
	ctx, cancel := context.WithTimeout(ctx, routedTimeout)
	defer cancel()
	var last error
	for ok := 0; ok < routedAnswers; {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/", nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			ok++
			continue
		}
		if ctx.Err() != nil {
			if last == nil {
				last = err
			}
			return fmt.Errorf("no %d answers in a row within %s (last: %v)", routedAnswers, routedTimeout, last)
		}
		last, ok = err, 0
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
	return nil
}

// envChanges returns the kubectl set env arguments (KEY=value, KEY-) that
// bring a workload's environment to a variant's settings, or none when it
// already has them. LAB_VARIANT is set only where the workload declares it
// (the services); PostgreSQL is not restarted for a label.
func envChanges(current, want map[string]string, variant string) []string {
	desired := map[string]string{}
	for k, v := range want {
		desired[k] = v
	}
	if _, ok := current[envVariant]; ok {
		desired[envVariant] = variant
	}
	keys := slices.Sorted(maps.Keys(want))
	if _, ok := current[envSettings]; ok || len(keys) > 0 {
		desired[envSettings] = strings.Join(keys, ",")
	}
	var changes []string
	for _, k := range slices.Sorted(maps.Keys(desired)) {
		if v, ok := current[k]; !ok || v != desired[k] {
			changes = append(changes, k+"="+desired[k])
		}
	}
	// What the previous variant set and this one does not goes back to the
	// image's default, as on the local runtime, which rewrites the env file.
	for _, k := range strings.Split(current[envSettings], ",") {
		if _, keep := desired[k]; k != "" && !keep {
			if _, present := current[k]; present {
				changes = append(changes, k+"-")
			}
		}
	}
	return changes
}

// Endpoint is the service's base URL on 127.0.0.1 at the local runtime's
// port: mapped by kind, or forwarded on EKS by a port-forward that works
// when Endpoint returns.
func (k *Kube) Endpoint(service string) (string, error) {
	port, ok := k.ports[strings.ToUpper(service)+"_PORT"]
	if !ok {
		return "", fmt.Errorf("no port for service %q in infra/local/ports.env", service)
	}
	if k.portFwd {
		if err := k.forward(context.Background(), service, port); err != nil {
			return "", err
		}
	}
	return "http://127.0.0.1:" + port, nil
}

// telemetry is where Jaeger's query API and Prometheus are reached, by
// Service: the local runtime's ports.
func (k *Kube) telemetry() map[string]string {
	return map[string]string{"jaeger": k.ports["JAEGER_QUERY_PORT"], "prometheus": k.ports["PROMETHEUS_PORT"]}
}

// ReachTelemetry makes JaegerURL and PrometheusURL answer without a run:
// kind maps them already; on EKS it starts their port-forwards, which
// Down stops. The trace explorer (tracelab ui) reads them live.
func (k *Kube) ReachTelemetry(ctx context.Context) error {
	if !k.portFwd {
		return nil
	}
	for _, service := range slices.Sorted(maps.Keys(k.telemetry())) {
		if err := k.forward(ctx, service, k.telemetry()[service]); err != nil {
			return err
		}
	}
	return nil
}

func (k *Kube) JaegerURL() string { return "http://127.0.0.1:" + k.ports["JAEGER_QUERY_PORT"] }

// PrometheusURL is the cluster's Prometheus (k8s/base/telemetry), reached
// as Jaeger is: a NodePort on kind, a port-forward on EKS.
func (k *Kube) PrometheusURL() string { return "http://127.0.0.1:" + k.ports["PROMETHEUS_PORT"] }

// Reconnect checks the port-forwards this run started (EKS) and starts
// again each one that died since its last use: kubectl port-forward follows
// one pod and never reconnects. It fails, naming the Service, when one
// cannot be started. On kind the NodePorts need no care.
func (k *Kube) Reconnect(ctx context.Context) error {
	for _, service := range slices.Sorted(maps.Keys(k.forwards)) {
		if err := k.forward(ctx, service, k.forwards[service].port); err != nil {
			return err
		}
	}
	return nil
}

// forward makes 127.0.0.1:port reach service: it keeps the port-forward
// already there if it still works, and otherwise starts one.
func (k *Kube) forward(ctx context.Context, service, port string) error {
	if f, ok := k.forwards[service]; ok {
		err := f.Err()
		if err == nil {
			return nil
		}
		k.progress("port-forward to service/%s is down (%v); starting it again", service, err)
		k.stopForward(service)
	} else {
		k.progress("port-forward 127.0.0.1:%s -> service/%s", port, service)
	}
	f, err := k.kubectl.Forward(ctx, "--context", k.context, "-n", k.namespace, "port-forward",
		"--address", "127.0.0.1", "service/"+service, port+":"+port)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("port-forward 127.0.0.1:%s -> service/%s: %v; is a pod of it running? kubectl --context %s -n %s get pods -l app.kubernetes.io/name=%s",
			port, service, err, k.context, k.namespace, service)
	}
	k.forwards[service] = portForward{f, port}
	return nil
}

func (k *Kube) stopForward(service string) {
	if f, ok := k.forwards[service]; ok {
		f.Stop()
		delete(k.forwards, service)
	}
}

// Down stops the port-forwards this run started. The cluster and the lab
// stay; make kind-down or make eks-down remove them.
func (k *Kube) Down(ctx context.Context) error {
	for _, s := range slices.Sorted(maps.Keys(k.forwards)) {
		k.stopForward(s)
	}
	return nil
}

// podContainer is one container of a pod of a watched workload.
type podContainer struct {
	workload, pod, container string
	restarts                 int
	lastExit                 int    // the exit code of its last termination, -1 if none
	reason                   string // of that termination (OOMKilled, Error)
}

// Exited implements Runtime from the pods of the workloads the last Up
// rolled out: Kubernetes starts again a container that exits, so a
// container whose restart count grew since the first look after Up, or a
// pod that is gone, is what stopped.
func (k *Kube) Exited(ctx context.Context) error {
	if len(k.watched) == 0 {
		return nil
	}
	now, err := k.podContainers(ctx)
	if err != nil {
		return nil // an unanswered poll is not a death: the next one decides
	}
	if k.restarts == nil {
		k.restarts = now
		return nil
	}
	for _, key := range slices.Sorted(maps.Keys(k.restarts)) {
		before := k.restarts[key]
		c, ok := now[key]
		if ok && c.restarts == before.restarts {
			continue
		}
		e := &ExitError{Name: before.workload, Code: -1, LastLine: "its pod " + before.pod + " is gone",
			Log: fmt.Sprintf("kubectl --context %s -n %s get events", k.context, k.namespace)}
		if ok {
			e.Code, e.LastLine = c.lastExit, "container "+c.container+" restarted ("+c.reason+")"
			e.Log = fmt.Sprintf("kubectl --context %s -n %s logs --previous pod/%s -c %s", k.context, k.namespace, c.pod, c.container)
		}
		return e
	}
	return nil
}

// podContainers lists the containers of the watched workloads' pods, by
// pod/container.
func (k *Kube) podContainers(ctx context.Context) (map[string]podContainer, error) {
	out, err := k.run(ctx, "get", "pods", "-l", "app.kubernetes.io/name in ("+strings.Join(k.watched, ",")+")", "-o", "json")
	if err != nil {
		return nil, err
	}
	var list struct {
		Items []struct {
			Metadata struct {
				Name              string            `json:"name"`
				Labels            map[string]string `json:"labels"`
				DeletionTimestamp *string           `json:"deletionTimestamp"`
			} `json:"metadata"`
			Status struct {
				ContainerStatuses []struct {
					Name         string `json:"name"`
					RestartCount int    `json:"restartCount"`
					LastState    struct {
						Terminated *struct {
							ExitCode int    `json:"exitCode"`
							Reason   string `json:"reason"`
						} `json:"terminated"`
					} `json:"lastState"`
				} `json:"containerStatuses"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, fmt.Errorf("kubectl get pods: unexpected output: %v", err)
	}
	m := map[string]podContainer{}
	for _, p := range list.Items {
		if p.Metadata.DeletionTimestamp != nil {
			continue // a replaced pod on its way out, not a member of the run's stack
		}
		for _, c := range p.Status.ContainerStatuses {
			pc := podContainer{workload: p.Metadata.Labels["app.kubernetes.io/name"], pod: p.Metadata.Name, container: c.Name, restarts: c.RestartCount, lastExit: -1}
			if t := c.LastState.Terminated; t != nil {
				pc.lastExit, pc.reason = t.ExitCode, t.Reason
			}
			m[p.Metadata.Name+"/"+c.Name] = pc
		}
	}
	return m, nil
}

// Status is one line per workload of the lab: kind, name, ready replicas.
func (k *Kube) Status(ctx context.Context) (string, error) {
	all, err := k.workloads(ctx)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s %-14s %s\n", "KIND", "NAME", "READY")
	for _, name := range slices.Sorted(maps.Keys(all)) {
		w := all[name]
		fmt.Fprintf(&b, "%-12s %-14s %d/%d\n", w.kind, w.name, w.ready, w.replicas)
	}
	fmt.Fprintf(&b, "\ncontext %s, namespace %s   Jaeger %s   Prometheus %s\n", k.context, k.namespace, k.JaegerURL(), k.PrometheusURL())
	return b.String(), nil
}

// execKubectl runs the kubectl on the PATH.
type execKubectl struct{}

func (execKubectl) Output(ctx context.Context, args ...string) ([]byte, error) {
	return kubectl.Run(ctx, nil, args...)
}

// forwardListenTimeout bounds kubectl port-forward's start: it finds a
// pod of the Service and opens its local port within seconds.
const forwardListenTimeout = 30 * time.Second

// Forward starts kubectl port-forward and returns once it listens: its
// "Forwarding from 127.0.0.1:PORT -> PORT" line says so, and where.
func (execKubectl) Forward(ctx context.Context, args ...string) (Forward, error) {
	cmd := exec.Command("kubectl", args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	f := &execForward{cmd: cmd, exited: make(chan struct{})}
	listening := make(chan string, 1)
	go func() {
		// Reading to the end keeps kubectl from blocking on its line per
		// connection, and must end before Wait.
		sc := bufio.NewScanner(stdout)
		for sent := false; sc.Scan(); {
			if addr, ok := forwardingFrom(sc.Text()); ok && !sent {
				listening <- addr
				sent = true
			}
		}
		io.Copy(io.Discard, stdout)
		err := cmd.Wait()
		// kubectl says why last ("error: lost connection to pod"), after
		// the errors of the connections it carried.
		f.exit = fmt.Errorf("kubectl port-forward exited: %s", lastLine(orErr(stderr.String(), err)))
		close(f.exited)
	}()
	select {
	case f.addr = <-listening:
		return f, nil
	case <-f.exited:
		return nil, f.exit
	case <-time.After(forwardListenTimeout):
		f.Stop()
		return nil, fmt.Errorf("kubectl port-forward did not listen within %s: %s", forwardListenTimeout, lastLine(stderr.String()))
	case <-ctx.Done():
		f.Stop()
		return nil, ctx.Err()
	}
}

// forwardingFrom reads the local address from kubectl port-forward's
// "Forwarding from 127.0.0.1:16686 -> 16686".
func forwardingFrom(line string) (string, bool) {
	f := strings.Fields(line)
	if len(f) < 3 || f[0] != "Forwarding" || f[1] != "from" {
		return "", false
	}
	return f[2], true
}

type execForward struct {
	cmd    *exec.Cmd
	addr   string        // where it listens
	exited chan struct{} // closed once kubectl has exited
	exit   error         // why, once exited is closed
}

// forwardDialTimeout bounds the connection Err opens: the port is on
// 127.0.0.1, so a listener accepts at once.
const forwardDialTimeout = 2 * time.Second

func (f *execForward) Err() error {
	select {
	case <-f.exited:
		return f.exit
	default:
	}
	c, err := net.DialTimeout("tcp", f.addr, forwardDialTimeout)
	if err != nil {
		return fmt.Errorf("%s no longer accepts connections: %v", f.addr, err)
	}
	c.Close()
	return nil
}

func (f *execForward) Stop() {
	f.cmd.Process.Kill()
	<-f.exited
}

func orErr(s string, err error) string {
	if strings.TrimSpace(s) != "" {
		return s
	}
	return err.Error()
}
