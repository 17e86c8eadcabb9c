package manifests

import (
	"fmt"
	"regexp"
	"strings"
)

// ReadOnlyRootExceptions are the containers allowed a writable root
// filesystem ("read-only where possible"), each with the reason.
var ReadOnlyRootExceptions = map[string]string{
	"statefulset/kafka/kafka": "the apache/kafka image writes the server.properties it generates into /opt/kafka/config at every start",
}

// secretName matches environment variables that hold credentials.
var secretName = regexp.MustCompile(`(?i)(PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|CREDENTIAL)`)

// Policy returns one line per breach of the lab's own rules for every
// workload, those no API server enforces: a read-only root filesystem unless
// listed in ReadOnlyRootExceptions, CPU and memory requests and limits,
// images pinned to a version, no credential as a literal in the
// environment or a Secret, and no service links. The restricted Pod
// Security Standard (non-root, no privilege escalation, all capabilities
// dropped, seccomp, no host namespaces or paths) is not repeated here: the namespace's labels
// (k8s/base/namespace.yaml) have the API server enforce it, and make
// test-k8s deploys every overlay on one (deploy.go).
func Policy(objs []Object) []string {
	var out []string
	bad := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	for _, o := range objs {
		spec := o.PodSpec()
		if spec == nil {
			if o.Kind() == "Secret" && o["stringData"] != nil {
				bad("%s: stringData holds plaintext; generate the Secret (k8s/gen-secrets.sh)", o.ID())
			}
			continue
		}
		id := o.ID()
		// Service links put <SERVICE>_PORT=tcp://… and the like into every
		// container, and images that read their settings from the
		// environment take them for their own: apache/kafka writes every
		// KAFKA_* variable into server.properties, so the Service kafka
		// turns into KAFKA_PORT=tcp://… there. The lab's pods find each
		// other by DNS and read their ports from lab-ports.
		if spec["enableServiceLinks"] != false {
			bad("%s: enableServiceLinks must be false", id)
		}
		for _, c := range Containers(spec) {
			cid := id + "/" + str(c["name"])
			sc, _ := c["securityContext"].(map[string]any)
			if _, excepted := ReadOnlyRootExceptions[cid]; !excepted && sc["readOnlyRootFilesystem"] != true {
				bad("%s: readOnlyRootFilesystem must be true (or an exception with its reason in policy.go)", cid)
			}
			res, _ := c["resources"].(map[string]any)
			for _, kind := range []string{"requests", "limits"} {
				m, _ := res[kind].(map[string]any)
				for _, r := range []string{"cpu", "memory"} {
					if str(m[r]) == "" {
						bad("%s: resources.%s.%s is missing", cid, kind, r)
					}
				}
			}
			for _, e := range list(c["env"]) {
				m, _ := e.(map[string]any)
				if secretName.MatchString(str(m["name"])) && str(m["value"]) != "" {
					bad("%s: %s is a literal value; take it from a Secret (secretKeyRef)", cid, str(m["name"]))
				}
			}
			if img := str(c["image"]); !pinned(img) {
				bad("%s: image %q is not pinned to a version tag", cid, img)
			}
		}
	}
	return out
}

// pinned tells whether an image reference names a version: a digest, or a
// tag other than latest.
func pinned(image string) bool {
	if strings.Contains(image, "@sha256:") {
		return true
	}
	name := image[strings.LastIndexByte(image, '/')+1:]
	_, tag, ok := strings.Cut(name, ":")
	return ok && tag != "" && tag != "latest"
}
