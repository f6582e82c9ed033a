#!/usr/bin/env bash
# Builds Crossplane core from the Go module proxy into the version-keyed cache, with the CRDs
# `crossplane core init` installs (skipped when cached): every Crossplane of MATRIX_ROWS,
# or the versions given as arguments.
#
# Two module layouts: up to v2.2 the apis live inside the module and the version variable is
# internal/version's; from v2.3 `apis` is its own module, which go.mod replaces with ./apis (absent
# from the published module, so it is filled from apis/v2 at the same version), and the version
# variable is crossplane-runtime's pkg/version.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

build_one() {
  local version="$1"
  local dir
  dir="$(component_dir crossplane "$version")"
  if is_cached crossplane "$version" crossplane && [[ -d "$dir/crds" ]]; then return 0; fi

  writable_module_copy "github.com/crossplane/crossplane/v2@$version"
  log "building crossplane $version (several minutes)"
  cd "$work"
  if grep -q '^replace github.com/crossplane/crossplane/apis/v2 => ./apis' go.mod && [[ ! -d apis ]]; then
    local apis
    apis="$(module_dir "github.com/crossplane/crossplane/apis/v2@$version")"
    cp -r "$apis" apis
    chmod -R u+w apis
  fi
  # Without the version the package manager rejects packages constraining spec.crossplane.version
  # ("invalid semantic version").
  local version_var=github.com/crossplane/crossplane-runtime/v2/pkg/version.version
  [[ -f internal/version/version.go ]] && version_var=github.com/crossplane/crossplane/v2/internal/version.version
  go_explained build -ldflags "-X $version_var=$version $strip_ldflags" -o "$work/crossplane.bin" ./cmd/crossplane
  rm -rf "$dir/crds.tmp.$$"
  mkdir -p "$dir"
  cp -r cluster/crds "$dir/crds.tmp.$$"
  rm -rf "$dir/crds"
  mv "$dir/crds.tmp.$$" "$dir/crds"
  # The binary goes last: its presence is what marks the whole component as cached.
  install_atomically "$work/crossplane.bin" "$dir/crossplane"
  log "installed $dir"
}

if (($# == 0)); then
  mapfile -t versions < <(matrix_column 1)
  set -- "${versions[@]}"
fi
for version in "$@"; do
  # A subshell per version: each has its own work folder and EXIT trap.
  (build_one "$version")
done
