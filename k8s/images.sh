#!/usr/bin/env bash
# The images of a rendered overlay (kubectl kustomize ... | k8s/images.sh CMD):
# the manifests are the one list of what the lab runs, so nothing here keeps
# a list of its own. Used by the Makefile's kind and EKS targets.
#
#   third-party          print each image the lab does not build, once
#   tag-builds           give each tracelab/<service>:$IMAGE_TAG the tag
#                        id-<its image ID>, and print those references
#   pin-builds           rewrite tracelab/<service>:$IMAGE_TAG to that tag
#   pin-ecr REGISTRY REGION [CACHE_PREFIX]
#                        rewrite tracelab/<service>:$IMAGE_TAG to its digest
#                        in ECR, and, with CACHE_PREFIX, every Docker Hub
#                        image to the ECR pull-through cache of that prefix
#
# Why a build's own tag (kind) or digest (EKS) rather than :dev: a Deployment
# whose image reference did not change is not rolled out, so a rebuilt :dev
# would leave the old pods running. With a reference per build, applying the
# manifests replaces exactly the services whose image changed.
set -euo pipefail
shopt -s inherit_errexit

DOCKER=${DOCKER:-docker}
IMAGE_TAG=${IMAGE_TAG:-dev}

die() { echo "k8s/images.sh: $*" >&2; exit 1; }

# Every image reference of the manifests on stdin, once each.
images() { sed -nE 's/^[[:space:]]*(- )?image:[[:space:]]*"?([^"[:space:]]+)"?[[:space:]]*$/\2/p' | sort -u; }

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

# sed substitutions of whole image references.
subst() { # FROM TO
	printf 's#^([[:space:]]*(- )?image:[[:space:]]*"?)%s("?[[:space:]]*)$#\\1%s\\3#\n' "${1//./\\.}" "$2"
}

cmd=${1:-}
case $cmd in
third-party)
	images | grep -vE "^tracelab/" || true
	;;
tag-builds)
	for ref in $(builds); do
		tag=$(id_tag "$ref")
		"$DOCKER" tag "$ref" "${ref%:*}:$tag"
		echo "${ref%:*}:$tag"
	done
	;;
pin-builds)
	manifests=$(cat)
	script=
	for ref in $(builds <<<"$manifests"); do
		tag=$(id_tag "$ref")
		script+=$(subst "$ref" "${ref%:*}:$tag")$'\n'
	done
	sed -E "$script" <<<"$manifests"
	;;
pin-ecr)
	registry=${2:?pin-ecr REGISTRY REGION [CACHE_PREFIX]} region=${3:?pin-ecr REGISTRY REGION [CACHE_PREFIX]} prefix=${4:-}
	manifests=$(cat)
	script=
	for ref in $(builds <<<"$manifests"); do
		repo=${ref%:*}
		digest=$(aws ecr describe-images --region "$region" --repository-name "$repo" --image-ids "imageTag=$IMAGE_TAG" \
			--query 'imageDetails[0].imageDigest' --output text 2>/dev/null) || digest=
		[[ $digest == sha256:* ]] || die "$repo:$IMAGE_TAG is not in ECR ($registry); run make eks-push"
		script+=$(subst "$ref" "$registry/$repo@$digest")$'\n'
	done
	if [[ -n $prefix ]]; then
		for ref in $(images <<<"$manifests" | grep -vE "^tracelab/" || true); do
			path=$(dockerhub_path "$ref")
			if [[ -n $path ]]; then script+=$(subst "$ref" "$registry/$prefix/$path")$'\n'; fi
		done
	fi
	sed -E "$script" <<<"$manifests"
	;;
*)
	die "usage: k8s/images.sh third-party|tag-builds|pin-builds|pin-ecr REGISTRY REGION [CACHE_PREFIX] < manifests"
	;;
esac
