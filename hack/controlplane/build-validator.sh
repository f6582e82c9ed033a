#!/usr/bin/env bash
# Builds validator/ (kube-apiserver's own custom-resource validation and Crossplane's own
# XRD-to-CRD conversion, behind a JSON-lines pipe) into the version-keyed cache, for the unit
# tests that check rendered objects against the real CRDs and XRDs (harness/validator.py).
#
# validator/go.mod pins k8s.io/apiextensions-apiserver at the primary engine's Kubernetes
# (the first row of MATRIX_ROWS: v1.X.Y is v0.X.Y) and crossplane-runtime at its Crossplane;
# this script refuses to build when they drift apart. The cache key is the source's own hash,
# so any change to main.go or go.mod builds anew.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

source_dir="$(cd "$(dirname "$0")/validator" && pwd)"
primary="${MATRIX_ROWS%%,*}"
crossplane="$(cut -d/ -f1 <<<"$primary")"
kubernetes="$(cut -d/ -f2 <<<"$primary")"
for pin in "k8s.io/apiextensions-apiserver v0.${kubernetes#v1.}" \
  "github.com/crossplane/crossplane-runtime/v2 $crossplane"; do
  if ! grep -qF "	$pin" "$source_dir/go.mod"; then
    echo "build-validator: validator/go.mod must require $pin (the primary engine $primary)" >&2
    exit 1
  fi
done
version="$(cat "$source_dir/main.go" "$source_dir/go.mod" "$source_dir/go.sum" | sha256sum | cut -c1-12)"
if is_cached validator "$version" validator; then exit 0; fi

if ! command -v go >/dev/null 2>&1; then
  log "Go is not installed; the checks against the real CRDs will be skipped"
  exit 1
fi
make_work_dir
log "building the validator (Kubernetes $kubernetes, Crossplane $crossplane)"
cp "$source_dir/main.go" "$source_dir/go.mod" "$source_dir/go.sum" "$work/"
cd "$work"
go_explained build -trimpath -ldflags "$strip_ldflags" -o "$work/validator.bin" .
install_atomically "$work/validator.bin" "$(component_dir validator "$version")/validator"
log "installed $(component_dir validator "$version")/validator"
