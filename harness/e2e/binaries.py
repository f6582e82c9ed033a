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
    lines = VERSIONS_FILE.read_text().splitlines()
    matches = (re.fullmatch(r"([A-Z_]+)=(\S+)", line.strip()) for line in lines)
    return {m[1]: os.environ.get(m[1]) or m[2] for m in matches if m}


def cache_root() -> Path:
    if os.environ.get("FIC_CACHE"):
        return Path(os.environ["FIC_CACHE"])
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "function-inference-clusters"


def helm() -> Path:
    """The Helm hack/controlplane/build-helm.sh builds (make test's chart check uses it too)."""
    return cache_root() / "bin" / f"helm-{versions()['HELM_VERSION']}" / "helm"


def crank() -> Path | None:
    """The Crossplane CLI: the one hack/install-crank.sh builds at CRANK_VERSION into
    $(go env GOPATH)/bin first, so a developer's other crank on PATH renders nothing here."""
    gopath = ""
    if shutil.which("go"):
        gopath = subprocess.run(
            ["go", "env", "GOPATH"], capture_output=True, text=True, check=False
        ).stdout.strip()
    pinned = Path(gopath or Path.home() / "go") / "bin" / "crank"
    if pinned.exists():
        return pinned
    on_path = shutil.which("crank")
    return Path(on_path) if on_path else None


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
        return [str(path) for path in vars(self).values() if not path.exists()]


@dataclass(frozen=True)
class Row:
    """One row of MATRIX_ROWS: what runs together on one engine."""

    crossplane: str
    kubernetes: str
    provider_kubernetes: str


def rows() -> list[Row]:
    """MATRIX_ROWS of hack/controlplane/versions.env, primary first."""
    listed = [r.strip() for r in versions()["MATRIX_ROWS"].split(",") if r.strip()]
    if not listed:
        raise ValueError("hack/controlplane/versions.env: MATRIX_ROWS lists no row")
    found = []
    for row in listed:
        parts = row.split("/")
        if len(parts) != 3 or not all(parts):
            raise ValueError(
                f"hack/controlplane/versions.env: MATRIX_ROWS row {row!r} is not "
                "CROSSPLANE/KUBERNETES/PROVIDER_KUBERNETES"
            )
        found.append(Row(*parts))
    return found


def release_order(version: str) -> tuple[int, ...]:
    """A release version (`v1.3.1`) as numbers, for sorting versions as releases, not text."""
    return tuple(int(part) for part in version.removeprefix("v").split("."))


def provider_kubernetes(version: str) -> tuple[Path, Path]:
    """That provider-kubernetes' binary and CRD folder, as build-provider-kubernetes.sh leaves
    them (the upgrade test runs two)."""
    folder = cache_root() / "bin" / f"provider-kubernetes-{version}"
    return folder / "provider", folder / "crds"


def etcd_for(kubernetes: str) -> str:
    for pair in versions()["ETCD_FOR_KUBERNETES"].split(","):
        named, _, etcd = pair.strip().partition(":")
        if named == kubernetes and etcd:
            return etcd
    raise ValueError(
        f"hack/controlplane/versions.env: ETCD_FOR_KUBERNETES names no etcd for Kubernetes "
        f"{kubernetes}"
    )


def locate(row: Row) -> Binaries:
    """The binaries of one row of the matrix, and what every row shares: one etcd, registry,
    provider-helm, crank, and the primary row's kubectl (build-kube.sh builds one client)."""
    v = versions()
    bin_root = cache_root() / "bin"
    crossplane = bin_root / f"crossplane-{row.crossplane}"
    provider, provider_crds = provider_kubernetes(row.provider_kubernetes)
    provider_helm = bin_root / f"provider-helm-{v['PROVIDER_HELM_VERSION']}"
    kube = bin_root / f"kube-{row.kubernetes}"
    client = bin_root / f"kube-{rows()[0].kubernetes}"
    # hack/controlplane/build-registry.sh keys the registry's cache folder by its source's hash.
    source = (REPO / "hack" / "controlplane" / "registry" / "main.go").read_bytes()
    registry = f"registry-{v['GGCR_VERSION']}-{hashlib.sha256(source).hexdigest()[:8]}"
    return Binaries(
        etcd=bin_root / f"etcd-{etcd_for(row.kubernetes)}" / "etcd",
        kube_apiserver=kube / "kube-apiserver",
        kube_controller_manager=kube / "kube-controller-manager",
        kubectl=client / "kubectl",
        crossplane=crossplane / "crossplane",
        crossplane_crds=crossplane / "crds",
        registry=bin_root / registry / "registry",
        provider_kubernetes=provider,
        provider_kubernetes_crds=provider_crds,
        provider_helm=provider_helm / "provider",
        provider_helm_crds=provider_helm / "crds",
        helm=helm(),
        crank=crank() or Path("crank"),
    )
