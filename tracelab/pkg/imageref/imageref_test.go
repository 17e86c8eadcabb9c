package imageref

import (
	"bytes"
	"strings"
	"testing"
)

const manifests = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: catalog
spec:
  template:
    spec:
      initContainers:
      - name: wait
        image: "busybox:1.36"
      containers:
      - name: catalog
        image: tracelab/catalog:dev
        env:
        - name: image
          value: tracelab/catalog:dev
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: notes
data:
  image: tracelab/pricing:dev
  text: |
    image: tracelab/catalog:dev
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: postgres
spec:
  template:
    spec:
      containers:
      - name: postgres
        image: postgres:16.4
      - name: sidecar
        image: busybox:1.36
`

func TestListFindsEveryImageOnce(t *testing.T) {
	got, err := List(strings.NewReader(manifests))
	if err != nil {
		t.Fatal(err)
	}
	// The ConfigMap's "image" key is data, but a string under an image key
	// all the same: as k8s/images.sh's sed found it, so does List.
	want := "busybox:1.36 postgres:16.4 tracelab/catalog:dev tracelab/pricing:dev"
	if strings.Join(got, " ") != want {
		t.Errorf("got %v\nwant %s", got, want)
	}
}

func TestSetRewritesImagesOnly(t *testing.T) {
	var out bytes.Buffer
	err := Set(strings.NewReader(manifests), &out, map[string]string{
		"tracelab/catalog:dev": "tracelab/catalog:id-0123456789ab",
		"busybox:1.36":         "123.dkr.ecr.eu-west-1.amazonaws.com/hub/library/busybox:1.36",
	})
	if err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"image: tracelab/catalog:id-0123456789ab",
		"image: \"123.dkr.ecr.eu-west-1.amazonaws.com/hub/library/busybox:1.36\"",
		"image: 123.dkr.ecr.eu-west-1.amazonaws.com/hub/library/busybox:1.36",
		"image: postgres:16.4",
		// an env value and a block of text are not image references
		"value: tracelab/catalog:dev",
		"  image: tracelab/catalog:dev\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}
	if n := strings.Count(s, "\n---\n"); n != 2 {
		t.Errorf("%d document separators; want 2", n)
	}
	again, err := List(strings.NewReader(s))
	if err != nil || strings.Join(again, " ") != "123.dkr.ecr.eu-west-1.amazonaws.com/hub/library/busybox:1.36 postgres:16.4 tracelab/catalog:id-0123456789ab tracelab/pricing:dev" {
		t.Errorf("after Set: %v, %v", again, err)
	}
}

func TestBadYAMLNamesTheDocument(t *testing.T) {
	_, err := List(strings.NewReader("a: 1\n---\nb: [\n"))
	if err == nil || !strings.Contains(err.Error(), "manifest document 2") {
		t.Errorf("got %v", err)
	}
}
