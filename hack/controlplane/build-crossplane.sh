#!/usr/bin/env bash
# Builds Crossplane core from the Go module proxy into the version-keyed cache, with the CRDs
# `crossplane core init` installs (skipped when cached).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

version="$CROSSPLANE_VERSION"
dir="$(component_dir crossplane "$version")"
if is_cached crossplane "$version" crossplane && [[ -d "$dir/crds" ]]; then exit 0; fi

log "building crossplane $version (several minutes)"
writable_module_copy "github.com/crossplane/crossplane/v2@$version"
cd "$work"
# Without the version the package manager rejects packages constraining spec.crossplane.version.
GOFLAGS=-mod=mod go build \
  -ldflags "-X github.com/crossplane/crossplane/v2/internal/version.version=$version" \
  -o "$work/crossplane.bin" ./cmd/crossplane
rm -rf "$dir/crds.tmp.$$"
mkdir -p "$dir"
cp -r cluster/crds "$dir/crds.tmp.$$"
rm -rf "$dir/crds"
mv "$dir/crds.tmp.$$" "$dir/crds"
# The binary goes last: its presence is what marks the whole component as cached.
install_atomically "$work/crossplane.bin" "$dir/crossplane"
log "installed $dir"
