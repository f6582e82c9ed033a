#!/usr/bin/env bash
# Builds the etcd of every Kubernetes of MATRIX_ROWS (ETCD_FOR_KUBERNETES) from the Go module
# proxy into the version-keyed cache (each skipped when cached). The server's main package is
# go.etcd.io/etcd/server/v3 itself.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

build_one() {
  local version="$1"
  if is_cached etcd "$version" etcd; then return 0; fi
  throwaway_module
  log "building etcd $version"
  cd "$work"
  go get "go.etcd.io/etcd/server/v3@$version" >&2
  go build -ldflags "$strip_ldflags" -o "$work/etcd" go.etcd.io/etcd/server/v3
  install_atomically "$work/etcd" "$(component_dir etcd "$version")/etcd"
  log "installed $(component_dir etcd "$version")/etcd"
}

built=" "
while read -r kubernetes; do
  version="$(etcd_for "$kubernetes")"
  [[ "$built" == *" $version "* ]] && continue
  built+="$version "
  # A subshell per version: each has its own work folder and EXIT trap.
  (build_one "$version")
done < <(matrix_column 2)
