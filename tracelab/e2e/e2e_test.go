//go:build e2e

// Package e2e runs the tracelab binary against the real local stack:
// collector, Jaeger, Prometheus and the services as plain processes.
// Run with `make test-e2e` (it builds the binary and the tools first).
package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"tracelab/internal/labtest"
	"tracelab/pkg/lab"
	"tracelab/pkg/result"
	"tracelab/pkg/scenario"
)

func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func bin(t *testing.T) string {
	t.Helper()
	b := os.Getenv("TRACELAB_BIN")
	if b == "" {
		t.Fatal("TRACELAB_BIN is not set; run through 'make test-e2e'")
	}
	return b
}

type run struct {
	code           int
	stdout, stderr string
}

func tracelab(t *testing.T, env []string, args ...string) run {
	t.Helper()
	return tracelabWithInput(t, "", env, args...)
}

// tracelabWithInput runs tracelab with stdin as its standard input, for
// the commands that ask questions (train).
func tracelabWithInput(t *testing.T, stdin string, env []string, args ...string) run {
	t.Helper()
	cmd := exec.Command(bin(t), args...)
	cmd.Dir = root(t)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := run{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("tracelab %v: %v", args, err)
	}
	return r
}

// checkout is the lab's checkout, read as the commands read it.
func checkout(t *testing.T) *lab.Checkout { return labtest.Open(t, root(t)) }

// labPorts are every port of infra/local/ports.env.
func labPorts(t *testing.T) map[string]string { return checkout(t).Ports }

// assertNothingLeft proves no lab process survived: every lab port can be
// bound again and process-compose's pid file is gone.
func assertNothingLeft(t *testing.T) {
	t.Helper()
	for name, port := range labPorts(t) {
		var err error
		for i := 0; i < 50; i++ { // a port closes a moment after its process exits
			var ln net.Listener
			if ln, err = net.Listen("tcp", "127.0.0.1:"+port); err == nil {
				ln.Close()
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			t.Errorf("port %s (%s) still in use after the lab stopped", port, name)
		}
	}
	if _, err := os.Stat(filepath.Join(root(t), ".state", "process-compose.pid")); err == nil {
		t.Errorf("process-compose.pid still present")
	}
}

func TestUnknownScenario(t *testing.T) {
	r := tracelab(t, nil, "scenario", "run", "no-such-thing")
	if r.code != 2 || !strings.Contains(r.stderr, "known scenarios: ") || !strings.Contains(r.stderr, "nplus1") {
		t.Fatalf("want exit 2 listing the known scenarios, got %d: %q", r.code, r.stderr)
	}
	if n := strings.Count(strings.TrimSpace(r.stderr), "\n"); n != 0 {
		t.Errorf("want a one-line error, got %d lines", n+1)
	}
}

func TestMalformedScenarioNamesTheField(t *testing.T) {
	tmp := t.TempDir()
	src, err := os.ReadFile(filepath.Join(root(t), "scenarios", "nplus1", "scenario.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(src), "min: 25", "min: lots", 1)
	dir := filepath.Join(tmp, "scenarios", "nplus1")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "scenario.yaml"), []byte(bad), 0o644)
	// A checkout is known by its ports.env (pkg/lab).
	ports, err := os.ReadFile(filepath.Join(root(t), "infra", "local", "ports.env"))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(tmp, "infra", "local"), 0o755)
	os.WriteFile(filepath.Join(tmp, "infra", "local", "ports.env"), ports, 0o644)
	r := tracelab(t, []string{"TRACELAB_ROOT=" + tmp}, "scenario", "run", "nplus1")
	if r.code != 2 || !strings.Contains(r.stderr, "expectations.ratios.0.min") {
		t.Fatalf("want exit 2 naming expectations.ratios.0.min, got %d: %q", r.code, r.stderr)
	}
}

