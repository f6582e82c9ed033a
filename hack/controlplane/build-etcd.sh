#!/usr/bin/env bash
# Builds etcd from the Go module proxy into the version-keyed cache (skipped when cached).
# The server's main package is go.etcd.io/etcd/server/v3 itself.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

version="$ETCD_VERSION"
if is_cached etcd "$version" etcd; then exit 0; fi

log "building etcd $version"
throwaway_module
cd "$work"
GOFLAGS=-mod=mod go get "go.etcd.io/etcd/server/v3@$version" >&2
GOFLAGS=-mod=mod go build -o "$work/etcd" go.etcd.io/etcd/server/v3
install_atomically "$work/etcd" "$(component_dir etcd "$version")/etcd"
log "installed $(component_dir etcd "$version")/etcd"
