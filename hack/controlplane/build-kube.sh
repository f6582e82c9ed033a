#!/usr/bin/env bash
# Builds kube-apiserver and kube-controller-manager for every Kubernetes of MATRIX_ROWS, and
# kubectl for the primary row's, from the Go module proxy into the version-keyed cache (each
# skipped when cached). kubectl runs the README's commands as written (tests/e2e/test_readme.py);
# one client is enough, and each more is minutes of a cold build.
#
# k8s.io/kubernetes is not meant to be imported: its go.mod points the k8s.io/* staging modules
# at ./staging, so a throwaway module requires it and replaces each staging module with the
# published v0.<minor>.<patch> release of the same code.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

build_one() {
  local version="$1"
  shift
  local staging_version="v0.${version#v1.}"
  local dir
  dir="$(component_dir kube "$version")"
  local binaries=()
  for binary in "$@"; do
    is_cached kube "$version" "$binary" || binaries+=("$binary")
  done
  if (( ${#binaries[@]} == 0 )); then
    return 0
  fi

  throwaway_module
  log "building ${binaries[*]} $version (several minutes)"
  cd "$work"
  local kubernetes_dir
  kubernetes_dir="$(module_dir "k8s.io/kubernetes@$version")"
  # The etcd the suite runs it on must be the one it is built and tested with.
  local required_etcd paired_etcd
  required_etcd="$(sed -n 's#^[[:space:]]*go\.etcd\.io/etcd/server/v3 \(v[^[:space:]]*\).*#\1#p' \
    "$kubernetes_dir/go.mod")"
  paired_etcd="$(etcd_for "$version")"
  if [[ "$required_etcd" != "$paired_etcd" ]]; then
    log "k8s.io/kubernetes $version requires etcd $required_etcd; ETCD_FOR_KUBERNETES pairs it with $paired_etcd"
    exit 1
  fi
  # Kubernetes' own replace block lists every staging module as `k8s.io/x => ./staging/src/k8s.io/x`.
  sed -n 's#^[[:space:]]*\(k8s\.io/[^[:space:]]*\) => \./staging/.*#\1#p' "$kubernetes_dir/go.mod" \
    | while read -r module; do
        echo "replace $module => $module $staging_version" >> go.mod
      done
  echo "require k8s.io/kubernetes $version" >> go.mod
  {
    printf 'package build\n\nimport (\n'
    for binary in "${binaries[@]}"; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$binary"; done
    printf ')\n'
  } > tools.go
  go_explained mod tidy
  local minor="${version#v1.}"
  minor="${minor%%.*}"
  # Without these the servers report v0.0.0-master, which clients and Crossplane treat as too old.
  local ldflags="-X k8s.io/component-base/version.gitVersion=$version"
  ldflags+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
  for binary in "${binaries[@]}"; do
    log "go build $binary $version"
    go build -ldflags "$ldflags $strip_ldflags" -o "$work/$binary" "k8s.io/kubernetes/cmd/$binary"
    install_atomically "$work/$binary" "$dir/$binary"
  done
  log "installed $dir"
}

mapfile -t versions < <(matrix_column 2)
for version in "${versions[@]}"; do
  servers=(kube-apiserver kube-controller-manager)
  [[ "$version" == "${versions[0]}" ]] && servers+=(kubectl)
  # A subshell per version: each has its own work folder and EXIT trap.
  (build_one "$version" "${servers[@]}")
done