// A clone whose tools were never installed is told how to install them.
func TestMissingToolsSayWhatToRun(t *testing.T) {
	tmp := t.TempDir()
	// The scenario, and the descriptions its validation reads.
	for _, f := range []string{"scenarios/nplus1/scenario.yaml", "loadtests/nplus1.yaml", "infra/local/ports.env",
		"infra/components.yaml", "services/pricing/service.yaml", "services/catalog/service.yaml"} {
		data, err := os.ReadFile(filepath.Join(root(t), f))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(tmp, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(tmp, f), data, 0o644)
	}
	r := tracelab(t, []string{"TRACELAB_ROOT=" + tmp}, "scenario", "run", "nplus1")
	if r.code != 3 || !strings.Contains(r.stderr, "run 'make tools'") {
		t.Fatalf("want exit 3 telling to run 'make tools', got %d: %q", r.code, r.stderr)
	}
}

func TestPortTakenIsNamedAndNothingStarts(t *testing.T) {
	port := labPorts(t)["JAEGER_QUERY_PORT"]
	ln, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Skipf("port %s is busy already: %v", port, err)
	}
	r := tracelab(t, nil, "up")
	ln.Close()
	if r.code != 3 || !strings.Contains(r.stderr, "port "+port) || !strings.Contains(r.stderr, "JAEGER_QUERY_PORT") {
		t.Fatalf("want exit 3 naming port %s, got %d: %q", port, r.code, r.stderr)
	}
	assertNothingLeft(t)
}

// TestInterruptLeavesNothingRunning sends Ctrl-C's signal while the stack
// is starting and checks that tracelab stops everything it started.
func TestInterruptLeavesNothingRunning(t *testing.T) {
	cmd := exec.Command(bin(t), "scenario", "run", "nplus1", "--profile", "smoke", "--variant", "baseline")
	cmd.Dir = root(t)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once process-compose has started processes.
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "started process-compose") {
			break
		}
	}
	time.Sleep(3 * time.Second) // let some processes come up: the point is to catch them mid-start
	cmd.Process.Signal(syscall.SIGINT)
	go func() {
		for sc.Scan() {
		}
	}()
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("want exit 130 after SIGINT, got %v", err)
	}
	assertNothingLeft(t)
}

// runSmoke runs a scenario's smoke profile and returns its result file.
// While the run's stack is still up it proves the scenario's dashboards
// against it (dashboards_test.go), and it checks the HTML report in
// headless Chromium (report_test.go): no second stack start is needed.
// Every check of the verdict must hold.
func runSmoke(t *testing.T, name string) result.Result {
	t.Helper()
	r := tracelab(t, nil, "scenario", "run", name, "--profile", "smoke", "--keep")
	defer func() {
		if d := tracelab(t, nil, "down"); d.code != 0 {
			t.Errorf("tracelab down exited %d: %s", d.code, d.stderr)
		}
	}()
	t.Log(r.stdout)
	// Exit 1 is a verdict that failed; the checks are judged below.
	if r.code != 0 && r.code != 1 {
		t.Fatalf("scenario run %s exited %d: %s", name, r.code, r.stderr)
	}
	var path string
	for _, line := range strings.Split(r.stdout, "\n") {
		if p, ok := strings.CutPrefix(line, "result: "); ok {
			path = p
		}
	}
	read, err := result.Read(path)
	if err != nil {
		t.Fatalf("result file: %v", err)
	}
	res := *read
	for _, c := range res.Checks {
		if !c.OK {
			t.Errorf("check failed: %s — %s", c.Name, c.Detail)
		}
	}
	if r.code != 0 {
		t.Errorf("verdict %q", res.Verdict)
	}
	checkCPUAndIntervals(t, name, res)
	checkJoin(t, res)
	t.Run("dashboards", func(t *testing.T) { checkDashboards(t, name, res) })
	t.Run("report-in-chromium", func(t *testing.T) { checkReportInChromium(t, filepath.Join(filepath.Dir(path), "report.html"), res) })
	for _, check := range slices.Sorted(maps.Keys(whileStackUp[name])) {
		t.Run(check, func(t *testing.T) { whileStackUp[name][check](t, res) })
	}
	return res
}

