# Every target installs what it needs itself: a fresh clone needs only Python 3.11+ (and Go for
# the Crossplane CLI, Helm and promtool, whose checks skip with a message without it). Under
# FIC_TOOLS_REQUIRED=1 (.ci/run) a tool that fails to build fails make, and a skip fails the tests.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
ADDRESS ?= 0.0.0.0:9443

.PHONY: run test lint typecheck unit render render-check crank helm promtool validator clean

# A tool build's failure is ignored (its checks then skip), but not where every check must run.
TOOL_FAILURE := $(if $(filter 1,$(FIC_TOOLS_REQUIRED)),,-)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

## run: serve the function locally without TLS (what `crossplane render` talks to)
run: $(STAMP)
	$(BIN)/function --insecure --debug --address=$(ADDRESS)

## test: format, lint, type-check, unit and lifecycle tests, and the crank render/validate check
test: lint typecheck render-check unit

lint: $(STAMP)
	$(BIN)/ruff format --check function tests hack harness
	$(BIN)/ruff check function tests hack harness

typecheck: $(STAMP)
	$(BIN)/mypy

# The image and e2e suites need their builds first: make image-test, make e2e. A worker a core
# (each with its own validator process): the tests share no files and take free ports; on 2
# cores, with another job running, 80.7 s against 112.9 s in one process.
unit: $(STAMP) helm promtool validator
	$(BIN)/pytest -n auto --ignore=tests/e2e --ignore=tests/image

crank:
	$(TOOL_FAILURE)bash hack/install-crank.sh

# The Helm provider-helm embeds, for the chart check (tests/test_autoscaler_chart.py); cached
# outside the clone. Without Go the check skips with a message.
helm:
	$(TOOL_FAILURE)bash hack/controlplane/build-helm.sh

# Prometheus's promtool, for the alert rule check (tests/test_alert_rules.py); cached outside the
# clone. Without Go the check skips with a message.
promtool:
	$(TOOL_FAILURE)bash hack/controlplane/build-promtool.sh

# kube-apiserver's own validation code and Crossplane's XRD-to-CRD conversion behind a pipe, for
# every check against the real CRDs (harness/validator.py); cached outside the clone. Without Go
# those checks skip with a message.
validator:
	$(TOOL_FAILURE)bash hack/controlplane/build-validator.sh

## render: regenerate tests/stages/<set>/rendered/<stage>.yaml with the real crank render
render: $(STAMP) crank
	$(BIN)/python -m hack.render --write

## render-check: re-render every example stage, fail on any difference, validate them and examples/ offline
render-check: $(STAMP) crank
	$(BIN)/python -m hack.render --check

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .xpcache

.PHONY: bench

## bench: converged 8-pool XRs as Crossplane sends them, fleets of 1-1024, the function (metrics on) vs the no-op floor: latency, CPU, RSS, calls per reconcile, concurrent callers -> bench/results.md (BENCH_QUICK=1: smoke run)
bench: $(STAMP)
	$(BIN)/python -m hack.bench

.PHONY: wheels image xpkg configurations image-test image-lock

# Any fixed time makes rebuilds byte-identical; the content, not the clock, identifies an image.
SOURCE_DATE_EPOCH ?= 1764547200
export SOURCE_DATE_EPOCH
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml)
IMAGE_TAG ?= function-inference-clusters:v$(VERSION)
# The crank `make crank` pins (CRANK_VERSION) before any other on PATH, as the tests find it
# (harness/e2e/binaries.crank): another version would package differently.
CRANK ?= $(shell pinned="$$(go env GOPATH 2>/dev/null || echo $$HOME/go)/bin/crank"; \
	[ -x "$$pinned" ] || pinned="$$(command -v crank || echo "$$pinned")"; echo "$$pinned")

## wheels: this checkout's wheel + the locked dependency wheels -> build/wheels (what the Dockerfile installs)
wheels:
	python3 hack/image/wheels.py

## image: the runtime image as a docker-save tarball, no Docker needed (mmdebstrap, as root) -> build/image.tar
image:
	bash hack/image/build.sh build/image.tar $(IMAGE_TAG)

## xpkg: the Function package with the runtime image embedded -> build/function-inference-clusters.xpkg, and the Configuration packages -> build/configuration-{coreweave,civo}.xpkg
xpkg: image crank configurations
	$(CRANK) xpkg build -f package --embed-runtime-image-tarball=build/image.tar \
		-o build/function-inference-clusters.xpkg

## configurations: the Configuration packages, one per cloud (configurations/, apis/, examples/) -> build/configuration-<cloud>.xpkg
configurations: $(STAMP) crank
	$(BIN)/python hack/configurations.py --crank $(CRANK) --out build

## image-test: run the built image (chroot as UID 2000: mTLS, renders) and inspect the xpkg
image-test: xpkg $(STAMP)
	$(BIN)/pytest -rfEs tests/image

## image-lock: re-resolve the image's dependency wheels into hack/image/requirements.lock
image-lock:
	python3 hack/image/wheels.py --lock

.PHONY: e2e controlplane previous-release

## controlplane: build etcd, kube-apiserver/-controller-manager, every Crossplane of the version matrix (hack/controlplane/versions.env), a registry and provider-kubernetes from the Go module proxy (cached outside the clone)
controlplane: crank
	bash hack/controlplane/build-all.sh

## previous-release: the previous release's Function package (hack/release/previous.env), built from its commit, for the upgrade test (cached outside the clone)
previous-release: $(STAMP) crank
	$(BIN)/python -m harness.e2e.releases

## e2e: install the xpkg into a real Crossplane on 127.0.0.1, drive both XRs through their lifecycle (tests/e2e), on every engine of the version matrix, its shards side by side (a worker and control plane each), a line per test naming its engine and providers; a skip fails here
e2e: $(STAMP) controlplane validator xpkg previous-release
	FIC_E2E_REQUIRED=1 $(BIN)/pytest tests/e2e -n auto -vv -rfEs --durations=0

.PHONY: fleet

## fleet: FLEET_SIZE (default 32) CoreWeaveClusters and CivoClusters to Ready on the e2e control plane (the primary engine; Crossplane at --max-reconcile-rate FLEET_RECONCILE_RATE, default 100), an idle window, then deleted: time to Ready, calls per reconcile, memo hits, CPU per XR-hour -> bench/fleet.md (not in CI; under 30 minutes on 2 cores)
fleet: $(STAMP) controlplane
	$(BIN)/python -m hack.fleet
