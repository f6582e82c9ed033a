#!/usr/bin/env bash
# Builds the tiny OCI registry in registry/main.go into the version-keyed cache
# (skipped when cached). The version is go-containerregistry's.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

version="$GGCR_VERSION"
if is_cached registry "$version" registry; then exit 0; fi

main_go="$(cd "$(dirname "$0")" && pwd)/registry/main.go"
log "building the OCI registry (go-containerregistry $version)"
throwaway_module
cd "$work"
cp "$main_go" main.go
sed -i 's/^module build$/module registry/' go.mod
GOFLAGS=-mod=mod go get "github.com/google/go-containerregistry@$version" >&2
GOFLAGS=-mod=mod go build -o "$work/registry.bin" .
install_atomically "$work/registry.bin" "$(component_dir registry "$version")/registry"
log "installed $(component_dir registry "$version")/registry"
