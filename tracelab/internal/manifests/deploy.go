package manifests

import (
	"fmt"
	"strings"
	"time"

	"tracelab/internal/kubecluster"
)

// Deploy renders an overlay of the lab checked out at root, server-side
// applies it to a test cluster as make kind-up and make eks-deploy apply it
// to theirs, and waits until every Deployment and StatefulSet has rolled out
// on the cluster's fake nodes. It returns the rendered objects.
func Deploy(c *kubecluster.Cluster, root, overlay string) ([]Object, error) {
	rendered, objs, err := Render(c.Tools.Kustomize, root, overlay)
	if err != nil {
		return nil, err
	}
	if pvs := claimVolumes(objs); pvs != "" {
		if _, err := c.TryApply(pvs); err != nil {
			return nil, fmt.Errorf("the test's PersistentVolumes: %v", err)
		}
	}
	if _, err := c.TryApply(string(rendered)); err != nil {
		return nil, fmt.Errorf("k8s/overlays/%s: %v", overlay, err)
	}
	for _, o := range objs {
		if o.Kind() != "Deployment" && o.Kind() != "StatefulSet" {
			continue
		}
		ns := str(get(o, "metadata", "namespace"))
		_, err := c.TryKubectl("", "-n", ns, "rollout", "status", o.ID(), "--timeout="+rolloutTimeout.String())
		if err != nil {
			// The pods' phases and the namespace's warnings say why (a claim
			// without a volume, a pod the admission refused, no node that fits).
			pods, _ := c.TryKubectl("", "-n", ns, "get", "pods,persistentvolumeclaims")
			events, _ := c.TryKubectl("", "-n", ns, "get", "events", "--field-selector", "type=Warning")
			return nil, fmt.Errorf("k8s/overlays/%s: %s did not roll out: %v\n%s\n%s", overlay, o.ID(), err, pods, events)
		}
	}
	return objs, nil
}

// rolloutTimeout bounds one workload's rollout on fake nodes, where no image
// is pulled and no container starts: seconds, unless a pod cannot be
// created or scheduled at all.
const rolloutTimeout = 90 * time.Second

// claimVolumes returns a PersistentVolume for each claim the StatefulSets'
// volumeClaimTemplates will make, bound ahead to it by claimRef. The test
// cluster has no storage provisioner (kind's local-path and EKS's EBS CSI
// driver run on their nodes, which kwok does not have), so without these a
// StatefulSet's pods would wait for their volumes forever. The volumes take
// the claim's storage class, so the eks overlay's WaitForFirstConsumer gp3
// class goes through the scheduler's volume binding as on EKS. Their
// hostPath is never mounted: kwok runs no containers.
func claimVolumes(objs []Object) string {
	var b strings.Builder
	for _, o := range objs {
		if o.Kind() != "StatefulSet" {
			continue
		}
		replicas := 1
		if r, ok := get(o, "spec", "replicas").(int); ok {
			replicas = r
		}
		for _, t := range list(get(o, "spec", "volumeClaimTemplates")) {
			tmpl, _ := t.(map[string]any)
			for i := range replicas {
				claim := fmt.Sprintf("%s-%s-%d", str(get(tmpl, "metadata", "name")), o.Name(), i)
				modes := []string{}
				for _, m := range list(get(tmpl, "spec", "accessModes")) {
					modes = append(modes, str(m))
				}
				fmt.Fprintf(&b, `---
apiVersion: v1
kind: PersistentVolume
metadata: {name: test-%[1]s-%[2]s}
spec:
  capacity: {storage: %[3]s}
  accessModes: [%[4]s]
  storageClassName: %[5]q
  persistentVolumeReclaimPolicy: Retain
  claimRef: {namespace: %[2]s, name: %[1]s}
  hostPath: {path: /nonexistent/%[1]s}
`, claim, str(get(o, "metadata", "namespace")), str(get(tmpl, "spec", "resources", "requests", "storage")),
					strings.Join(modes, ", "), str(get(tmpl, "spec", "storageClassName")))
			}
		}
	}
	return b.String()
}
