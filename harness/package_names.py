"""The Configuration packages, where their metadata is and what they depend on, and the names
Crossplane's package manager gives packages: shared by the Configuration build
(hack/configurations.py), its tests and the e2e install (harness/e2e/packages.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

# configurations/<cloud>/crossplane.yaml: each Configuration package's metadata.
CONFIGURATIONS = Path(__file__).resolve().parents[1] / "configurations"
# The clouds a Configuration package is built for, one per XR kind.
CONFIGURATION_CLOUDS = ("coreweave", "civo")


def configuration_package_file(cloud: str) -> str:
    """The file `make xpkg` builds a cloud's Configuration into, under build/."""
    return f"configuration-{cloud}.xpkg"


def declared(cloud: str) -> list[dict[str, Any]]:
    """What a cloud's Configuration depends on (its crossplane.yaml's spec.dependsOn)."""
    meta: dict[str, Any] = yaml.safe_load((CONFIGURATIONS / cloud / "crossplane.yaml").read_text())
    return list(meta["spec"]["dependsOn"])


# A DNS label is at most 63 characters; ToDNSLabel stops at index 62.
_DNS_LABEL_LAST = 62


def dependency_name(package: str) -> str:
    """The name Crossplane's package manager gives a package it installs as a dependency: its
    repository path without the registry, as a DNS label (resolver.NewPackage,
    xpkg.ToDNSLabel of crossplane-runtime v2.4.0; the same in Crossplane v2.1.0 and v2.3.4)."""
    first, _, rest = package.partition("/")
    # go-containerregistry reads the first component as a registry only if it looks like one.
    repository = (
        rest if rest and ("." in first or ":" in first or first == "localhost") else package
    )
    kept: list[str] = []
    for index, char in enumerate(repository):
        if "a" <= char <= "z" or "0" <= char <= "9":
            kept.append(char)
        if char in "./:-" and index not in (0, _DNS_LABEL_LAST, len(repository) - 1):
            kept.append("-")
        if index == _DNS_LABEL_LAST:
            break
    return "".join(kept).strip("-")
