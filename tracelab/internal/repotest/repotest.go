// Package repotest holds what the lab's tests share: where the checkout is,
// wherever `go test` runs them from, a copy of it to break, and free ports.
package repotest

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Root is the checkout's top folder: the one holding tracelab/.
func Root(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("repotest: cannot locate its own source")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// LabCopy copies what the Kubernetes manifests and their checks read into a
// temporary folder, so that a test can break a file without touching the
// checkout. The copy's k8s/gen-secrets.sh writes its Secrets' inputs, as
// make kind-up does, so the copy has every file kustomize expects and none
// of the checkout's passwords.
func LabCopy(t testing.TB) string {
	t.Helper()
	src, dst := Root(t), t.TempDir()
	for _, dir := range []string{"k8s", "infra", "services", "scenarios", "dashboards", "loadtests"} {
		err := filepath.WalkDir(filepath.Join(src, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, path)
			if d.IsDir() {
				if d.Name() == "target" || d.Name() == ".terraform" || rel == filepath.Join("k8s", "base", "secrets") {
					return filepath.SkipDir
				}
				return os.MkdirAll(filepath.Join(dst, rel), 0o755)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// The load's image recipe, which the cross-checks compare with its
	// CronJob; the rest of tracelab/ is code, not something deployed.
	recipe := filepath.Join("tracelab", "Dockerfile")
	data, err := os.ReadFile(filepath.Join(src, recipe))
	if err == nil {
		err = os.MkdirAll(filepath.Join(dst, "tracelab"), 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dst, recipe), data, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	gen := exec.Command("bash", filepath.Join(dst, "k8s", "gen-secrets.sh"), filepath.Join(dst, "k8s", "base", "secrets"))
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("k8s/gen-secrets.sh: %v: %s", err, out)
	}
	return dst
}
