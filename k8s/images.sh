#!/usr/bin/env bash
# The lab's own images, and the images of a rendered overlay (kubectl
# kustomize ... | k8s/images.sh CMD): the manifests are the one list of what
# the lab runs, so nothing here keeps a list of its own; `tracelab images`
# reads and rewrites the references in them. Used by the Makefile's kind and
# EKS targets.
#
#   build PLATFORM       build tracelab/<service>:$IMAGE_TAG for every service
#                        (tracelab services) and tracelab/tracelab:$IMAGE_TAG,
#                        the load engine; GO_IMAGE, RUNTIME_IMAGE,
#                        JAVA_BUILD_IMAGE, JAVA_RUNTIME_IMAGE and
#                        DOCKER_BUILD_FLAGS as the Makefile's images target says
#   third-party          print each image the lab does not build, once
#   tag-builds           give each tracelab/<service>:$IMAGE_TAG the tag
#                        id-<its image ID>, and print those references
#   pin-builds           rewrite tracelab/<service>:$IMAGE_TAG to that tag
#   pin-ecr REGISTRY REGION [CACHE_PREFIX]
#                        rewrite tracelab/<service>:$IMAGE_TAG to its digest
#                        in ECR, and, with CACHE_PREFIX, every Docker Hub
#                        image to the ECR pull-through cache of that prefix
#   kind-load CLUSTER    tag-builds, and load those images into kind
#   kind-preload CLUSTER PLATFORM ARCHIVE
#                        pull each third-party image once with this docker
#                        (and its login), load them into kind as one archive
#   ecr-push REGISTRY REGION IMAGE...
#                        push tracelab/<IMAGE>:$IMAGE_TAG to ECR
#   ecr-drop-cache REGION PREFIX
#                        delete the pull-through cache's repositories (none
#                        when either is empty: nothing was created)
#
# Why a build's own tag (kind) or digest (EKS) rather than :dev: a Deployment
# whose image reference did not change is not rolled out, so a rebuilt :dev
# would leave the old pods running. With a reference per build, applying the
# manifests replaces exactly the services whose image changed.
set -euo pipefail
shopt -s inherit_errexit

root=$(cd "$(dirname "$0")/.." && pwd)
DOCKER=${DOCKER:-docker}
IMAGE_TAG=${IMAGE_TAG:-dev}
TRACELAB=${TRACELAB:-$root/.state/bin/tracelab}

die() { echo "k8s/images.sh: $*" >&2; exit 1; }

# Every image reference of the manifests on stdin, once each.
images() { "$TRACELAB" images list; }

# The lab's own images in the manifests on stdin: tracelab/<service>:$IMAGE_TAG.
builds() { images | grep -E "^tracelab/[a-z0-9-]+:${IMAGE_TAG}\$" || true; }

