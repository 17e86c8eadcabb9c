// Package kubepath checks the Kubernetes user's path through the Makefile
// and k8s/images.sh: kind and EKS must need only what a Kubernetes user has
// (docker, kind or the AWS CLI and Terraform, kubectl, Go), never the local
// runtime's tool bootstrap or Maven on the host. Nothing here runs a cluster:
// the Makefile's recipes are read with make -n, and the image script runs
// against fake docker and aws commands.
package kubepath

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"tracelab/internal/repotest"
)

// dryRun is make -n TARGET VARS... in the checkout, free of the RUNTIME and
// make flags of whoever runs the test. -B prints every recipe, built or
// not: what a run needs must not depend on what this checkout has built
// (make test builds the services' jars before this test runs).
func dryRun(t *testing.T, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	cmd := exec.Command("make", append([]string{"-n", "-B", "--no-print-directory"}, args...)...)
	cmd.Dir = repotest.Root(t)
	for _, e := range os.Environ() {
		k, _, _ := strings.Cut(e, "=")
		switch k {
		case "RUNTIME", "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "PLATFORM", "NODES", "KIND_REGISTRY_MIRROR", "KIND_PRELOAD":
			continue
		}
		cmd.Env = append(cmd.Env, e)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// What the local runtime's bootstrap runs, and a Kubernetes user may lack:
// the lab's tool builds (tools.sh: the collector, Jaeger, Prometheus,
// toxiproxy, process-compose, PostgreSQL, Kafka, the k8s check tools),
// Maven and a JDK on the host, and root's package manager.
var forbidden = regexp.MustCompile(`infra/local/tools\.sh|tools(-k8s)?\.env|\bmvn\b|find-jdk|apt-get|KUSTOMIZE_BIN|HCLFMT_BIN|python3`)

func TestScenarioOnKubernetesBuildsOnlyTracelab(t *testing.T) {
	local := dryRun(t, "scenario-nplus1")
	for _, want := range []string{"infra/local/tools.sh", "mvn"} {
		if !strings.Contains(local, want) {
			t.Fatalf("make -n scenario-nplus1 no longer shows %q on the local runtime; this test's list of forbidden commands is out of date:\n%s", want, local)
		}
	}
	for _, rt := range []string{"kind", "eks"} {
		out := dryRun(t, "RUNTIME="+rt, "scenario-nplus1")
		if m := forbidden.FindString(out); m != "" {
			t.Errorf("make -n RUNTIME=%s scenario-nplus1 runs %q, which a Kubernetes user need not have:\n%s", rt, m, out)
		}
		if !strings.Contains(out, "scenario run nplus1") {
			t.Errorf("make -n RUNTIME=%s scenario-nplus1 does not run the scenario:\n%s", rt, out)
		}
	}
}

func TestKindAndEKSTargetsNeedNoLabTools(t *testing.T) {
	for _, args := range [][]string{
		{"kind-up"},
		{"kind-up", "KIND_PRELOAD=1", "KIND_REGISTRY_MIRROR=https://mirror.gcr.io"},
		{"eks-up", "ADMIN_CIDR=203.0.113.7/32"},
		{"eks-deploy"},
		{"eks-down"},
	} {
		out := dryRun(t, args...)
		if m := forbidden.FindString(out); m != "" {
			t.Errorf("make -n %s runs %q, which a Kubernetes user need not have:\n%s", strings.Join(args, " "), m, out)
		}
		if strings.HasPrefix(args[0], "kind-up") || args[0] == "eks-deploy" {
			if !strings.Contains(out, "kubectl kustomize --load-restrictor LoadRestrictionsNone") {
				t.Errorf("make -n %s does not render with kubectl's kustomize:\n%s", strings.Join(args, " "), out)
			}
		}
	}
}

// The images are built for the nodes: this machine's architecture for kind,
// Terraform's node platform for EKS, PLATFORM over both.
func TestImagesPlatform(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"images"}, "platform=linux/"},
		{[]string{"images", "NODES=eks"}, "platform=$(terraform -chdir=infra/terraform output -raw node_platform)"},
		{[]string{"images", "NODES=eks", "PLATFORM=linux/arm64"}, "platform=linux/arm64;"},
	}
	for _, c := range cases {
		out := dryRun(t, c.args...)
		if !strings.Contains(out, c.want) || !strings.Contains(out, `k8s/images.sh build "$platform"`) {
			t.Errorf("make -n %s: want %q and k8s/images.sh build for it:\n%s", strings.Join(c.args, " "), c.want, out)
		}
	}
	if out := dryRun(t, "eks-up", "ADMIN_CIDR=203.0.113.7/32"); !strings.Contains(out, "NODES=eks") {
		t.Errorf("eks-up does not build the images for the EKS nodes:\n%s", out)
	}
}

