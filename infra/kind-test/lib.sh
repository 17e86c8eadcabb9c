# Shared by the scripts of infra/kind-test (sourced, not run).
# shellcheck shell=bash
DOCKER=${DOCKER:-docker}

say() { printf '\033[1m==>\033[0m %s\n' "$*" >&2; }
die() { printf '%s: %s\n' "$(basename "$0")" "$*" >&2; exit 1; }
have_image() { "$DOCKER" image inspect "$1" >/dev/null 2>&1; }

# rootfs IMAGE PACKAGES: a Debian bookworm root with PACKAGES (comma
# separated), made by mmdebstrap from the apt mirror and imported as IMAGE,
# unless IMAGE is there already. No registry is involved.
rootfs() {
  have_image "$1" && return
  say "building $1 from Debian's mirror (mmdebstrap, about 2 minutes)"
  mmdebstrap --quiet --variant=minbase --include="$2" bookworm - | "$DOCKER" import - "$1" >/dev/null
}

# content_key FILE...: a short hash of files and strings, for image tags that
# change when what an image is built from does.
content_key() { cat "$@" | sha256sum | cut -c1-12; }

# The slim Debian root the images of the test harness build on, built once
# per package list; prints its name. kube-proxy programs iptables, the
# local-path helper runs sh, mkdir and rm; the rest need CA certificates.
SLIM_PACKAGES=ca-certificates,iptables,conntrack
slim_image() {
  local image
  image=tracelab-kind/debian-slim:bookworm-$(content_key <<<"$SLIM_PACKAGES")
  rootfs "$image" "$SLIM_PACKAGES"
  echo "$image"
}

# debian_image NAME PACKAGES: like slim_image, for an image that needs
# Debian packages the slim root lacks (curl, PostgreSQL's client programs);
# its own mmdebstrap root, since containers here cannot run apt-get. Prints
# its name.
debian_image() {
  local image
  image=tracelab-kind/debian-$1:bookworm-$(content_key <<<"$2")
  rootfs "$image" "$2"
  echo "$image"
}

# image_size IMAGE: its size as docker images shows it (MB).
image_size() { "$DOCKER" image inspect --format '{{.Size}}' "$1" | awk '{printf "%d MB", $1 / 1000000}'; }

# docker_build ARGS...: docker build (with DOCKER_BUILD_FLAGS, as make
# images), silent unless it fails; then the end of its output, which names
# the failing step (the CLI's notice that the classic builder is deprecated
# would otherwise come with every build).
docker_build() {
  local out
  # shellcheck disable=SC2086 # a list of flags
  out=$("$DOCKER" build ${DOCKER_BUILD_FLAGS:-} "$@" 2>&1) || { printf '%s\n' "$out" | tail -n 30 >&2; return 1; }
}

# k8s_images: every image that the manifests on stdin name, once each (as
# k8s/images.sh reads them).
k8s_images() { sed -nE 's/^[[:space:]]*(- )?image:[[:space:]]*"?([^"[:space:]]+)"?[[:space:]]*$/\2/p' | sort -u; }
