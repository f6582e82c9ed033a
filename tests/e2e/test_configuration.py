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

from pathlib import Path
from typing import Any

import pytest
import yaml

from hack.configurations import CLOUDS
from hack.configurations import build as build_configuration
from harness.e2e import guard, kinds
from harness.e2e.binaries import REPO, versions
from harness.e2e.controlplane import ControlPlane
from harness.e2e.engine import Engine
from harness.e2e.kube import WaitTimedOut, condition, is_true, wait_for
from harness.e2e.packages import (
    API_NAMES,
    PARENT_PACKAGE,
    UNTESTED_NEWER,
    configuration_reference,
    identities,
    install_configurations,
    newest,
    proven_provider_kubernetes,
)
from harness.e2e.runtime import INSTALL_SECONDS, package_version, push
from harness.e2e.scene import apply_documents, wait_established
from harness.e2e.user_cli import user_environment
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


# The package the upgrade moves the Civo Configuration to: this release's, with a range that
# admits the next minor of the function too, so that its digest is new.
UPGRADE_TAG = "v0.2.1-guarded"
UPGRADE_RANGE = ">=v0.2.0, <v0.4.0"


@pytest.mark.every_engine
def test_the_deletion_guard_refuses_what_would_cascade_and_lets_an_upgrade_through(
    bare_plane: ControlPlane, summary: list[str], engine: Engine, tmp_path: Path
) -> None:
    """On the Configurations the test above installed: install.md's command applies the guard;
    then every delete it names is refused with the message the page quotes, nothing is
    deleted, and a Configuration upgrade (a new revision taking the XRD over) still goes
    through with the same APIs."""
    plane = bare_plane
    require_packages()
    env = user_environment(plane, tmp_path)
    apis = identities(plane)
    assert "missing" not in apis.values(), apis
    in_force = guard.apply_as_installed(env)
    said = {}
    for resource, kind, name in guard.GUARDED:
        code, output = guard.kubectl(env, "delete", resource, name)
        assert (code, output) == (1, guard.refusal(resource, kind, name))
        said[(kind, name)] = output
    assert said[("CompositeResourceDefinition", "civoclusters.infrastructure.modelplane.ai")] == (
        guard.quoted_refusal("install.md", guard.INSTALL_SECTION)
    )
    assert identities(plane) == apis

    # An upgrade with the guard in place: a new package digest, so a new revision, which
    # takes control of the same XRD and Composition and deletes nothing.
    civo = next(cloud for cloud in CLOUDS if cloud.name == "civo")
    built = build_configuration(str(plane.binaries.crank), civo, tmp_path, UPGRADE_RANGE)
    push(plane, built, configuration_reference(plane.registry_port, "civo", UPGRADE_TAG))
    name = "inference-clusters-civo"
    before = plane.api.get(kinds.CONFIGURATION, name) or {}
    public = before["spec"]["package"].rsplit(":", 1)[0]
    plane.api.merge_patch(
        kinds.CONFIGURATION, name, {"spec": {"package": f"{public}:{UPGRADE_TAG}"}}
    )

    seen: dict[str, Any] = {}

    def upgraded() -> dict[str, Any] | None:
        revisions = plane.api.list(kinds.CONFIGURATION_REVISION, labels=f"{PARENT_PACKAGE}={name}")
        xrd = plane.api.get(kinds.XRD, "civoclusters.infrastructure.modelplane.ai") or {}
        seen["revisions"] = [
            (
                r["metadata"]["name"],
                r["spec"].get("desiredState"),
                r["spec"].get("image"),
                condition(r, "RevisionHealthy").get("status"),
            )
            for r in revisions
        ]
        seen["xrd owners"] = xrd["metadata"].get("ownerReferences", [])
        active = [r for r in revisions if r["spec"].get("desiredState") == "Active"]
        controller = [o["name"] for o in seen["xrd owners"] if o.get("controller")]
        # The Configuration reports its Healthy after the revision has.
        configuration = plane.api.get(kinds.CONFIGURATION, name)
        seen["configuration healthy"] = condition(configuration, "Healthy").get("status")
        done = len(active) == 1 and active[0]["spec"]["image"].endswith(UPGRADE_TAG)
        done = done and is_true(configuration, "Healthy")
        if (
            done
            and is_true(active[0], "RevisionHealthy")
            and controller == [active[0]["metadata"]["name"]]
        ):
            return active[0]
        return None

    try:
        revision = wait_for("the Civo Configuration upgraded", upgraded, INSTALL_SECONDS)
    except WaitTimedOut as timed_out:
        raise AssertionError(f"{timed_out}; last seen: {seen}") from None
    assert identities(plane) == apis
    summary.append(
        f"the deletion guard on {engine.label}: in force {in_force:.1f} s after it was applied; "
        f"{len(guard.GUARDED)} deletes refused, nothing deleted; the Civo Configuration upgraded "
        f"through it to {revision['metadata']['name']}, the same XRD and Composition"
    )