const manifests = `apiVersion: apps/v1
kind: Deployment
spec:
  template:
    spec:
      initContainers:
        - image: curlimages/curl:8.11.1
      containers:
        - name: catalog
          image: tracelab/catalog:dev
        - name: sidecar
          image: "docker.io/grafana/tempo:2.8.2"
---
kind: StatefulSet
spec:
  template:
    spec:
      containers:
        - image: postgres:16.4
        - image: ghcr.io/shopify/toxiproxy:2.5.0
        - image: tracelab/pricing:dev
        - image: tracelab/pricing:dev
`

// images runs k8s/images.sh with args and the manifests above on stdin,
// with fake docker and aws commands first on the PATH, and tracelab built
// from this tree (the script reads and rewrites the manifests with it)
// unless fakes has a fake "tracelab".
func images(t *testing.T, fakes map[string]string, args ...string) (string, error) {
	t.Helper()
	bin := t.TempDir()
	for name, script := range fakes {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, fake := fakes["tracelab"]; !fake {
		build := exec.Command("go", "build", "-o", filepath.Join(bin, "tracelab"), ".")
		build.Dir = filepath.Join(repotest.Root(t), "tracelab")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building tracelab: %v\n%s", err, out)
		}
	}
	cmd := exec.Command(filepath.Join(repotest.Root(t), "k8s", "images.sh"), args...)
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "DOCKER=docker", "IMAGE_TAG=dev",
		"TRACELAB="+filepath.Join(bin, "tracelab"))
	cmd.Stdin = strings.NewReader(manifests)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), &exitError{err, stderr.String()}
	}
	return string(out), nil
}

type exitError struct {
	err    error
	stderr string
}

func (e *exitError) Error() string { return e.err.Error() + ": " + e.stderr }

// The preload list is every image the lab does not build, once each, from
// the manifests themselves.
func TestThirdPartyImages(t *testing.T) {
	out, err := images(t, nil, "third-party")
	if err != nil {
		t.Fatal(err)
	}
	want := "curlimages/curl:8.11.1\ndocker.io/grafana/tempo:2.8.2\nghcr.io/shopify/toxiproxy:2.5.0\npostgres:16.4\n"
	if out != want {
		t.Errorf("third-party:\n%s\nwant:\n%s", out, want)
	}
}

// kind: each build gets the tag of its image ID, so a rebuilt image is a
// changed Deployment and an unchanged one is not.
func TestPinBuildsForKind(t *testing.T) {
	docker := `[ "$1 $2" = "image inspect" ] && case "$5" in
  tracelab/catalog:dev) echo sha256:1111111111111111aaaa;;
  tracelab/pricing:dev) echo sha256:2222222222222222bbbb;;
  *) exit 1;;
esac
`
	out, err := images(t, map[string]string{"docker": docker}, "pin-builds")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"image: tracelab/catalog:id-111111111111\n", "- image: tracelab/pricing:id-222222222222\n", "- image: postgres:16.4\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("pin-builds: no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, ":dev") {
		t.Errorf("pin-builds left a :dev image:\n%s", out)
	}
	if _, err := images(t, map[string]string{"docker": "exit 1\n"}, "pin-builds"); err == nil || !strings.Contains(err.Error(), "run make images") {
		t.Errorf("an image never built: err = %v; want a pointer to make images", err)
	}
}

// EKS: each service at its digest in ECR; with the pull-through cache,
// Docker Hub images (official ones under library/) come from ECR, and other
// registries' stay as they are.
func TestPinForECR(t *testing.T) {
	aws := `case "$*" in
  *"--repository-name tracelab/catalog "*) echo sha256:c0ffee;;
  *"--repository-name tracelab/pricing "*) echo sha256:beef;;
  *) echo None;;
esac
`
	reg := "123456789012.dkr.ecr.eu-west-1.amazonaws.com"
	out, err := images(t, map[string]string{"aws": aws}, "pin-ecr", reg, "eu-west-1", "docker-hub")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"image: " + reg + "/tracelab/catalog@sha256:c0ffee\n",
		"- image: " + reg + "/tracelab/pricing@sha256:beef\n",
		"- image: " + reg + "/docker-hub/curlimages/curl:8.11.1\n",
		`image: "` + reg + `/docker-hub/grafana/tempo:2.8.2"` + "\n",
		"- image: " + reg + "/docker-hub/library/postgres:16.4\n",
		"- image: ghcr.io/shopify/toxiproxy:2.5.0\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("pin-ecr: no %q in\n%s", want, out)
		}
	}
	plain, err := images(t, map[string]string{"aws": aws}, "pin-ecr", reg, "eu-west-1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plain, "- image: postgres:16.4\n") || strings.Contains(plain, "docker-hub") {
		t.Errorf("pin-ecr without a cache prefix rewrote Docker Hub images:\n%s", plain)
	}
	_, err = images(t, map[string]string{"aws": "echo None\n"}, "pin-ecr", reg, "eu-west-1")
	if err == nil || !strings.Contains(err.Error(), "tracelab/catalog:dev is not in ECR") || !strings.Contains(err.Error(), "make eks-push") {
		t.Errorf("an image never pushed: err = %v; want it named, and make eks-push", err)
	}
}

