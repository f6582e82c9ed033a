#!/usr/bin/env bash
# Builds the tiny OCI registry in registry/main.go into the version-keyed cache
# (skipped when cached). The version is go-containerregistry's and the source's own hash, so
# a change to main.go builds anew.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

main_go="$(cd "$(dirname "$0")" && pwd)/registry/main.go"
cache_key="$GGCR_VERSION-$(sha256sum "$main_go" | cut -c1-8)"
if is_cached registry "$cache_key" registry; then exit 0; fi

throwaway_module
log "building the OCI registry (go-containerregistry $GGCR_VERSION)"
cd "$work"
cp "$main_go" main.go
sed -i 's/^module build$/module registry/' go.mod
go get "github.com/google/go-containerregistry@$GGCR_VERSION" >&2
go build -ldflags "$strip_ldflags" -o "$work/registry.bin" .
install_atomically "$work/registry.bin" "$(component_dir registry "$cache_key")/registry"
log "installed $(component_dir registry "$cache_key")/registry"
