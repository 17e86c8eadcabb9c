#!/usr/bin/env bash
# Builds the kind node image of make test-kind from the registries alone
# (infra/kind-test/README.md), into the Docker that DOCKER_HOST names, and
# prints its name. Nothing is pulled: no image registry is reachable here.
#
#   1. Two Debian bookworm roots from the apt mirror (mmdebstrap): a slim one
#      for the component images, and the node's, with what kind's own base
#      image installs (images/base/Dockerfile of kind's module) plus Debian's
#      containerd, runc and CNI plugins in place of the ones kind builds.
#   2. The images kubeadm expects (`kubeadm config images list`), each the
#      slim root plus the program infra/local/tools.sh kind built, tagged
#      with the name kubeadm asks for; and the local-path provisioner of
#      kind's default storage class, under a name of the lab's own.
#   3. The node: kind's base files from its module, kubelet, kubeadm and
#      kubectl, the images imported into the node's containerd, then
#      committed as kind's own build does (pkg/build/nodeimage).
#
# Cached by name: the image's tag carries a hash of everything it is built
# from, so a changed pin or script builds a new one and an unchanged one is
# only checked.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/.state/tools-k8s.env"
. "$root/.state/tools-kind.env"
. "$root/infra/local/versions.env"
. "$here/lib.sh"

# What kind's base image installs, and what kind builds that Debian ships.
NODE_PACKAGES=systemd,dbus,conntrack,iptables,nftables,iproute2,ethtool,util-linux,mount,kmod,libseccomp2,pigz,e2fsprogs,bash,ca-certificates,curl,jq,procps,socat,containerd,runc,containernetworking-plugins

key=$(content_key "$0" "$here/lib.sh" "$root/infra/local/versions.env" <(echo "$NODE_PACKAGES $SLIM_PACKAGES"))
node_root=tracelab-kind/node-root:bookworm-$(content_key <<<"$NODE_PACKAGES")
node=tracelab-kind/node:$KUBERNETES_VERSION-$key
if have_image "$node"; then say "kind node image $node (cached)"; echo "$node"; exit 0; fi

slim=$(slim_image)
rootfs "$node_root" "$NODE_PACKAGES"

ctx=$(mktemp -d)
build=
cleanup() { rm -rf "$ctx"; if [ -n "$build" ]; then "$DOCKER" rm -f -v "$build" >/dev/null 2>&1 || true; fi; }
trap cleanup EXIT

# component IMAGE BINARY ENTRYPOINT: the slim root plus one program.
component() {
  local dir=$ctx/${1//[\/:]/_}
  mkdir -p "$dir"; cp "$2" "$dir/$3"
  printf 'FROM %s\nCOPY %s /usr/local/bin/%s\nENTRYPOINT ["/usr/local/bin/%s"]\n' "$slim" "$3" "$3" "$3" >"$dir/Dockerfile"
  "$DOCKER" build -q -t "$1" "$dir" >/dev/null
  images+=("$1")
}

images=()
sandbox=$(sed -n 's/^[[:space:]]*sandbox_image = "\(.*\)"/\1/p' "$KIND_SRC/images/base/files/etc/containerd/config.toml")
[ -n "$sandbox" ] || die "kind $KIND_VERSION's containerd config names no sandbox_image; node-image.sh needs updating"
say "component images for Kubernetes $KUBERNETES_VERSION"
for image in $("$KUBERNETES_BIN_DIR/kubeadm" config images list --kubernetes-version "$KUBERNETES_VERSION") "$sandbox"; do
  name=${image##*/}
  case $name in
    kube-*:"$KUBERNETES_VERSION") component "$image" "$KUBERNETES_BIN_DIR/${name%%:*}" "${name%%:*}" ;;
    etcd:"${ETCD_VERSION#v}"-*) component "$image" "$ETCD_BIN" etcd ;;
    coredns:"$COREDNS_VERSION") component "$image" "$COREDNS_BIN" coredns ;;
    pause:*) component "$image" "$PAUSE_BIN" pause ;;
    *) die "kubeadm expects $image, which versions.env does not pin (ETCD_VERSION $ETCD_VERSION, COREDNS_VERSION $COREDNS_VERSION)" ;;
  esac
