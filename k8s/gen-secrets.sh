#!/usr/bin/env bash
# Writes the lab's Kubernetes secrets, once: a random password per file in
# k8s/base/secrets/ (git-ignored), which kustomize's secretGenerator turns into
# Secrets. No password is ever committed; delete a file to get a new one
# (k8s/README.md, "Rotating a password").
set -euo pipefail
dir=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/base/secrets}
mkdir -p "$dir"
random() { od -An -N24 -tx1 /dev/urandom | tr -d ' \n'; }
write() { # FILE KEY
  local file=$dir/$1
  [ -s "$file" ] && return
  umask 077
  printf '%s=%s\n' "$2" "$(random)" >"$file.tmp" && mv "$file.tmp" "$file"
  echo "gen-secrets: wrote a random $2 to ${file#"$PWD"/}"
}
write postgres.env POSTGRES_PASSWORD
write grafana.env GF_SECURITY_ADMIN_PASSWORD
