# kafka_replication_exporter — the targets the README names.
#
#   make run     a local Kafka, 3 brokers + 1 controller (real Apache Kafka from Maven Central), one exporter per broker,
#                Prometheus + Alertmanager with the shipped rules; prints the URLs; Ctrl-C stops everything
#   make test    everything CI runs: vet, unit + golden + fuzz seeds, promtool rule tests, dashboard checks,
#                docs freshness, the real-Kafka scenarios and the alert loop
#   make e2e     only the real-Kafka scenarios and the alert loop
#   make e2e-shards  sharded Prometheus beside a real cluster (not in make test)
#   make bench   the benchmarks recorded in docs/benchmarks.md

SHELL       := /bin/bash
GO          ?= go
BIN         := bin/kafka_replication_exporter
VERSION     ?= $(shell cat VERSION 2>/dev/null || echo 0.1.0)
REVISION    ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
BRANCH      ?= $(shell git rev-parse --abbrev-ref HEAD 2>/dev/null || echo unknown)
LDFLAGS     := -s -w \
	-X github.com/prometheus/common/version.Version=$(VERSION) \
	-X github.com/prometheus/common/version.Revision=$(REVISION) \
	-X github.com/prometheus/common/version.Branch=$(BRANCH) \
	-X github.com/prometheus/common/version.BuildUser=$(shell id -un)@$(shell hostname) \
	-X github.com/prometheus/common/version.BuildDate=$(shell date -u +%Y%m%d-%H:%M:%S)
UNIT_PKGS    = $(shell $(GO) list ./... | grep -v /e2e)

.PHONY: all build test unit lint rules dashboards render docs docs-check e2e e2e-shards run bench fuzz dashboard-png clean

all: build

# The same static binary the Dockerfile builds.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/kafka_replication_exporter

test: lint unit dashboards render docs-check e2e

# golangci-lint with the Prometheus projects' linters (.golangci.yml), pinned and cached by its install script.
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$$(bash .ci/install-golangci-lint.sh) run ./...
	$(GO) vet ./...
	cd dashboards && $(GO) vet ./...
	cd e2e/render && $(GO) vet ./...

unit:
	$(GO) test -race -count=1 $(UNIT_PKGS)

# promtool check/test rules, amtool, PrometheusRule sync and the dashboard checks all live in the
# dashboards module (it keeps the Grafana SDK and the PromQL parser out of the exporter's go.mod).
rules: dashboards

dashboards:
	bash .ci/install-prometheus-tools.sh
	cd dashboards && $(GO) test -count=1 ./...

# The renderer of docs/dashboard.png is a module of its own (it keeps the plotting library out of the
# exporter's go.mod); its tests draw the picture from a canned Prometheus.
render:
	cd e2e/render && $(GO) test -count=1 ./...

# The flags (docs/flags.md), metrics (docs/metrics.md) and alerts (README.md) tables are generated from the code,
# the golden scrape and the rule file; docs-check also follows every relative link of the docs and every runbook_url.
docs:
	$(GO) test ./cmd/kafka_replication_exporter/ -run TestReadmeTables -count=1 -update

docs-check:
	$(GO) test ./cmd/kafka_replication_exporter/ -run 'TestReadmeTables|TestGoldenHasEveryFamily|TestLinks|TestRunbookURLs|TestGithubSlug|TestParseMarkdown|TestReadmeIsShort' -count=1

e2e:
	bash .ci/e2e.sh

# Not in make test (five Prometheus beside a real cluster): TestShardedPrometheus, docs/deployment.md "Sharded Prometheus".
e2e-shards:
	bash .ci/install-prometheus-tools.sh
	KRE_E2E_SHARDS=1 $(GO) test -count=1 -v -timeout 10m -run '^TestShardedPrometheus$$' ./e2e/

# A built binary, not `go run`: go run exits 1 when its child is interrupted, so Ctrl-C ended
# `make run` with an error; devcluster itself stops its children and exits 0 on SIGINT/SIGTERM.
# make gets the terminal's SIGINT as well and, once devcluster has exited, ends with exit status
# 130 like any interrupted make, without an error line.
run: build
	$(GO) build -o bin/devcluster ./e2e/cmd/devcluster
	exec bin/devcluster

bench:
	bash bench/bench.sh

# Redraws docs/dashboard.png: the overview's panels from the alert loop's Prometheus (two nodes down, then restarted).
dashboard-png:
	bash .ci/install-prometheus-tools.sh
	RENDER_DASHBOARD=1 $(GO) test -count=1 -run 'TestAlertLoop$$' ./e2e/

fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzParse -fuzztime=60s ./internal/logparse/
	$(GO) test -run='^$$' -fuzz=FuzzSplitter -fuzztime=60s ./internal/logparse/

clean:
	rm -rf bin e2e.log e2e.log.retry