// checkCPUAndIntervals: every variant's result says what CPU the
// entrypoint's service used and whether it was on-CPU, and every ratio
// check carries its interval.
func checkCPUAndIntervals(t *testing.T, name string, res result.Result) {
	t.Helper()
	s, err := scenario.Load(checkout(t), name)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range res.Variants {
		u, ok := v.CPU[s.Entrypoint.Service]
		if !ok || u.Cores <= 0 || u.MsPerRequest <= 0 || v.Metrics["cpu_ms_per_request"] != u.MsPerRequest {
			t.Errorf("%s: CPU of %s %+v (present %v), metric %v; want positive, and the metric the same", v.Variant, s.Entrypoint.Service, u, ok, v.Metrics["cpu_ms_per_request"])
		}
		switch v.Bound {
		case "on-CPU", "off-CPU":
		case "contended": // the other programs took the CPU it might have used: a busy runner
			t.Logf("%s: bound %q (%+v)", v.Variant, v.Bound, u)
		default:
			t.Errorf("%s: bound %q", v.Variant, v.Bound)
		}
	}
	for _, c := range res.Checks {
		if !strings.Contains(c.Name, "95% interval") {
			continue
		}
		if c.Ratio == nil || !(c.Ratio.Low <= c.Ratio.Value && c.Ratio.Value <= c.Ratio.High) {
			t.Errorf("%s: ratio %+v; want value within [low, high]", c.Name, c.Ratio)
		}
	}
}

// checkJoin: every request the load got an answer to is joined to its
// trace by the trace id it sent.
func checkJoin(t *testing.T, res result.Result) {
	t.Helper()
	for _, v := range res.Variants {
		answered, joined := 0, 0
		for _, rq := range v.Requests {
			if rq.Status != 0 {
				answered++
			}
			if rq.ServerMs != nil {
				joined++
			}
		}
		if answered == 0 || joined != answered {
			t.Errorf("%s: %d of %d answered requests joined to their traces", v.Variant, joined, answered)
		}
	}
}

// TestNplus1Smoke is the scenario's smoke profile on the real stack: the
// baseline must show the N+1, the fix must not, and the verdict must pass.
func TestNplus1Smoke(t *testing.T) {
	res := runSmoke(t, "nplus1")
	items := 200 // PRICING_ITEM_COUNT of the smoke profile
	for _, v := range res.Variants {
		var nplus1 []string
		for _, f := range v.Analysis.Findings {
			if f.Detector == "n-plus-one" {
				nplus1 = append(nplus1, fmt.Sprintf("%.0f calls, %.2f of parent", f.CallsPerTrace, f.ShareOfParent))
				if v.Variant == "baseline" && (f.CallsPerTrace != float64(items) || f.ShareOfParent < 0.9) {
					t.Errorf("baseline finding: %s; want %d calls and ≥ 0.9 of the parent", nplus1[len(nplus1)-1], items)
				}
			}
		}
		switch v.Variant {
		case "baseline":
			if len(nplus1) == 0 {
				t.Error("baseline: no n-plus-one finding")
			}
		case "fixed":
			if len(nplus1) != 0 {
				t.Errorf("fixed: unexpected n-plus-one finding: %v", nplus1)
			}
			if got := v.Metrics["calls_per_request"]; got != 2 {
				t.Errorf("fixed: %v calls per request, want 2 (list + batch)", got)
			}
		}
	}
	assertNothingLeft(t)
}

// describeProbe is what a failed check of a capacity probe prints: its
// figures, its bound and its JIT compiler's share of a CPU while it
// measured, so a reader can tell a busy machine or a compiling JVM from a
// regression.
func describeProbe(p result.Capacity, service string) string {
	jit := "unread"
	if p.JITCores != nil {
		jit = fmt.Sprintf("%.3f", *p.JITCores)
	}
	return fmt.Sprintf("%s: %.0f req/s, %s %+v, jit_cores %s after %.0f s settling", p.Variant, p.ThroughputRPS, p.Bound, p.CPU[service], jit, p.SettleS)
}

// loadAverage is the machine's 1, 5 and 15-minute load averages.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unread"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unread"
	}
	return strings.Join(f[:3], " ")
}
