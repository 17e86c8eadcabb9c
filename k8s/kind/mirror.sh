#!/usr/bin/env bash
# k8s/kind/mirror.sh CLUSTER [MIRROR]: points each node's containerd of the
# kind cluster at a Docker Hub mirror (MIRROR, e.g. https://mirror.gcr.io),
# or, without MIRROR, stops pointing it anywhere. It writes the hosts.toml of
# the config_path that cluster.yaml enables; containerd reads it at every
# pull, so neither a restart nor a new cluster is needed.
set -euo pipefail
shopt -s inherit_errexit
cluster=${1:?usage: k8s/kind/mirror.sh CLUSTER [MIRROR]} mirror=${2:-}
DOCKER=${DOCKER:-docker}
for node in $(kind get nodes --name "$cluster"); do
	if [[ -n $mirror ]]; then
		echo "==> $node: pulls from Docker Hub go through $mirror"
		printf 'server = "https://registry-1.docker.io"\n\n[host."%s"]\n  capabilities = ["pull", "resolve"]\n' "$mirror" |
			"$DOCKER" exec -i "$node" sh -c 'mkdir -p /etc/containerd/certs.d/docker.io && cat >/etc/containerd/certs.d/docker.io/hosts.toml'
	else
		"$DOCKER" exec "$node" rm -f /etc/containerd/certs.d/docker.io/hosts.toml
	fi
done
