"""Upgrading the package from the previous release, and rolling it back, recreates nothing.

The previous release's package (hack/release/previous.env, built from its commit) is installed
as a user would have it, a CoreWeaveCluster and a CivoCluster are brought to Ready under it, and
the Function is pointed at this version's package by its new tag. Crossplane moves to a new
FunctionRevision; every composed resource must keep its UID and its spec (0.2.0 changes nothing
composed, CHANGELOG.md), the live NodePools and StorageClass in the cluster theirs, and both XRs
must be Ready again. Pointing back at the previous release's tag (a rollback) must hold the same.
"""

from __future__ import annotations

from harness.e2e.binaries import REPO
from harness.e2e.pair import Pair, differences
from harness.e2e.releases import previous_release
from harness.e2e.runtime import push_package
from harness.e2e.suite import Suite

# One CPU pool: the CoreWeaveCluster's live objects are its NodePool, the system pool and the
# StorageClass clone.
COREWEAVE_POOLS = [
    {"name": "cpu-upgrade", "role": "CPU", "instanceType": "cd-gp-a192-genoa", "nodeCount": 1}
]


def test_upgrading_and_rolling_back_the_package_recreates_nothing(suite: Suite) -> None:
    plane, runtime = suite.plane, suite.runtime
    pair = Pair.of(suite, "upgrade", coreweave_pools=COREWEAVE_POOLS)
    release = previous_release(plane.binaries.crank)
    current = runtime.reference
    previous = push_package(plane, release.package, release.version)
    assert previous != current
    try:
        old = runtime.serve(previous, release.source)
        pair.apply()
        before = pair.settled()

        new = runtime.serve(current, REPO)
        assert new["metadata"]["name"] != old["metadata"]["name"], "no new FunctionRevision"
        upgraded = differences(before, pair.settled())
        assert not upgraded, f"upgrading to {current}: {upgraded}"

        # Crossplane makes a revision per switch, a rollback too (the old one is garbage
        # collected past revisionHistoryLimit, 1 by default).
        rolled_back = runtime.serve(previous, release.source)
        assert rolled_back["metadata"]["name"] != new["metadata"]["name"], "no new FunctionRevision"
        downgraded = differences(before, pair.settled())
        assert not downgraded, f"rolling back to {previous}: {downgraded}"
        suite.notes.append(
            f"upgrade v{release.version} -> {current.rsplit(':', 1)[1]} and back on "
            f"{suite.engine.label}: {len(before)} composed and live objects, none re-created"
        )
    finally:
        runtime.serve(current, REPO)
        pair.delete()
