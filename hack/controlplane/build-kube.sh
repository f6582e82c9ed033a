#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager and kubectl from the Go module proxy into the
# version-keyed cache (each skipped when cached). kubectl runs the README's commands as written
# (tests/e2e/test_readme.py).
#
# k8s.io/kubernetes is not meant to be imported: its go.mod points the k8s.io/* staging modules
# at ./staging, so a throwaway module requires it and replaces each staging module with the
# published v0.<minor>.<patch> release of the same code.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

version="$KUBE_VERSION"
staging_version="v0.${version#v1.}"
dir="$(component_dir kube "$version")"
binaries=()
for binary in kube-apiserver kube-controller-manager kubectl; do
  is_cached kube "$version" "$binary" || binaries+=("$binary")
done
if (( ${#binaries[@]} == 0 )); then
  exit 0
fi

log "building ${binaries[*]} $version (several minutes)"
throwaway_module
cd "$work"
kubernetes_dir="$(GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$version" \
  | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
# Kubernetes' own replace block lists every staging module as `k8s.io/x => ./staging/src/k8s.io/x`.
sed -n 's#^[[:space:]]*\(k8s\.io/[^[:space:]]*\) => \./staging/.*#\1#p' "$kubernetes_dir/go.mod" \
  | while read -r module; do
      echo "replace $module => $module $staging_version" >> go.mod
    done
echo "require k8s.io/kubernetes $version" >> go.mod
cat > tools.go <<'GO'
package build

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
GOFLAGS=-mod=mod go mod tidy >&2
minor="${version#v1.}"
minor="${minor%%.*}"
# Without these the servers report v0.0.0-master, which clients and Crossplane treat as too old.
ldflags="-X k8s.io/component-base/version.gitVersion=$version"
ldflags+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
for binary in "${binaries[@]}"; do
  log "go build $binary"
  GOFLAGS=-mod=mod go build -ldflags "$ldflags" -o "$work/$binary" "k8s.io/kubernetes/cmd/$binary"
  install_atomically "$work/$binary" "$dir/$binary"
done
log "installed $dir"
