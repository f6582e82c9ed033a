#!/usr/bin/env bash
# Builds every provider-kubernetes of MATRIX_ROWS from the Go module proxy into the version-keyed
# cache, each with its own CRDs (skipped when cached).
#
# provider-kubernetes v1.3.x requires a release of github.com/nebius/gosdk the proxy refuses, so
# where its go.mod names that module the build requires PROVIDER_KUBERNETES_GO_REQUIRE instead,
# the ordinary Go way (`go mod edit -require` on a writable copy of the module, whose own
# replace lines stay as they are).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

build_one() {
  local version="$1"
  local dir
  dir="$(component_dir provider-kubernetes "$version")"
  if is_cached provider-kubernetes "$version" provider && [[ -d "$dir/crds" ]]; then return 0; fi

  writable_module_copy "github.com/crossplane-contrib/provider-kubernetes@$version"
  log "building provider-kubernetes $version"
  cd "$work"
  local required="${PROVIDER_KUBERNETES_GO_REQUIRE%@*}"
  if grep -qE "^[[:space:]]*(require[[:space:]]+)?${required//./\\.} v" go.mod; then
    log "requiring $PROVIDER_KUBERNETES_GO_REQUIRE in place of $(grep -oE "${required//./\\.} v[^[:space:]]+" go.mod | head -1)"
    go mod edit -require="$PROVIDER_KUBERNETES_GO_REQUIRE"
  fi
  go_explained build -ldflags "$strip_ldflags" -o "$work/provider.bin" ./cmd/provider
  install_crds_atomically package/crds "$dir/crds"
  # The binary goes last: its presence is what marks the whole component as cached.
  install_atomically "$work/provider.bin" "$dir/provider"
  log "installed $dir"
}

mapfile -t versions < <(matrix_column 3)
for version in "${versions[@]}"; do
  # A subshell per version: each has its own work folder and EXIT trap.
  (build_one "$version")
done
