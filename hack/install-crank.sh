#!/usr/bin/env bash
# Installs the real Crossplane CLI (binary `crank`) without Docker, into $(go env GOPATH)/bin, at
# CRANK_VERSION of hack/controlplane/versions.env.
#
# `go install .../cmd/crank@VERSION` reads the module's version list for deprecation notices,
# which the Go module proxy this project builds against refuses; building from a throwaway module
# with `go get` + `go build` skips that lookup. v2.2.1 is the newest crank the crossplane/v2
# module has: from v2.3 the CLI lives in github.com/crossplane/cli, which the proxy refuses.
set -euo pipefail
source "$(dirname "$0")/controlplane/lib.sh"

if ! command -v go >/dev/null 2>&1; then
  echo "install-crank: Go is not installed; the Crossplane CLI checks will be skipped" >&2
  exit 1
fi
version="$CRANK_VERSION"
bin_dir="$(go env GOPATH)/bin"
target="$bin_dir/crank"
stamp="$bin_dir/.crank-version"

if [[ -x "$target" && -f "$stamp" && "$(cat "$stamp")" == "$version" ]]; then
  exit 0
fi

make_work_dir
cd "$work"
cat > go.mod <<MOD
module crankbuild

go 1.25
MOD
echo "install-crank: building crank $version (first run takes a few minutes)" >&2
go_explained get "github.com/crossplane/crossplane/v2/cmd/crank@$version"
mkdir -p "$bin_dir"
go_explained build -ldflags "$strip_ldflags" -o "$target.tmp.$$" github.com/crossplane/crossplane/v2/cmd/crank
mv -f "$target.tmp.$$" "$target"
echo "$version" > "$stamp"
echo "install-crank: installed $target" >&2
