#!/usr/bin/env bash
# Builds the real provider-kubernetes from the Go module proxy into the version-keyed cache,
# with its own CRDs (skipped when cached).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

version="$PROVIDER_KUBERNETES_VERSION"
dir="$(component_dir provider-kubernetes "$version")"
if is_cached provider-kubernetes "$version" provider && [[ -d "$dir/crds" ]]; then exit 0; fi

log "building provider-kubernetes $version"
writable_module_copy "github.com/crossplane-contrib/provider-kubernetes@$version"
cd "$work"
GOFLAGS=-mod=mod go build -o "$work/provider.bin" ./cmd/provider
install_crds_atomically package/crds "$dir/crds"
install_atomically "$work/provider.bin" "$dir/provider"
log "installed $dir"
