package manifests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tracelab/internal/kubecluster"
	"tracelab/internal/labtest"
	"tracelab/internal/repotest"
)

// PostgreSQL's set-password initContainer must look where the postgres
// container keeps its data, or a rotated Secret silently never reaches the
// volume.
func TestPostgresPasswordInitContainerSeesTheDatabase(t *testing.T) {
	kustomize := kubecluster.ToolsForTest(t).Kustomize
	cases := []struct{ name, old, new, want string }{
		{"another PGDATA", "            - name: PGDATA\n              value: /var/lib/postgresql/data/pgdata\n          resources:\n            requests: {cpu: 100m, memory: 128Mi}",
			"            - name: PGDATA\n              value: /var/lib/postgresql/pgdata\n          resources:\n            requests: {cpu: 100m, memory: 128Mi}",
			"statefulset/postgres/set-password: PGDATA must be the postgres container's"},
		{"no initContainer", "      initContainers:\n        # The image", "      x-initContainers:\n        # The image",
			"statefulset/postgres: needs the initContainer set-password"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := repotest.LabCopy(t)
			path := filepath.Join(root, "k8s", "base", "data", "postgres.yaml")
			data, _ := os.ReadFile(path)
			if !strings.Contains(string(data), tc.old) {
				t.Fatalf("postgres.yaml no longer holds %q; update this test", tc.old)
			}
			os.WriteFile(path, []byte(strings.Replace(string(data), tc.old, tc.new, 1)), 0o644)
			_, objs, err := Render(kustomize, root, "kind")
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(CrossCheck(labtest.Open(t, root), "kind", objs), "\n")
			if !strings.Contains(got, tc.want) {
				t.Errorf("want %q among:\n%s", tc.want, got)
			}
		})
	}
}