// build: an image per service tracelab lists, with its framework's
// Dockerfile, and the load engine's, all for the platform given.
func TestBuildImagesForThePlatform(t *testing.T) {
	log := filepath.Join(t.TempDir(), "docker.log")
	fakes := map[string]string{
		"tracelab": `[ "$1" = services ] && printf 'catalog spring-boot 8080\npricing spring-boot 8081\n'` + "\n",
		"docker":   `echo "$*" >>` + log + "\n",
	}
	if _, err := images(t, fakes, "build", "linux/arm64"); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(log)
	builds := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(builds) != 3 {
		t.Fatalf("%d docker commands; want 3 builds:\n%s", len(builds), data)
	}
	for i, want := range []string{"SERVICE=catalog --build-arg PORT=8080", "SERVICE=pricing --build-arg PORT=8081", "-t tracelab/tracelab:dev"} {
		if !strings.HasPrefix(builds[i], "build --platform linux/arm64 ") || !strings.Contains(builds[i], want) {
			t.Errorf("docker %s\nwant build --platform linux/arm64 ... %s", builds[i], want)
		}
	}
	if !strings.Contains(builds[0], "/services/images/spring-boot.Dockerfile") || !strings.Contains(builds[0], "OTEL_JAVAAGENT_VERSION=") {
		t.Errorf("docker %s\nwant the framework's Dockerfile and the agent's version", builds[0])
	}
	_, err := images(t, fakes, "build", "$(terraform output)")
	if err == nil || !strings.Contains(err.Error(), "set PLATFORM=linux/amd64 or linux/arm64") {
		t.Errorf("an unknown platform: err = %v", err)
	}
}

// The Makefile's kind and ECR steps, as images.sh runs them against fake
// docker, kind and aws commands that log what they are asked.
func TestKindAndECRSteps(t *testing.T) {
	log := filepath.Join(t.TempDir(), "calls.log")
	logs := `echo "$(basename "$0") $*" >>` + log + "\n"
	fakes := map[string]string{
		"kind": logs,
		"aws": logs + `case "$*" in
  *describe-repositories*) echo "hub/library/postgres hub/curlimages/curl";;
  *get-login-password*) echo secret;;
esac
`,
		"docker": logs + `case "$1 $2" in
  "login --username") cat >/dev/null;;
  "image inspect") case "$3" in --format) echo sha256:0123456789abcdef;; postgres:16.4) exit 0;; *) exit 1;; esac;;
esac
`,
	}
	calls := func(args ...string) string {
		t.Helper()
		os.Remove(log)
		if _, err := images(t, fakes, args...); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		data, _ := os.ReadFile(log)
		return string(data)
	}
	want := func(got string, lines ...string) {
		t.Helper()
		for _, l := range lines {
			if !strings.Contains(got, l+"\n") {
				t.Errorf("no %q among the calls:\n%s", l, got)
			}
		}
	}
	want(calls("kind-load", "tracelab"),
		"docker tag tracelab/catalog:dev tracelab/catalog:id-0123456789ab",
		"kind load docker-image --name tracelab tracelab/catalog:id-0123456789ab",
		"kind load docker-image --name tracelab tracelab/pricing:id-0123456789ab")
	archive := filepath.Join(t.TempDir(), "state", "kind-images.tar")
	got := calls("kind-preload", "tracelab", "linux/amd64", archive)
	want(got, "docker pull --platform linux/amd64 curlimages/curl:8.11.1",
		"docker save --platform linux/amd64 -o "+archive+" curlimages/curl:8.11.1 docker.io/grafana/tempo:2.8.2 ghcr.io/shopify/toxiproxy:2.5.0 postgres:16.4",
		"kind load image-archive --name tracelab "+archive)
	if strings.Contains(got, "pull --platform linux/amd64 postgres:16.4") {
		t.Errorf("an image docker has was pulled again:\n%s", got)
	}
	reg := "123456789012.dkr.ecr.eu-west-1.amazonaws.com"
	want(calls("ecr-push", reg, "eu-west-1", "catalog", "tracelab"),
		"docker login --username AWS --password-stdin "+reg,
		"docker tag tracelab/catalog:dev "+reg+"/tracelab/catalog:dev",
		"docker push "+reg+"/tracelab/catalog:dev",
		"docker push "+reg+"/tracelab/tracelab:dev")
	want(calls("ecr-drop-cache", "eu-west-1", "hub"),
		"aws ecr delete-repository --region eu-west-1 --repository-name hub/library/postgres --force",
		"aws ecr delete-repository --region eu-west-1 --repository-name hub/curlimages/curl --force")
	if got := calls("ecr-drop-cache", "eu-west-1", ""); got != "" {
		t.Errorf("without a cache prefix (none was made): %s", got)
	}
}
