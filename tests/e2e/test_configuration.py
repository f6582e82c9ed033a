"""The Configuration packages, installed by Crossplane's package manager as a user installs them.

On a control plane where the APIs were installed by hand (0.1.0's way: the XRDs and
Compositions applied, nothing else), both Configurations (`make xpkg`) are named by a
`Configuration` each, pulled from the suite's registry, and Crossplane resolves what they depend
on: the function and four providers, by their public references, which ImageConfigs rewrite to
the suite's registry (harness/e2e/packages.py). Proven: every package Installed and Healthy at
the version its Configuration declares, each dependency installed under the name the packaged
Composition calls it by, the XRDs and Compositions taken over by the packages (the same
objects, so no XR would be touched), and the managed-resource kinds activated exactly as the
activation policies say: the providers are SafeStart, so nothing else gets a CRD.
"""

from __future__ import annotations

import pytest
import yaml

from harness.e2e import kinds
from harness.e2e.binaries import REPO, versions
from harness.e2e.controlplane import ControlPlane
from harness.e2e.engine import Engine
from harness.e2e.kube import is_true
from harness.e2e.packages import (
    API_NAMES,
    UNTESTED_NEWER,
    identities,
    install_configurations,
    newest,
    proven_provider_kubernetes,
)
from harness.e2e.runtime import package_version
from harness.e2e.scene import apply_documents, wait_established
from harness.package_names import (
    CONFIGURATION_CLOUDS,
    CONFIGURATIONS,
    declared,
    dependency_name,
)
from tests.e2e.conftest import require_packages


def activated(cloud: str) -> list[str]:
    policy = yaml.safe_load((CONFIGURATIONS / cloud / "activation.yaml").read_text())
    return list(policy["spec"]["activate"])


@pytest.mark.every_engine
def test_the_configurations_install_with_what_they_depend_on(
    bare_plane: ControlPlane, summary: list[str], engine: Engine
) -> None:
    plane, version = bare_plane, f"v{package_version()}"
    require_packages()
    # The APIs installed by hand first, 0.1.0's way: the Configurations must take them over
    # without deleting anything (an XRD deleted takes its XRs' CRD, and every XR, with it).
    # `kubectl apply` of each kind's XRD and Composition, as the README's hand install.
    for api in sorted((REPO / "apis").iterdir()):
        apply_documents(plane, api / "definition.yaml")
        apply_documents(plane, api / "composition.yaml")
    wait_established(plane, kinds.XRD, API_NAMES)
    by_hand = identities(plane)
    took = install_configurations(plane)

    # What the package manager picked, from a registry that also serves a newer, untested
    # release of each provider (UNTESTED_NEWER) and every provider-kubernetes the matrix runs:
    # provider-kubernetes at the newest one proven, the upper bound of its range;
    # provider-helm at the release examples/configurations.yaml installs first (its range
    # admits v1.4 for Modelplane's sake); the rest at the one version served. Each under the
    # name derived from its repository, its spec.package the public reference.
    picked = {
        "xpkg.upbound.io/upbound/provider-kubernetes": newest(proven_provider_kubernetes()),
        "xpkg.upbound.io/upbound/provider-helm": versions()["PROVIDER_HELM_VERSION"],
        "ghcr.io/fabioaraujopt/provider-coreweave": "v0.1.0",
        "xpkg.upbound.io/upbound/provider-civo": "v0.1.0",
        "xpkg.upbound.io/modelplane/function-inference-clusters": version,
    }
    declared_packages = {d["package"] for cloud in CONFIGURATION_CLOUDS for d in declared(cloud)}
    assert declared_packages == set(picked)
    installed = {
        p["metadata"]["name"]: p["spec"]["package"]
        for kind in (kinds.PROVIDER, kinds.FUNCTION)
        for p in plane.api.list(kind)
    }
    assert installed == {
        dependency_name(package): f"{package}:{tag}" for package, tag in picked.items()
    }
    # The function examples/configurations.yaml creates first is the one the dependency uses,
    # with its runtime config.
    function = plane.api.get(kinds.FUNCTION, "modelplane-function-inference-clusters") or {}
    assert function["spec"]["runtimeConfigRef"]["name"] == "function-inference-clusters"
    lock = plane.api.get(kinds.LOCK, "lock") or {}
    locked = sorted(
        (p["source"], p["version"]) for p in lock["packages"] if p["kind"] != "Configuration"
    )
    assert locked == sorted(picked.items())
    assert not {v for _, v in locked} & set(UNTESTED_NEWER.values())

    # The APIs come from the packages: established, controlled by their ConfigurationRevision,
    # each Composition calling the function by the name it was installed under.
    for plural in ("coreweaveclusters", "civoclusters"):
        name = f"{plural}.infrastructure.modelplane.ai"
        # A Healthy revision has created the XRD; Crossplane establishes it next.
        wait_established(plane, kinds.XRD, [name])
        composition = plane.api.get(kinds.COMPOSITION, name) or {}
        controllers = [
            o["kind"]
            for o in composition["metadata"].get("ownerReferences", [])
            if o.get("controller")
        ]
        assert controllers == ["ConfigurationRevision"], composition["metadata"]
        assert [s["functionRef"]["name"] for s in composition["spec"]["pipeline"]] == [
            "modelplane-function-inference-clusters"
        ]

    # Adopted, not re-created: the same objects, the same XR CRDs.
    assert identities(plane) == by_hand

    # SafeStart: exactly what the activation policies list is active and has a CRD.
    mrds = {m["metadata"]["name"]: m["spec"].get("state") for m in plane.api.list(kinds.MRD)}
    active = sorted(name for name, state in mrds.items() if state == "Active")
    assert active == sorted(name for cloud in CONFIGURATION_CLOUDS for name in activated(cloud))
    wait_established(plane, kinds.MRD, active)
    crds = {c["metadata"]["name"] for c in plane.api.list(kinds.CRD)}
    assert {name for name in mrds if name in crds} == set(active)
    for name in sorted(set(mrds) - set(active)):
        assert not is_true(plane.api.get(kinds.MRD, name), "Established"), name
    summary.append(
        f"Configurations on {engine.label}: both and their 5 dependencies Installed and Healthy "
        f"{took:.1f} s after they were created; {len(active)} managed-resource kinds activated; "
        f"provider-kubernetes resolved to {picked['xpkg.upbound.io/upbound/provider-kubernetes']} "
        f"of {', '.join([*proven_provider_kubernetes(), UNTESTED_NEWER['provider-kubernetes']])}"
    )
