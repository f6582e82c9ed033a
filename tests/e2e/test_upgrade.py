"""Upgrading the package from the previous release, and rolling it back, recreates nothing.

The previous release's package (hack/release/previous.env, built from its commit) is installed
as a user would have it, a CoreWeaveCluster and a CivoCluster are brought to Ready under it, and
the Function is pointed at this version's package by its new tag. Crossplane moves to a new
FunctionRevision; every composed resource must keep its UID and its spec, the live NodePools and
StorageClass in the cluster theirs, and both XRs must be Ready again. What 0.2.0 changes, and
nothing else (CHANGELOG.md): the CoreWeaveCluster's Objects lose `Delete` from their management
policies, and its `usage-cluster-by-providerconfig` Usage is retired. Pointing back at the
previous release's tag (a rollback) must hold the same, and after upgrading again the XRs'
deletion must finish, the CKS cluster taking its NodePools with it.
"""

from __future__ import annotations

from harness.e2e.binaries import REPO
from harness.e2e.pair import NAMESPACE, Pair, Snapshot, differences
from harness.e2e.releases import previous_release
from harness.e2e.runtime import push_package
from harness.e2e.suite import Suite
from harness.fixtures import coreweave_pool

# One CPU pool: the CoreWeaveCluster's live objects are its NodePool, the system pool and the
# StorageClass clone.
COREWEAVE_POOLS = [coreweave_pool("cpu-upgrade", "cd-gp-a192-genoa", 1)]
RETIRED_USAGE = "usage-cluster-by-providerconfig"


def without_object_policies(pair: Pair, snapshot: Snapshot) -> Snapshot:
    """The snapshot with the CoreWeaveCluster's Objects' managementPolicies left out: the one
    field of theirs 0.2.0 changes."""
    found: Snapshot = {}
    for key, (uid, content) in snapshot.items():
        is_object = key.startswith(f"{pair.coreweave.name}/") and "manifest" in (
            (content or {}).get("forProvider") or {}
        )
        kept = {k: v for k, v in content.items() if k != "managementPolicies"}
        found[key] = (uid, kept if is_object else content)
    return found


def deleting_policies(pair: Pair, snapshot: Snapshot) -> list[str]:
    """The CoreWeaveCluster's Objects whose policies would delete in the cluster."""
    return sorted(
        key
        for key, (_, content) in snapshot.items()
        if key.startswith(f"{pair.coreweave.name}/")
        and "manifest" in ((content or {}).get("forProvider") or {})
        and {"*", "Delete"} & set(content.get("managementPolicies") or ["*"])
    )


def test_upgrading_and_rolling_back_the_package_recreates_nothing(suite: Suite) -> None:
    plane, runtime = suite.plane, suite.runtime
    pair = Pair.of(suite, "upgrade", coreweave_pools=COREWEAVE_POOLS)
    release = previous_release(plane.binaries.crank)
    current = runtime.reference
    previous = push_package(plane, release.package, release.version)
    assert previous != current
    retired = f"{pair.coreweave.name}/{RETIRED_USAGE}"
    try:
        old = runtime.serve(previous, release.source)
        pair.apply()
        before = pair.settled()
        assert retired in before and deleting_policies(pair, before), "not 0.1.0's composition"

        new = runtime.serve(current, REPO)
        assert new["metadata"]["name"] != old["metadata"]["name"], "no new FunctionRevision"
        after = pair.settled()
        upgraded = differences(
            without_object_policies(pair, before), without_object_policies(pair, after)
        )
        assert upgraded == [f"gone: {retired}"], f"upgrading to {current}: {upgraded}"
        assert deleting_policies(pair, after) == [], "an Object still deletes in the cluster"

        # Crossplane makes a revision per switch, a rollback too (the old one is garbage
        # collected past revisionHistoryLimit, 1 by default). 0.1.0 composes its Usage again.
        rolled_back = runtime.serve(previous, release.source)
        assert rolled_back["metadata"]["name"] != new["metadata"]["name"], "no new FunctionRevision"
        downgraded = differences(before, pair.settled())
        assert downgraded == [f"re-created (new UID): {retired}"], (
            f"rolling back to {previous}: {downgraded}"
        )
        suite.notes.append(
            f"upgrade v{release.version} -> {current.rsplit(':', 1)[1]} and back on "
            f"{suite.engine.label}: {len(before)} composed and live objects, none re-created "
            f"but the retired {RETIRED_USAGE}"
        )

        # Upgraded again, the XRs' deletion finishes (pair.delete waits for it): the
        # CoreWeaveCluster's Objects are released and the CKS cluster takes its NodePools.
        runtime.serve(current, REPO)
        again = pair.settled()
        assert deleting_policies(pair, again) == []
        cluster_id = suite.cks_cluster(NAMESPACE, pair.coreweave.name).cluster_id
        pair.delete()
        look = suite.clusters.last_looks[cluster_id]
        assert look.nodepools == ["cpu-upgrade", "modelplane-system"], look
    finally:
        runtime.serve(current, REPO)
        pair.delete()