done
provisioner=tracelab-kind/local-path-provisioner:$LOCAL_PATH_PROVISIONER_VERSION
helper=tracelab-kind/local-path-helper:bookworm-$key
component "$provisioner" "$LOCAL_PATH_PROVISIONER_BIN" local-path-provisioner
"$DOCKER" tag "$slim" "$helper"; images+=("$helper")

# kind's default storage class, from its own manifest (const_storage.go),
# with the two images above.
sed -n '/^const defaultStorageManifest = `$/,/^`$/p' "$KIND_SRC/pkg/build/nodeimage/const_storage.go" | sed '1d;$d' |
  sed -e "s#\` + storageProvisionerImage + \`#$provisioner#" -e "s#\` + storageHelperImage + \`#$helper#" >"$ctx/default-storage.yaml"
grep -q "image: $provisioner" "$ctx/default-storage.yaml" || die "could not read kind $KIND_VERSION's storage manifest; node-image.sh needs updating"

say "assembling the node image $node"
build=$("$DOCKER" run -d --privileged --entrypoint sleep "$node_root" infinity)
files=$KIND_SRC/images/base/files
"$DOCKER" cp "$files/usr/local/bin/." "$build:/usr/local/bin/"
"$DOCKER" cp "$files/kind" "$build:/kind"
"$DOCKER" cp "$files/etc/." "$build:/etc/"
for b in kubelet kubeadm kubectl; do "$DOCKER" cp "$KUBERNETES_BIN_DIR/$b" "$build:/usr/bin/$b"; done
"$DOCKER" cp "$CRICTL_BIN" "$build:/usr/local/bin/crictl"
"$DOCKER" exec "$build" mkdir -p /kind/manifests
"$DOCKER" cp "$ctx/default-storage.yaml" "$build:/kind/manifests/default-storage.yaml"
# The rest of kind's base Dockerfile, with Debian's containerd where kind's
# unit expects its own build, and Debian's CNI plugins where containerd
# looks for them.
"$DOCKER" exec -i "$build" bash -euo pipefail <<SCRIPT
chmod -R go-w /etc /kind
chmod 0755 /kind /kind/bin /kind/bin/* /usr/local/bin/*
ln -sf /usr/bin/containerd /usr/local/bin/containerd
mkdir -p /opt/cni && ln -sfn /usr/lib/cni /opt/cni/bin
ctr oci spec | jq '.hooks.createContainer[.hooks.createContainer | length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' |
  jq 'del(.process.rlimits)' >/etc/containerd/cri-base.json
find /lib/systemd/system/sysinit.target.wants/ -name systemd-tmpfiles-setup.service -delete
rm -f /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/* /lib/systemd/system/local-fs.target.wants/* \
  /lib/systemd/system/sockets.target.wants/*udev* /lib/systemd/system/sockets.target.wants/*initctl* /lib/systemd/system/basic.target.wants/*
echo ReadKMsg=no >>/etc/systemd/journald.conf
ln -sf /usr/lib/systemd/systemd /sbin/init
systemctl enable kubelet.service containerd.service undo-mount-hacks.service
systemctl mask systemd-binfmt.service
mkdir -p /etc/kubernetes/manifests
echo $KUBERNETES_VERSION >/kind/version
SCRIPT
# Imported unpacked as kind does: the node unpacks them on its /var volume.
say "importing ${#images[@]} images into the node's containerd"
"$DOCKER" exec "$build" bash -c 'nohup containerd >/tmp/containerd.log 2>&1 & for i in $(seq 30); do [ -S /run/containerd/containerd.sock ] && ctr version >/dev/null 2>&1 && exit 0; sleep 1; done; cat /tmp/containerd.log; exit 1'
"$DOCKER" save "${images[@]}" | "$DOCKER" exec -i "$build" ctr --namespace=k8s.io images import --all-platforms --no-unpack --digests -
# The build container's init (sleep) reaps no child: a stopped containerd
# stays a zombie, so wait for it to leave every other state.
"$DOCKER" exec "$build" bash -c 'pkill -x containerd; while ps -o stat= -C containerd | grep -qv "^Z"; do sleep 0.2; done; rm -f /tmp/containerd.log'
"$DOCKER" commit --change 'ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]' "$build" "$node" >/dev/null
say "built $node"
echo "$node"
