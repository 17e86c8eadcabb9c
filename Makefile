# The Trace Pathology Lab's front door. `make help` lists the targets.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:

STATE    := $(CURDIR)/.state
TRACELAB := $(STATE)/bin/tracelab
TOOLS    := $(STATE)/tools.env
# make scenario-NAME runs the case's magnitude; CI uses the smoke profile.
PROFILE  ?= full
VARIANT  ?= both
RUNTIME  ?= local
export RUNTIME

GO_SOURCES   := $(shell find tracelab -name '*.go' -o -name '*.json' -o -name 'go.mod' -o -name 'go.sum' 2>/dev/null)
SERVICES     := $(notdir $(patsubst %/pom.xml,%,$(wildcard services/*/pom.xml)))
SERVICE_JARS := $(foreach s,$(SERVICES),services/$(s)/target/$(s).jar)
JAVA_SOURCES := $(shell find services -path '*/target' -prune -o -type f \( -name '*.java' -o -name 'pom.xml' -o -name '*.properties' -o -name '*.yaml' -o -name '*.sql' \) -print 2>/dev/null)
# A recipe prefix: the services need a JDK >= 21, which may not be the default.
MVN          := jdk=$$(infra/local/find-jdk.sh); JAVA_HOME=$$jdk mvn -B -q -f services/pom.xml

.PHONY: help tools build up down status logs test test-go test-java test-static test-dashboards test-e2e bench train clean
.PHONY: $(addprefix scenario-,$(notdir $(wildcard scenarios/*)))

help: ## list the targets
	@echo "Trace Pathology Lab — make <target>"
	@grep -hE '^[a-zA-Z%_-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | awk -F'\t' '{printf "  %-18s %s\n", $$1, $$2}'
	@echo
	@echo "  scenarios: $(notdir $(wildcard scenarios/*))   (PROFILE=full|smoke VARIANT=both|baseline|fixed KEEP=1)"

# Always runs: with everything cached it only checks, in about a second.
tools: ## build or fetch every pinned tool into ~/.cache/tracelab (once per version)
	@infra/local/tools.sh

$(TRACELAB): $(GO_SOURCES)
	@echo "==> building tracelab"
	cd tracelab && go build -o $(TRACELAB) .

$(SERVICE_JARS) &: $(JAVA_SOURCES)
	@echo "==> building the services: $(SERVICES)"
	$(MVN) package -DskipTests
	@touch $(SERVICE_JARS)

build: $(TRACELAB) $(SERVICE_JARS) ## build tracelab and the services

up: tools build ## start the telemetry stack and every service
	$(TRACELAB) up

down: $(TRACELAB) ## stop everything the lab started
	@$(TRACELAB) down

status: $(TRACELAB) ## show the lab's processes and endpoints
	@$(TRACELAB) status

logs: $(TRACELAB) ## follow the logs of every process (Ctrl-C to stop)
	@$(TRACELAB) logs

scenario-%: tools build ## reproduce a pathology, analyze its traces, run the fix and judge it
	$(TRACELAB) scenario run $* --profile $(PROFILE) --variant $(VARIANT) $(if $(KEEP),--keep)

test: tools build test-static test-dashboards test-go test-java test-e2e ## every test: static checks, unit tests, end-to-end smoke runs

test-static: tools $(TRACELAB)
	@echo "==> static checks: k6 scripts and scenario files"
	@source $(TOOLS); for s in loadtests/*.js; do "$$K6_BIN" inspect -e TARGET=http://127.0.0.1:1 "$$s" >/dev/null && echo "k6 inspect $$s: ok"; done
	$(TRACELAB) scenario validate

# Grafana and Tempo cannot run here: the dashboards are linted, their TraceQL
# is parsed by Tempo's own parser, and the e2e smoke runs prove their queries
# against real data (dashboards/README.md).
test-dashboards: tools $(TRACELAB)
	@echo "==> dashboards: structure, dashboard-linter, TraceQL (Tempo's parser)"
	$(TRACELAB) dashboards check
	@source $(TOOLS); for d in dashboards/*.json; do "$$DASHBOARD_LINTER_BIN" lint --strict -c dashboards/.lint "$$d" >/dev/null 2>$(STATE)/lint.out || { grep -v '^Checks' $(STATE)/lint.out; exit 1; }; echo "dashboard-linter $$d: ok"; done
	$(TRACELAB) dashboards queries --lang traceql | (cd dashboards/traceqlcheck && GONOSUMDB=github.com/grafana GOFLAGS=-mod=mod go run .)

test-go:
	@echo "==> Go tests"
	cd tracelab && go vet ./... && go test ./...

test-java:
	@echo "==> Java tests"
	$(MVN) verify

test-e2e: tools build
	@echo "==> end-to-end: the smoke profile of every scenario on the local runtime"
	cd tracelab && TRACELAB_BIN=$(TRACELAB) go test -tags e2e -count=1 -timeout 40m -v ./e2e

bench: tools build ## benchmarks: analyzer spans/s, stack start and memory, AntPathMatcher vs PathPattern (JMH)
	cd tracelab && go test ./pkg/analyze -run '^$$' -bench . -benchtime 1x
	$(TRACELAB) bench-stack
	$(MVN) -pl gateway -am -Pjmh verify -DskipTests

train: tools build ## a trace-reading round: random scenario and variant, report without the answer, your diagnosis graded (SEED=n replays)
	$(TRACELAB) train $(if $(SEED),--seed $(SEED))

clean: down ## stop the lab and remove its state and build output (the tool cache stays)
	rm -rf $(STATE)
	-$(MVN) clean
