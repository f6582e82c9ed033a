#!/usr/bin/env bash
# Builds the real provider-helm from the Go module proxy into the version-keyed cache, with its
# own CRDs (skipped when cached). Two of its package variables are set at link time, both
# paths of the machine rather than behaviour:
#   - controller-runtime's metrics address, ":8080" by default with no flag, the port
#     provider-kubernetes binds too: "0" turns provider-helm's off, so it binds no port at all;
#   - the chart cache, "/tmp/charts" by default, shared by every run on the machine: "charts"
#     makes it relative to the process's working folder, so each e2e run pulls its own charts.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

version="$PROVIDER_HELM_VERSION"
dir="$(component_dir provider-helm "$version")"
if is_cached provider-helm "$version" provider && [[ -d "$dir/crds" ]]; then exit 0; fi

writable_module_copy "github.com/crossplane-contrib/provider-helm@$version"
log "building provider-helm $version"
cd "$work"
ldflags="-X sigs.k8s.io/controller-runtime/pkg/metrics/server.DefaultBindAddress=0"
ldflags+=" -X github.com/crossplane-contrib/provider-helm/pkg/clients/helm.chartCache=charts"
ldflags+=" -X github.com/crossplane-contrib/provider-helm/pkg/version.Version=$version"
go_explained build -ldflags "$ldflags $strip_ldflags" -o "$work/provider.bin" ./cmd/provider
install_crds_atomically package/crds "$dir/crds"
install_atomically "$work/provider.bin" "$dir/provider"
log "installed $dir"
