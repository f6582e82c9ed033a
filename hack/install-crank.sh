#!/usr/bin/env bash
# Installs the real Crossplane CLI (binary `crank`) without Docker, into $(go env GOPATH)/bin.
#
# `go install .../cmd/crank@v2.2.4` is what upstream documents, but the Go module proxy this
# project builds against serves neither v2.2.x nor the module's version list (which `go install`
# reads for deprecation notices). v2.1.0 is served; building it from a throwaway module with
# `go get` + `go build` skips the version-list lookup. render and beta validate behave the same
# for this project's use on v2.1 and v2.2.
set -euo pipefail

version="${CRANK_VERSION:-v2.1.0}"
bin_dir="$(go env GOPATH)/bin"
target="$bin_dir/crank"
stamp="$bin_dir/.crank-version"

if [[ -x "$target" && -f "$stamp" && "$(cat "$stamp")" == "$version" ]]; then
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "install-crank: Go is not installed; the Crossplane CLI checks will be skipped" >&2
  exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
cat > go.mod <<MOD
module crankbuild

go 1.25
MOD
echo "install-crank: building crank $version (first run takes a few minutes)" >&2
GOFLAGS=-mod=mod go get "github.com/crossplane/crossplane/v2/cmd/crank@$version" >&2
mkdir -p "$bin_dir"
GOFLAGS=-mod=mod go build -o "$target" github.com/crossplane/crossplane/v2/cmd/crank
echo "$version" > "$stamp"
echo "install-crank: installed $target" >&2
