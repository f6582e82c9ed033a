"""Upgrading the package from the previous release, and rolling it back, recreates nothing.

The previous release's package (hack/release/previous.env, built from its commit) is installed
as a user would have it, a CoreWeaveCluster and a CivoCluster are brought to Ready under it, and
the Function is pointed at this version's package by its new tag. Crossplane moves to a new
FunctionRevision; every composed resource must keep its UID and its spec (0.2.0 changes nothing
composed, CHANGELOG.md), the live NodePools and StorageClass in the cluster theirs, and both XRs
must be Ready again. Pointing back at the previous release's tag (a rollback) must hold the same.
"""

from __future__ import annotations

from typing import Any

import yaml

from .harness import kinds
from .harness.binaries import REPO
from .harness.kube import Kind, Kube
from .harness.releases import previous_release
from .harness.runtime import push_package
from .harness.stages import (
    QUIET_SECONDS,
    delete_coreweave_xr,
    wait_quiet,
    wait_ready,
)
from .harness.suite import Suite
from .harness.xr import composed

NAMESPACE = "ml-team"
COREWEAVE_NAME = "upgrade-east"
CIVO_NAME = "upgrade-lon"
# Cluster-scoped in-cluster objects the CoreWeaveCluster makes: the pool's own name, the system
# pool and the StorageClass clone.
COREWEAVE_POOL = "cpu-upgrade"
LIVE = (
    (kinds.CKS_NODEPOOL, COREWEAVE_POOL),
    (kinds.CKS_NODEPOOL, "modelplane-system"),
    (kinds.STORAGE_CLASS, "shared-vast-delete"),
)


def xrs() -> list[tuple[Kind, str, tuple[Kind, ...], dict[str, Any]]]:
    coreweave = yaml.safe_load((REPO / "example" / "coreweave" / "xr.yaml").read_text())
    coreweave["metadata"]["name"] = COREWEAVE_NAME
    coreweave["spec"]["nodePools"] = [
        {"name": COREWEAVE_POOL, "role": "CPU", "instanceType": "cd-gp-a192-genoa", "nodeCount": 1}
    ]
    civo = yaml.safe_load((REPO / "example" / "civo" / "xr.yaml").read_text())
    civo["metadata"]["name"] = CIVO_NAME
    return [
        (kinds.COREWEAVE_CLUSTER_XR, COREWEAVE_NAME, kinds.COREWEAVE_COMPOSED, coreweave),
        (kinds.CIVO_CLUSTER_XR, CIVO_NAME, kinds.CIVO_COMPOSED, civo),
    ]


def snapshot(api: Kube) -> dict[str, tuple[str, Any]]:
    """UID and spec of everything both XRs composed (by XR and key), and UID of the live
    in-cluster objects (spec: their own controllers may write it)."""
    found: dict[str, tuple[str, Any]] = {}
    for _, name, composed_kinds, _ in xrs():
        for key, ref in composed(api, name, NAMESPACE, composed_kinds).items():
            found[f"{name}/{key}"] = (ref.uid, ref.content)
    for kind, live_name in LIVE:
        live = api.get(kind, live_name)
        assert live is not None, f"{kind.kind} {live_name} is not in the cluster"
        found[f"live {kind.kind}/{live_name}"] = (live["metadata"]["uid"], None)
    return found


def settled(suite: Suite) -> dict[str, tuple[str, Any]]:
    for kind, name, _, _ in xrs():
        wait_ready(suite.plane.api, kind, name, NAMESPACE)
        wait_quiet(suite.log, kind, name, QUIET_SECONDS)
    return snapshot(suite.plane.api)


def differences(before: dict[str, tuple[str, Any]], after: dict[str, tuple[str, Any]]) -> list[str]:
    found = [f"gone: {key}" for key in before if key not in after]
    found += [f"new: {key}" for key in after if key not in before]
    for key in before.keys() & after.keys():
        if before[key][0] != after[key][0]:
            found.append(f"re-created (new UID): {key}")
        elif before[key][1] != after[key][1]:
            found.append(f"spec changed: {key}")
    return sorted(found)


def test_upgrading_and_rolling_back_the_package_recreates_nothing(suite: Suite) -> None:
    api, plane, runtime = suite.plane.api, suite.plane, suite.runtime
    release = previous_release(plane.binaries.crank)
    current = runtime.reference
    previous = push_package(plane, release.package, release.version)
    assert previous != current
    try:
        old = runtime.serve(previous, release.source)
        for kind, _, _, xr in xrs():
            api.apply(kind, xr)
        before = settled(suite)

        new = runtime.serve(current, REPO)
        assert new["metadata"]["name"] != old["metadata"]["name"], "no new FunctionRevision"
        upgraded = differences(before, settled(suite))
        assert not upgraded, f"upgrading to {current}: {upgraded}"

        # Crossplane makes a revision per switch, a rollback too (the old one is garbage
        # collected past revisionHistoryLimit, 1 by default).
        rolled_back = runtime.serve(previous, release.source)
        assert rolled_back["metadata"]["name"] != new["metadata"]["name"], "no new FunctionRevision"
        downgraded = differences(before, settled(suite))
        assert not downgraded, f"rolling back to {previous}: {downgraded}"
        suite.notes.append(
            f"upgrade v{release.version} -> {current.rsplit(':', 1)[1]} and back on "
            f"{suite.engine.label}: {len(before)} composed and live objects, none re-created"
        )
    finally:
        runtime.serve(current, REPO)
        api.delete(kinds.CIVO_CLUSTER_XR, CIVO_NAME, NAMESPACE)
        delete_coreweave_xr(api, COREWEAVE_NAME, NAMESPACE)