# The tag of a local build: its image ID, which changes when the image does.
id_tag() {
	local id
	id=$("$DOCKER" image inspect --format '{{.Id}}' "$1" 2>/dev/null) || die "no image $1; run make images"
	id=${id#sha256:}
	echo "id-${id:0:12}"
}

# Docker Hub's name of an image, with library/ for official images, or
# nothing when the image is from another registry.
dockerhub_path() {
	local ref=${1#docker.io/} first
	first=${ref%%/*}
	if [[ $ref != */* ]]; then
		echo "library/$ref"
	elif [[ $first == *.* || $first == *:* || $first == localhost ]]; then
		return 0
	else
		echo "$ref"
	fi
}

tag_builds() {
	local ref tag
	for ref in $(builds); do
		tag=$(id_tag "$ref")
		"$DOCKER" tag "$ref" "${ref%:*}:$tag"
		echo "${ref%:*}:$tag"
	done
}

build() { # PLATFORM
	local platform=$1 s framework port
	local -a flags
	read -ra flags <<<"${DOCKER_BUILD_FLAGS:-}"
	# shellcheck source=../infra/local/versions.env
	source "$root/infra/local/versions.env"
	"$TRACELAB" services | while read -r s framework port; do
		echo "==> image tracelab/$s:$IMAGE_TAG ($framework, $platform)"
		"$DOCKER" build --platform "$platform" "${flags[@]}" -f "$root/services/images/$framework.Dockerfile" \
			${JAVA_BUILD_IMAGE:+--build-arg "BUILD_IMAGE=$JAVA_BUILD_IMAGE"} ${JAVA_RUNTIME_IMAGE:+--build-arg "RUNTIME_IMAGE=$JAVA_RUNTIME_IMAGE"} \
			--build-arg "SERVICE=$s" --build-arg "PORT=$port" \
			--build-arg "OTEL_JAVAAGENT_VERSION=$OTEL_JAVAAGENT_VERSION" -t "tracelab/$s:$IMAGE_TAG" "$root/services" </dev/null
	done
	echo "==> image tracelab/tracelab:$IMAGE_TAG (the load engine, $platform)"
	"$DOCKER" build --platform "$platform" "${flags[@]}" ${GO_IMAGE:+--build-arg "GO_IMAGE=$GO_IMAGE"} \
		${RUNTIME_IMAGE:+--build-arg "RUNTIME_IMAGE=$RUNTIME_IMAGE"} -t "tracelab/tracelab:$IMAGE_TAG" "$root/tracelab" </dev/null
}

cmd=${1:-}
case $cmd in
build)
	platform=${2:-}
	[[ $platform == linux/* ]] || { echo "images: cannot tell the ${NODES:-kind} nodes' platform ($platform); set PLATFORM=linux/amd64 or linux/arm64" >&2; exit 2; }
	build "$platform"
	;;
third-party)
	images | grep -vE "^tracelab/" || true
	;;
tag-builds)
	tag_builds
	;;
kind-load)
	cluster=${2:?kind-load CLUSTER}
	for ref in $(tag_builds); do
		kind load docker-image --name "$cluster" "$ref"
	done
	;;
kind-preload)
	cluster=${2:?kind-preload CLUSTER PLATFORM ARCHIVE} platform=${3:?kind-preload CLUSTER PLATFORM ARCHIVE} archive=${4:?kind-preload CLUSTER PLATFORM ARCHIVE}
	mapfile -t third < <(images | grep -vE "^tracelab/" || true)
	for i in "${third[@]}"; do
		"$DOCKER" image inspect "$i" >/dev/null 2>&1 || "$DOCKER" pull --platform "$platform" "$i"
	done
	echo "==> kind-preload: saving ${#third[@]} images to $archive"
	mkdir -p "$(dirname "$archive")"
	"$DOCKER" save --platform "$platform" -o "$archive" "${third[@]}"
	kind load image-archive --name "$cluster" "$archive"
	rm -f "$archive"
	;;
pin-builds)
	manifests=$(cat)
	pins=()
	for ref in $(builds <<<"$manifests"); do
		pins+=("$ref=${ref%:*}:$(id_tag "$ref")")
	done
	"$TRACELAB" images set "${pins[@]}" <<<"$manifests"
	;;
pin-ecr)
	registry=${2:?pin-ecr REGISTRY REGION [CACHE_PREFIX]} region=${3:?pin-ecr REGISTRY REGION [CACHE_PREFIX]} prefix=${4:-}
	manifests=$(cat)
	pins=()
	for ref in $(builds <<<"$manifests"); do
		repo=${ref%:*}
		digest=$(aws ecr describe-images --region "$region" --repository-name "$repo" --image-ids "imageTag=$IMAGE_TAG" \
			--query 'imageDetails[0].imageDigest' --output text 2>/dev/null) || digest=
		[[ $digest == sha256:* ]] || die "$repo:$IMAGE_TAG is not in ECR ($registry); run make eks-push"
		pins+=("$ref=$registry/$repo@$digest")
	done
	if [[ -n $prefix ]]; then
		for ref in $(images <<<"$manifests" | grep -vE "^tracelab/" || true); do
			path=$(dockerhub_path "$ref")
			if [[ -n $path ]]; then pins+=("$ref=$registry/$prefix/$path"); fi
		done
	fi
	"$TRACELAB" images set "${pins[@]}" <<<"$manifests"
	;;
ecr-push)
	registry=${2:?ecr-push REGISTRY REGION IMAGE...} region=${3:?ecr-push REGISTRY REGION IMAGE...}
	shift 3
	aws ecr get-login-password --region "$region" | "$DOCKER" login --username AWS --password-stdin "$registry"
	for s in "$@"; do
		"$DOCKER" tag "tracelab/$s:$IMAGE_TAG" "$registry/tracelab/$s:$IMAGE_TAG"
		"$DOCKER" push "$registry/tracelab/$s:$IMAGE_TAG"
	done
	;;
ecr-drop-cache)
	region=${2:-} prefix=${3:-}
	if [[ -n $region && -n $prefix ]]; then
		for r in $(aws ecr describe-repositories --region "$region" --query "repositories[?starts_with(repositoryName, '$prefix/')].repositoryName" --output text); do
			echo "==> deleting the cached repository $r"
			aws ecr delete-repository --region "$region" --repository-name "$r" --force >/dev/null
		done
	fi
	;;
*)
	die "usage: k8s/images.sh build PLATFORM | third-party|tag-builds|pin-builds|pin-ecr REGISTRY REGION [CACHE_PREFIX] < manifests | kind-load CLUSTER|kind-preload CLUSTER PLATFORM ARCHIVE < manifests | ecr-push REGISTRY REGION IMAGE... | ecr-drop-cache REGION PREFIX"
	;;
esac
