package runtime

import (
	"tracelab/pkg/load"
	"tracelab/pkg/loadjob"
)

// LoadDriver runs the load in the cluster, as a Job in the runtime's own
// context and namespace, so that a Kubernetes user needs nothing but
// kubectl and the load reaches the entrypoint as an in-cluster client.
// Each call gives a driver that reads the CronJob and its definitions anew.
func (k *Kube) LoadDriver() load.Driver {
	return &loadjob.Job{Context: k.context, Namespace: k.namespace, Ports: k.ports, Kubectl: loadjob.ExecKubectl{}}
}

// LoadDriver runs the load in this process, beside the local stack.
func (l *Local) LoadDriver() load.Driver { return load.Local{} }
