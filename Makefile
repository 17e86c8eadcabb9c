# The Trace Pathology Lab's front door. `make help` lists the targets.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:

STATE    := $(CURDIR)/.state
TRACELAB := $(STATE)/bin/tracelab
TOOLS    := $(STATE)/tools.env
TEST_TOOLS := $(STATE)/tools-test.env
# PROFILE (smoke or full) is passed on only when set: the default profile
# is tracelab's (tracelab scenario run --help).
VARIANT  ?= both
RUNTIME  ?= local
export RUNTIME

GO_SOURCES   := $(shell find tracelab -name '*.go' -o -name '*.json' -o -name 'go.mod' -o -name 'go.sum' 2>/dev/null)
# A service is a folder of services/ with a service.yaml, its description
# (docs/layout.md, "Adding a service"); a shared library there has none.
SERVICES     := $(notdir $(patsubst %/service.yaml,%,$(wildcard services/*/service.yaml)))
SERVICE_JARS := $(foreach s,$(SERVICES),services/$(s)/target/$(s).jar)
JAVA_SOURCES := $(shell find services -path '*/target' -prune -o -type f \( -name '*.java' -o -name 'pom.xml' -o -name '*.properties' -o -name '*.yaml' -o -name '*.sql' \) -print 2>/dev/null)
# A recipe prefix: the services need a JDK >= 21, which may not be the default.
MVN          := infra/local/mvn.sh -B -q -f services/pom.xml

.PHONY: help tools tools-test build generate up down status logs ui test test-go test-corpus test-java test-static test-dashboards test-e2e bench train clean
.PHONY: tools-bench bench-detect bench-throughput bench-scale bench-first-run bench-explorer profile-antpath
.PHONY: tools-k8s test-k8s test-kind images kind-load kind-preload kind-mirror kind-up kind-down k8s-wait eks-up eks-push eks-deploy eks-down
# scenario-% is not .PHONY on purpose: make skips pattern rules for phony
# targets, and `make scenario-nplus1` then did nothing ("Nothing to be done").

help: ## @learn list the targets, by what you want to do
	@echo "Trace Pathology Lab — make <target>"
	@echo; echo "Learn: reproduce a pathology, see its traces, then its fix (start with scenario-nplus1):"
	@for d in $(sort $(wildcard scenarios/*/scenario.yaml)); do \
	  n=$$(basename $$(dirname $$d)); printf "  %-24s %s\n" "scenario-$$n" "$$(sed -n 's/^title: //p' $$d)"; done
	@echo "    (PROFILE=smoke|full VARIANT=both|baseline|fixed|all|<name> KEEP=1 RECORD=1 RUNTIME=local|kind|eks)"
	@$(call help_targets,learn)
	@echo
	@echo "Validate a fix against the recorded baseline:"
	@echo "  make scenario-<name> VARIANT=fixed   the fix alone, its ratios against scenarios/<name>/baseline.json"
	@echo "  make scenario-<name> RECORD=1        record a new baseline.json from this run"
	@echo
	@echo "Analyze your own traces (no stack needed; docs/own-traces.md):"
	@echo "  .state/bin/tracelab analyze --file traces.json | --jaeger URL --service S | --tempo URL --query Q"
	@echo "  .state/bin/tracelab compare --baseline SRC --candidate SRC   exits 1 on a new finding or a slower p95"
	@$(call help_group,k8s,Kubernetes: kind and EKS (docs/kubernetes.md))
	@$(call help_group,develop,Develop and test)
	@$(call help_group,bench,Benchmarks (docs/benchmarks.md))

# help_targets prints the targets whose "## @<group> " comment names the
# group; help_group heads them with a title.
help_group = echo; echo "$(2):"; $(call help_targets,$(1))
help_targets = grep -hE '^[a-zA-Z0-9_-]+:.*\#\# @$(1) ' $(MAKEFILE_LIST) | sed -E 's/:.*\#\# @$(1) /\t/' | awk -F'\t' '{printf "  %-24s %s\n", $$1, $$2}'

# Always runs: with everything cached it only checks, in about a second.
tools: ## @develop build or fetch the pinned tools a scenario run needs into ~/.cache/tracelab (once per version; no root)
	@infra/local/tools.sh

tools-test: ## @develop the tools only make test needs: the dashboard linter, a headless Chromium, gcc for go test -race
	@infra/local/tools.sh test

$(TRACELAB): $(GO_SOURCES)
	@echo "==> building tracelab"
	cd tracelab && go build -o $(TRACELAB) .

$(SERVICE_JARS) &: $(JAVA_SOURCES)
	@echo "==> building the services: $(SERVICES)"
	$(MVN) package -DskipTests
	@touch $(SERVICE_JARS)

build: $(TRACELAB) $(SERVICE_JARS) ## @develop build tracelab and the services

generate: $(TRACELAB) ## @develop write the services' local processes, Kubernetes manifests, ports and settings declarations from their descriptions
	$(TRACELAB) generate

up: tools build ## @learn start the telemetry stack and every service
	$(TRACELAB) up

down: $(TRACELAB) ## @learn stop everything the lab started
	@$(TRACELAB) down

status: $(TRACELAB) ## @learn show the lab's processes and endpoints
	@$(TRACELAB) status

logs: $(TRACELAB) ## @learn follow the logs of every process (Ctrl-C to stop)
	@$(TRACELAB) logs

ui: $(TRACELAB) ## @learn the trace explorer at http://127.0.0.1:16600 (EXPLORER_PORT): every run's traces (search, waterfall, compare) and the dashboards; the stack may be down (Ctrl-C stops it)
	@$(TRACELAB) ui

# What a run needs first. Locally: the pinned tools and the services, which
# share nothing, so on a first run Maven's downloads overlap the tools' Go
# builds. On kind and EKS the services run from their images and the load
# runs in the cluster (tracelab/pkg/loadjob): tracelab alone.
RUN_NEEDS := $(if $(filter kind eks,$(RUNTIME)),$(TRACELAB),tools build)

scenario-%: ## @learn reproduce a pathology, analyze its traces, run the fix and judge it (RUNTIME=local|kind|eks)
	@$(MAKE) --no-print-directory -j2 $(RUN_NEEDS)
	$(TRACELAB) scenario run $* $(if $(PROFILE),--profile $(PROFILE)) --variant $(VARIANT) $(if $(KEEP),--keep) $(if $(RECORD),--record)

test: tools tools-test build test-static test-dashboards test-go test-java test-k8s test-e2e ## @develop every test: static checks, dashboards, unit tests, Kubernetes checks on a throwaway control plane, end-to-end smoke runs

# The licence gate reads the services' Maven graph with the JDK they build
# with (POM profiles may depend on it), and fetches what the caches lack.
test-static: tools $(TRACELAB) ## @develop part of make test: generated files, scenario files, licences, tools.sh's job statuses
	@echo "==> static checks: generated files, scenario files with their load definitions, licences, tools.sh's job statuses"
	$(TRACELAB) generate --check
	$(TRACELAB) scenario validate
	jdk=$$(infra/local/find-jdk.sh); JAVA_HOME=$$jdk $(TRACELAB) licences check
	infra/local/jobs_test.sh

TRACEQLCHECK := dashboards/traceqlcheck

# Grafana and Tempo cannot run here: the dashboards are linted, their TraceQL
# is parsed by Grafana's TraceQL grammar (Tempo's parser is AGPL), and the e2e
# smoke runs prove their queries against real data (dashboards/README.md).
test-dashboards: tools-test $(TRACELAB) $(TRACEQLCHECK)/node_modules/.package-lock.json ## @develop part of make test: lint the dashboards, parse their TraceQL
	@echo "==> dashboards: structure, dashboard-linter, TraceQL (Grafana's TraceQL grammar)"
	$(TRACELAB) dashboards check
	@source $(TEST_TOOLS); dashboards/lint.sh "$$DASHBOARD_LINTER_BIN"
	cd $(TRACEQLCHECK) && TRACELAB_BIN=$(TRACELAB) node --test check.test.mjs
	$(TRACELAB) dashboards queries --lang traceql | node $(TRACEQLCHECK)/check.mjs

# npm ci writes this file once its install is done: it stands for a whole install of the lock.
$(TRACEQLCHECK)/node_modules/.package-lock.json: $(TRACEQLCHECK)/package-lock.json
	@$(call need,npm,install Node.js 20 or later with npm)
	cd $(TRACEQLCHECK) && npm ci --no-audit --no-fund --no-update-notifier --ignore-scripts
	@touch $@

# go test replays the OTLP parser's fuzz corpus (tracelab/pkg/otlp/testdata/
# fuzz/FuzzParse); then the fuzzer looks for new failures for FUZZTIME, a
# count of inputs (about 15 s here): a duration ends the fuzzing with a
# spurious "context deadline exceeded" now and then on a busy machine, a
# race in Go's fuzzing coordinator (go.dev/issue/75804, fixed in Go 1.27). One
# it finds is written there as a new file: commit it with the fix. The tests
# run once, under the race detector, which needs cgo and so a C compiler
# (make tools-test installs gcc).
FUZZTIME ?= 200000x
test-go: ## @develop part of make test: go vet, the Go tests under the race detector, fuzzing the OTLP parser (FUZZTIME)
	@echo "==> Go tests, with the race detector"
	@$(call need,gcc,go test -race needs a C compiler: run make tools-test or apt-get install -y gcc libc6-dev)
	cd tracelab && go vet ./... && go test -race ./...
	@echo "==> the training set's whole-set tests, without the race detector (pkg/train, race_test.go says why)"
	cd tracelab && go test -count=1 -run '^(TestBlindExplorerLeaksNothing|TestEveryRoundIsAnswerable)$$' ./pkg/train
	@echo "==> fuzzing the OTLP parser (-fuzztime $(FUZZTIME))"
	cd tracelab && go test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./pkg/otlp

# Also part of test-go (go test ./...); this runs only the corpus, verbosely.
test-corpus: ## @develop judge tracelab's detectors on the labelled corpus (tracelab/testdata/corpus): a missed label or an unlabelled finding fails
	@echo "==> detector corpus: tracelab/testdata/corpus"
	cd tracelab && go test -count=1 -v ./corpus

# orders' tests start a real PostgreSQL: the one make tools fetched.
test-java: tools ## @develop part of make test: the services' Maven tests
	@echo "==> Java tests"
	$(MVN) verify

test-e2e: tools tools-test build ## @develop part of make test: every scenario's smoke profile end to end on the local runtime
	@echo "==> end-to-end: the smoke profile of every scenario on the local runtime"
	cd tracelab && TRACELAB_BIN=$(TRACELAB) e2e/run.sh $(STATE)/logs/test-e2e.log -tags e2e -count=1 -timeout 40m ./e2e

bench: tools build bench-throughput bench-scale bench-explorer bench-noisy bench-first-run ## @bench benchmarks: tracelab vs perf-sentinel (wall, CPU, memory), 1M and 3M real spans beside the parse floor, analyzer spans/s, the trace explorer in Chromium, the load engine's CPU and punctuality, stack start and memory, AntPathMatcher vs PathPattern (JMH), smoke verdicts beside a CPU hog, a newcomer's first run
	cd tracelab && go test ./pkg/analyze -run '^$$' -bench . -benchtime 1x -benchmem
	$(TRACELAB) bench-load
	$(TRACELAB) bench-stack
	$(MVN) -pl gateway -am -Pjmh verify -DskipTests

# The gateway alone, on a free port outside the lab's: no stack, no make up.
profile-antpath: $(TRACELAB) services/gateway/target/gateway.jar ## @bench JFR profile of the gateway alone, per matcher: share of CPU samples in path matching (antpath)
	@TRACELAB_BIN=$(TRACELAB) services/gateway/profile-matching.sh

bench-noisy: tools build ## @bench every scenario's smoke profile beside a CPU hog on every CPU (stress-ng), RUNS times (3): verdicts and pass rates (TEST=<e2e test name> runs that test instead)
	@TRACELAB_BIN=$(TRACELAB) infra/local/bench-noisy.sh

# Each measurement opens a fresh headless Chromium: nothing cached.
bench-explorer: tools-test ## @bench the trace explorer in headless Chromium: time to first paint and to an interactive waterfall, 3,203 and 50,000 spans (RUNS, 5)
	@set -a; source $(TEST_TOOLS); set +a; cd tracelab && go run ./internal/explorerbench -runs $(or $(RUNS),5)

bench-first-run: ## @bench the first make scenario-nplus1 from a fresh clone: cold (every cache empty) and warm (about 25 minutes)
	@infra/local/bench-first-run.sh

# ---- Detector benchmark: tracelab against perf-sentinel on the labelled corpus ----
BENCH_TOOLS := $(STATE)/tools-bench.env

tools-bench: ## @bench build the peer analyzer of bench-detect: perf-sentinel (cargo, once per version)
	@infra/local/tools.sh bench

bench-detect: $(TRACELAB) tools-bench ## @bench tracelab's detectors vs perf-sentinel on tracelab/testdata/corpus: precision, recall, spans/s
	@set -a; source $(BENCH_TOOLS); set +a; cd tracelab && TRACELAB_BIN=$(TRACELAB) go run ./corpus/benchdetect

# RUNS=n sets the number of alternating pairs (5 by default).
bench-throughput: $(TRACELAB) tools-bench ## @bench tracelab vs perf-sentinel on the same ~90 MiB of traces: whole-process wall, CPU and peak memory, alternating runs, median and range
	@set -a; source $(BENCH_TOOLS); set +a; cd tracelab && TRACELAB_BIN=$(TRACELAB) go run ./corpus/benchdetect -throughput-only -runs $(or $(RUNS),5)

# RUNS=n sets the runs of each measurement (3 by default); SIZES the inputs
# (SPANS[:MAX-MEMORY],...). It writes up to 2.5 GB of traces under /tmp,
# one size at a time, and removes each when done.
bench-scale: $(TRACELAB) tools-bench ## @bench tracelab on 1M and 3M real recorded spans: CPU, wall and peak memory beside the parse floor of the same file, and beside perf-sentinel under its 100 MiB limit
	@set -a; source $(BENCH_TOOLS); set +a; cd tracelab && TRACELAB_BIN=$(TRACELAB) go run ./corpus/benchdetect -scale-only -runs $(or $(RUNS),3) $(if $(SIZES),-scale-sizes $(SIZES))

train: $(if $(LIVE),$(RUN_NEEDS),$(TRACELAB)) ## @learn a trace-reading round drawn from the labelled recordings, no stack, graded by level (SEED=n replays, LEVEL=1-4; LIVE=1 runs a scenario on the stack instead)
	$(TRACELAB) train $(if $(LIVE),--live) $(if $(SEED),--seed $(SEED)) $(if $(LEVEL),--level $(LEVEL))

clean: down ## @learn stop the lab and remove its state and build output (the tool cache stays)
	rm -rf $(STATE)
	-$(MVN) clean

# ---- Kubernetes: kind and EKS (docs/kubernetes.md; k8s/README.md) ----
# These targets need only what a Kubernetes user has: docker (or podman),
# kind or the AWS CLI and Terraform, kubectl, and Go for tracelab. None of
# them runs make tools or Maven on this machine: the images build the
# services and tracelab, whose image runs the load in the cluster.
K8S_TOOLS   := $(STATE)/tools-k8s.env
DOCKER      ?= docker
TERRAFORM   ?= terraform
TF          := $(TERRAFORM) -chdir=infra/terraform
IMAGE_TAG   ?= dev
# k8s/images.sh reads and rewrites the manifests' image references with tracelab.
export DOCKER IMAGE_TAG TRACELAB
KIND_CLUSTER := tracelab
KIND_CONTEXT := kind-$(KIND_CLUSTER)
# What kind-up creates and deploys. make test-kind points them at its own
# (infra/kind-test/README.md): a cluster config with this machine's
# workarounds, a node image built here, and an overlay of images built here.
KIND_CONFIG  ?= k8s/kind/cluster.yaml
KIND_IMAGE   ?=
KIND_OVERLAY ?= k8s/overlays/kind
EKS_CONTEXT  := tracelab-eks
# The base reads the local runtime's files (ports.env, otelcol.yaml, ...)
# from outside k8s/, hence the load restrictor. kubectl's built-in kustomize
# renders both overlays byte for byte as kustomize v5.8.1 does (checked with
# kubectl 1.32, kustomize v5.5.0), so kind and EKS need no kustomize of their own.
RENDER      = kubectl kustomize --load-restrictor LoadRestrictionsNone
# The images are built for the nodes' platform: NODES=kind (the default) is
# a container on this machine, so its architecture; NODES=eks (eks-up sets
# it) is the node group's, from its AMI type (terraform output node_platform).
# PLATFORM=linux/arm64 (or amd64) overrides both.
NODES ?= kind
HOST_PLATFORM := linux/$(patsubst x86_64,amd64,$(patsubst aarch64,arm64,$(shell uname -m)))
NODE_PLATFORM = $(or $(PLATFORM),$(if $(filter eks,$(NODES)),$$($(TF) output -raw node_platform),$(HOST_PLATFORM)))
# Opt-in remedies for Docker Hub's anonymous pull limit (docs/kubernetes.md,
# "Docker Hub's pull limit"): KIND_REGISTRY_MIRROR=https://mirror.gcr.io (or your own
# pull-through registry) for kind's containerd; KIND_PRELOAD=1 to pull the
# images once with your own docker login and load them into kind.
KIND_REGISTRY_MIRROR ?=
KIND_PRELOAD ?=
# On EKS: DOCKERHUB_SECRET_ARN=<ARN of a secret ecr-pullthroughcache/...>
# turns on the Docker Hub pull-through cache in ECR (infra/terraform/README.md).
DOCKERHUB_SECRET_ARN ?=
TF_VARS = -var 'api_allowed_cidrs=["$(or $(ADMIN_CIDR),127.0.0.1/32)"]' $(if $(DOCKERHUB_SECRET_ARN),-var 'dockerhub_secret_arn=$(DOCKERHUB_SECRET_ARN)')
need        = command -v $(1) >/dev/null || { echo "$@: $(1) is not installed; $(2)" >&2; exit 3; }
INSTALL_KIND    := see https://kind.sigs.k8s.io/docs/user/quick-start/\#installation (kind >= 0.33.0)
INSTALL_KUBECTL := see https://kubernetes.io/docs/tasks/tools/ (kubectl >= 1.34)

tools-k8s: ## @k8s build or fetch the Kubernetes check tools: kustomize, a control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kwok), hclfmt, tflint, promtool
	@infra/local/tools.sh k8s

test-k8s: tools-k8s test-k8s-configs ## @k8s checks of k8s/ on a throwaway control plane (kwok's fake nodes), and of infra/terraform: no container engine, no cloud
	@source $(K8S_TOOLS); echo "==> k8s overlays on Kubernetes $$KUBERNETES_VERSION (etcd, API server, controllers, kwok nodes on 127.0.0.1): server-side apply, Pod Security, rollouts, the kind runtime's variant switch; policy and cross-checks"
	cd tracelab && TRACELAB_K8S_CHECKS=1 go test -count=1 -timeout 10m ./internal/manifests ./pkg/runtime
	@echo "==> infra/terraform: fmt -check (hclfmt: terraform fmt's formatter) and tflint"
	@source $(K8S_TOOLS); rc=0; for f in infra/terraform/*.tf; do "$$HCLFMT_BIN" -check "$$f" | diff -u --label "$$f" --label "$$f (formatted)" "$$f" - || rc=1; done; \
	  [ $$rc = 0 ] || { echo "fmt: the files above are not formatted: terraform fmt infra/terraform" >&2; exit 1; }; echo "fmt: ok"
	@source $(K8S_TOOLS); cd infra/terraform && "$$TFLINT_BIN" --no-color && echo "tflint: ok"

# The telemetry stack's configurations as its pods get them, checked by the
# programs that read them (k8s/README.md, "The checks"); Tempo's, whose code
# is AGPL, by the lab's strict decode against Tempo's keys.
.PHONY: test-k8s-configs
test-k8s-configs: tools tools-k8s ## @k8s part of test-k8s: the telemetry configs as the pods get them, checked by their own programs
	@echo "==> k8s telemetry configs: otelcol validate, jaeger validate, promtool check config, Tempo's keys (the lab's check)"
	cd tracelab && TRACELAB_K8S_CONFIG_CHECKS=1 go test -count=1 -run 'Configs' ./internal/manifests

# One recipe per framework (services/images/<framework>.Dockerfile); each
# service's framework and port come from its description (tracelab services).
# The load engine's image is tracelab's own (tracelab/Dockerfile); GO_IMAGE
# and RUNTIME_IMAGE replace its public base images, JAVA_BUILD_IMAGE and
# JAVA_RUNTIME_IMAGE the services' (Maven with a JDK, and a JRE), for a
# machine that cannot pull them (infra/kind-test/images.sh passes local
# ones). DOCKER_BUILD_FLAGS goes to every docker build (e.g. --network host).
GO_IMAGE ?=
RUNTIME_IMAGE ?=
JAVA_BUILD_IMAGE ?=
JAVA_RUNTIME_IMAGE ?=
DOCKER_BUILD_FLAGS ?=
images: $(TRACELAB) ## @k8s build the images tracelab/<service>:IMAGE_TAG and tracelab/tracelab:IMAGE_TAG (the load) for the nodes' platform (NODES=kind|eks, PLATFORM, GO_IMAGE, RUNTIME_IMAGE, JAVA_BUILD_IMAGE, JAVA_RUNTIME_IMAGE, DOCKER_BUILD_FLAGS; needs docker)
	@$(call need,$(DOCKER),install Docker or set DOCKER=podman)
	@$(DOCKER) info >/dev/null 2>&1 || { echo "images: cannot reach the $(DOCKER) daemon; start it" >&2; exit 3; }
	@platform=$(NODE_PLATFORM); NODES=$(NODES) GO_IMAGE="$(GO_IMAGE)" RUNTIME_IMAGE="$(RUNTIME_IMAGE)" JAVA_BUILD_IMAGE="$(JAVA_BUILD_IMAGE)" \
	  JAVA_RUNTIME_IMAGE="$(JAVA_RUNTIME_IMAGE)" DOCKER_BUILD_FLAGS="$(DOCKER_BUILD_FLAGS)" k8s/images.sh build "$$platform"

kind-load: $(TRACELAB) ## @k8s load the lab's own images (services, tracelab) into the kind cluster, each under a tag of its own build (id-<image ID>)
	@$(call need,kind,$(INSTALL_KIND))
	@$(call need,kubectl,$(INSTALL_KUBECTL))
	@$(RENDER) $(KIND_OVERLAY) | k8s/images.sh kind-load $(KIND_CLUSTER)

# kind's containerd does not use your docker login: anonymous pulls from
# Docker Hub are limited to 10 an hour per IPv4 address, and a cold kind-up
# needs more. This pulls each third-party image of the overlay once with your
# docker (logged in or not, and cached for the next cluster), and loads them
# all as one archive. --platform: with Docker's containerd image store, a
# multi-platform archive makes kind's import fail (kind issue 3795).
kind-preload: $(TRACELAB) ## @k8s pull the kind overlay's third-party images once with your own docker (and login), load them into kind
	@$(call need,kind,$(INSTALL_KIND))
	@$(call need,kubectl,$(INSTALL_KUBECTL))
	@$(call need,$(DOCKER),kind runs its node in a container: install Docker)
	@$(RENDER) $(KIND_OVERLAY) | k8s/images.sh kind-preload $(KIND_CLUSTER) $(HOST_PLATFORM) $(STATE)/kind-images.tar

# Points (or, unset, stops pointing) the node's containerd at a Docker Hub
# mirror (k8s/kind/mirror.sh).
kind-mirror:
	@k8s/kind/mirror.sh $(KIND_CLUSTER) "$(KIND_REGISTRY_MIRROR)"

# Applying the manifests with each service at the tag of its build rolls out
# exactly the services whose image changed (k8s/images.sh); ConfigMaps and
# Secrets carry a hash of their content in their names, so a changed one
# rolls out its workloads too. Nothing else needs restarting.
kind-up: $(TRACELAB) ## @k8s create the kind cluster, build and load the images, deploy the lab, wait until ready (KIND_REGISTRY_MIRROR, KIND_PRELOAD=1)
	@$(call need,kind,$(INSTALL_KIND))
	@$(call need,kubectl,$(INSTALL_KUBECTL))
	@$(call need,$(DOCKER),kind runs its node in a container: install Docker)
	@kind get clusters 2>/dev/null | grep -qx $(KIND_CLUSTER) || kind create cluster --config $(KIND_CONFIG) $(if $(KIND_IMAGE),--image $(KIND_IMAGE))
	@$(MAKE) --no-print-directory kind-mirror $(if $(KIND_PRELOAD),kind-preload) images kind-load
	@k8s/gen-secrets.sh
	$(RENDER) $(KIND_OVERLAY) | k8s/images.sh pin-builds | kubectl --context $(KIND_CONTEXT) apply -f -
	@$(MAKE) --no-print-directory k8s-wait CONTEXT=$(KIND_CONTEXT)
	@echo "kind: ready. RUNTIME=kind make scenario-nplus1; make ui RUNTIME=kind (the trace explorer); Jaeger http://127.0.0.1:16686, Grafana http://127.0.0.1:13000 (admin, password in k8s/base/secrets/grafana.env)"

# CI's kind stage (.ci/run runs it after make test): everything built here,
# no registry. As root where no container engine answers: it then runs a
# dockerd of its own, and stops it at the end.
test-kind: $(TRACELAB) ## @k8s the lab on a real kind cluster built here from the registries: kind-up, two scenarios with RUNTIME=kind, kind-down (infra/kind-test/README.md)
	@infra/kind-test/run.sh

kind-down: ## @k8s delete the kind cluster and everything in it
	@$(call need,kind,$(INSTALL_KIND))
	kind delete cluster --name $(KIND_CLUSTER)

# Waits until every workload of the lab is ready, with progress.
k8s-wait:
	@echo "==> waiting for the lab's Deployments and StatefulSets (up to 10 minutes)"
	kubectl --context $(CONTEXT) -n tracelab wait --for=condition=Available deployment --all --timeout=10m
	kubectl --context $(CONTEXT) -n tracelab wait --for=jsonpath='{.status.readyReplicas}'=1 statefulset --all --timeout=10m

eks-up: ## @k8s create EKS and ECR with Terraform (ADMIN_CIDR=<your IP>/32, DOCKERHUB_SECRET_ARN), build and push the images, deploy the lab
	@$(call need,$(TERRAFORM),install Terraform >= 1.5.7 or set TERRAFORM=tofu)
	@$(call need,aws,install the AWS CLI v2 and configure credentials)
	@$(call need,kubectl,$(INSTALL_KUBECTL))
	@test -n "$(ADMIN_CIDR)" || { echo "eks-up: set ADMIN_CIDR to the only network allowed to reach the cluster's API, e.g. ADMIN_CIDR=\$$(curl -s https://checkip.amazonaws.com)/32" >&2; exit 2; }
	$(TF) init -input=false
	$(TF) apply -input=false $(TF_VARS)
	aws eks update-kubeconfig --region $$($(TF) output -raw region) --name $$($(TF) output -raw cluster_name) --alias $(EKS_CONTEXT)
	$(MAKE) --no-print-directory images eks-push eks-deploy NODES=eks

eks-push: ## @k8s push the lab's own images (services, tracelab) to its ECR repositories
	@$(call need,aws,install the AWS CLI v2 and configure credentials)
	@registry=$$($(TF) output -raw ecr_registry); region=$$($(TF) output -raw region); \
	k8s/images.sh ecr-push "$$registry" "$$region" $(SERVICES) tracelab

# Each service is deployed at the digest ECR holds for its tag, so a pushed
# change rolls out and an unchanged image does not (k8s/images.sh). With
# the pull-through cache on (infra/terraform, dockerhub_secret_arn), the
# Docker Hub images come through ECR too.
eks-deploy: $(TRACELAB) ## @k8s apply the eks overlay, each service at its ECR digest, and wait until ready
	@$(call need,aws,install the AWS CLI v2 and configure credentials)
	@$(call need,kubectl,$(INSTALL_KUBECTL))
	@k8s/gen-secrets.sh
	$(RENDER) k8s/overlays/eks \
	  | k8s/images.sh pin-ecr $$($(TF) output -raw ecr_registry) $$($(TF) output -raw region) $$($(TF) output -raw ecr_pull_through_prefix) \
	  | kubectl --context $(EKS_CONTEXT) apply -f -
	@$(MAKE) --no-print-directory k8s-wait CONTEXT=$(EKS_CONTEXT)
	@echo "eks: ready. RUNTIME=eks make scenario-nplus1 (tracelab port-forwards); make eks-down removes everything"

# The pull-through cache's repositories are created by the first pulls, not
# by Terraform, so destroy would leave them (and their storage bill) behind.
eks-down: ## @k8s delete the lab (its volumes first) and the pull-through cache's repositories, then destroy EKS, ECR and the VPC
	@$(call need,$(TERRAFORM),install Terraform >= 1.5.7 or set TERRAFORM=tofu)
	@$(call need,aws,install the AWS CLI v2 and configure credentials)
	-kubectl --context $(EKS_CONTEXT) delete namespace tracelab --wait --timeout=10m
	@prefix=$$($(TF) output -raw ecr_pull_through_prefix 2>/dev/null || true); region=$$($(TF) output -raw region 2>/dev/null || true); \
	k8s/images.sh ecr-drop-cache "$$region" "$$prefix"
	$(TF) destroy -input=false $(TF_VARS)
	-kubectl config delete-context $(EKS_CONTEXT)
