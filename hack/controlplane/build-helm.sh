#!/usr/bin/env bash
# Builds the Helm CLI from the Go module proxy into the version-keyed cache (skipped when
# cached), at HELM_VERSION, which must be the Helm that provider-helm PROVIDER_HELM_VERSION
# embeds: the chart check in `make test` then renders exactly as that provider installs.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

version="$HELM_VERSION"
if is_cached helm "$version" helm; then exit 0; fi

provider_mod="$(go mod download -json \
  "github.com/crossplane-contrib/provider-helm@$PROVIDER_HELM_VERSION" |
  sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
embedded="$(awk '$1 == "helm.sh/helm/v3" { print $2; exit }' "$provider_mod")"
if [[ "$embedded" != "$version" ]]; then
  echo "provider-helm $PROVIDER_HELM_VERSION embeds Helm ${embedded:-?}, not HELM_VERSION=$version;" \
    "set HELM_VERSION in hack/controlplane/versions.env to match" >&2
  exit 1
fi

writable_module_copy "helm.sh/helm/v3@$version"
log "building helm $version"
cd "$work"
go_explained build -o "$work/helm.bin" \
  -ldflags "-X helm.sh/helm/v3/internal/version.version=$version $strip_ldflags" ./cmd/helm
install_atomically "$work/helm.bin" "$(component_dir helm "$version")/helm"
log "installed $(component_dir helm "$version")/helm"
