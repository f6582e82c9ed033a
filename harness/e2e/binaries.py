"""Where the e2e suite finds the binaries hack/controlplane/build-all.sh builds.

The versions come from hack/controlplane/versions.env, the same file the build scripts read,
so the suite looks exactly where they put things.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
VERSIONS_FILE = REPO / "hack" / "controlplane" / "versions.env"


def versions() -> dict[str, str]:
    found: dict[str, str] = {}
    for line in VERSIONS_FILE.read_text().splitlines():
        match = re.fullmatch(r"([A-Z_]+)=(\S+)", line.strip())
        if match:
            name, value = match.groups()
            found[name] = os.environ.get(name) or value
    return found


def cache_root() -> Path:
    if os.environ.get("FIC_CACHE"):
        return Path(os.environ["FIC_CACHE"])
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "function-inference-clusters"


def _registry_source_hash() -> str:
    """The hash hack/controlplane/build-registry.sh keys the registry's cache folder by."""
    source = REPO / "hack" / "controlplane" / "registry" / "main.go"
    return hashlib.sha256(source.read_bytes()).hexdigest()[:8]


def helm() -> Path:
    """The Helm hack/controlplane/build-helm.sh builds (make test's chart check uses it too)."""
    return cache_root() / "bin" / f"helm-{versions()['HELM_VERSION']}" / "helm"


def _crank() -> Path:
    # hack/install-crank.sh installs into $(go env GOPATH)/bin; PATH may also have one.
    if shutil.which("go"):
        gopath = subprocess.run(
            ["go", "env", "GOPATH"], capture_output=True, text=True, check=False
        ).stdout.strip()
        candidate = Path(gopath) / "bin" / "crank"
        if candidate.exists():
            return candidate
    return Path(shutil.which("crank") or "crank")


@dataclass(frozen=True)
class Binaries:
    etcd: Path
    kube_apiserver: Path
    kube_controller_manager: Path
    # The client users run: tests/e2e/test_readme.py runs the README's commands with it.
    kubectl: Path
    crossplane: Path
    crossplane_crds: Path
    registry: Path
    provider_kubernetes: Path
    provider_kubernetes_crds: Path
    provider_helm: Path
    provider_helm_crds: Path
    helm: Path
    crank: Path

    def missing(self) -> list[str]:
        return [
            str(path)
            for path in vars(self).values()
            if isinstance(path, Path) and not path.exists()
        ]


def locate(crossplane_version: str) -> Binaries:
    """The binaries of one engine of the matrix: that Crossplane, and everything else the
    matrix runs under every engine."""
    v = versions()
    bin_root = cache_root() / "bin"
    crossplane = bin_root / f"crossplane-{crossplane_version}"
    provider = bin_root / f"provider-kubernetes-{v['PROVIDER_KUBERNETES_VERSION']}"
    provider_helm = bin_root / f"provider-helm-{v['PROVIDER_HELM_VERSION']}"
    kube = bin_root / f"kube-{v['KUBE_VERSION']}"
    return Binaries(
        etcd=bin_root / f"etcd-{v['ETCD_VERSION']}" / "etcd",
        kube_apiserver=kube / "kube-apiserver",
        kube_controller_manager=kube / "kube-controller-manager",
        kubectl=kube / "kubectl",
        crossplane=crossplane / "crossplane",
        crossplane_crds=crossplane / "crds",
        registry=bin_root / f"registry-{v['GGCR_VERSION']}-{_registry_source_hash()}" / "registry",
        provider_kubernetes=provider / "provider",
        provider_kubernetes_crds=provider / "crds",
        provider_helm=provider_helm / "provider",
        provider_helm_crds=provider_helm / "crds",
        helm=helm(),
        crank=_crank(),
    )
