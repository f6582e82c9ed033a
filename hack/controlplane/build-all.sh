#!/usr/bin/env bash
# Builds (or finds cached) every binary the e2e control plane runs, one after another: parallel
# Go builds on a 2-core machine only thrash. Prints each step's time. crank comes from
# hack/install-crank.sh, which installs it into $(go env GOPATH)/bin.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

for step in build-etcd build-kube build-crossplane build-registry build-provider-kubernetes \
  build-promtool \
  build-helm build-provider-helm; do
  start=$SECONDS
  bash "$here/$step.sh"
  echo "build-all: $step done in $((SECONDS - start)) s" >&2
done
start=$SECONDS
bash "$here/../install-crank.sh"
echo "build-all: install-crank done in $((SECONDS - start)) s" >&2
