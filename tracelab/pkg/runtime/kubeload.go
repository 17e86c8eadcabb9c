package runtime

// KubeContext is the kubectl context the runtime drives. The scenario runner
// starts its in-cluster k6 Jobs (tracelab/pkg/k6) in the same one.
func (k *Kube) KubeContext() string { return k.context }
