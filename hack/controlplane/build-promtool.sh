#!/usr/bin/env bash
# Builds Prometheus's promtool from the Go module proxy into the version-keyed cache (skipped
# when cached), for the alert rule check in `make test` (tests/test_alert_rules.py): promtool
# parses deploy/monitoring.yaml's rules and runs unit tests against them with the very PromQL
# engine a Prometheus server evaluates them with.
#
# PROMETHEUS_VERSION is the Go module version: Prometheus v3.X.Y is published as v0.3XX.Y.
# Its default lives here, not in versions.env, which is the e2e control plane's matrix; the
# test reads it from this file, so the two never disagree.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

# v0.316.0 = Prometheus v3.16.0, whose go.mod asks for Go 1.26.7: it builds with this machine's
# Go 1.26 (its own release builds use 1.27, which it does not require).
version="${PROMETHEUS_VERSION:-v0.316.0}"
if is_cached promtool "$version" promtool; then exit 0; fi

if ! command -v go >/dev/null 2>&1; then
  log "Go is not installed; the alert rule check will be skipped"
  exit 1
fi

writable_module_copy "github.com/prometheus/prometheus@$version"
log "building promtool $version"
cd "$work"
# The module ships a go.work naming modules its zip leaves out: build from go.mod alone.
export GOWORK=off
# Its .promu.yml release build: the VERSION file and the netgo tag (builtinassets only affects
# the server's web UI, which promtool does not link). remove_all_sd is Prometheus' documented
# tag (its README, "Service discovery plugins") that leaves out the optional service discoveries
# (AWS, Azure, GCE and a dozen more SDKs): rule checks and rule unit tests never load them, and
# the build takes a fraction of the time. Kubernetes, file and static discovery stay.
release="$(cat VERSION)"
go_explained build -tags netgo,remove_all_sd -o "$work/promtool.bin" \
  -ldflags "-X github.com/prometheus/common/version.Version=$release $strip_ldflags" ./cmd/promtool
install_atomically "$work/promtool.bin" "$(component_dir promtool "$version")/promtool"
log "installed $(component_dir promtool "$version")/promtool"
