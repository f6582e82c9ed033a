"""Upgrading provider-kubernetes under live XRs, from the oldest release the matrix runs to the
primary's (v1.2.1 to v1.3.1), recreates nothing and changes nothing composed.

A platform team upgrades the provider package while its clusters run: Crossplane stops the old
revision, replaces the CRDs with the new release's, and starts the new one. Here the suite
starts with the old provider and its CRDs, brings a CoreWeaveCluster and a CivoCluster to Ready,
and does the same. Every composed resource and every live object in the CKS cluster must keep
its UID and its content. The one change is the new release's CRD default: every Object gains
`spec.forProvider.deletionPropagationPolicy: Background`, which the API server adds on read
(the function composes no such field, so nothing of the XR's owns it, and Background is what
the old release did without saying: the API server's default for a custom resource). Then the
new release must be the one reconciling: a pool's size edited after the upgrade reaches the CKS
NodePool, and the XRs' deletion finishes, the CKS cluster taking its NodePools with it.
"""

from __future__ import annotations

from typing import Any

from harness.e2e import kinds
from harness.e2e.binaries import provider_kubernetes
from harness.e2e.kube import wait_for
from harness.e2e.pair import NAMESPACE, Pair, Snapshot, differences, live_key
from harness.e2e.stages import CONVERGE_SECONDS
from harness.e2e.suite import Suite
from harness.fixtures import coreweave_pool

# One CPU pool: the CoreWeaveCluster's live objects are its NodePool, the system pool and the
# StorageClass clone.
POOL = coreweave_pool("cpu-provider", "cd-gp-a192-genoa", 1)
# The default provider-kubernetes v1.3's Object CRD gives the new field (package/crds).
PROPAGATION = "deletionPropagationPolicy"
DEFAULT_PROPAGATION = "Background"


def is_object(content: Any) -> bool:
    return isinstance(content, dict) and "manifest" in (content.get("forProvider") or {})


def without_the_new_default(snapshot: Snapshot) -> tuple[Snapshot, dict[str, Any]]:
    """The snapshot with each Object's deletionPropagationPolicy taken out, and what each had."""
    kept: Snapshot = {}
    taken: dict[str, Any] = {}
    for key, (uid, content) in snapshot.items():
        kept[key] = (uid, content)
        if is_object(content):
            for_provider = dict(content["forProvider"])
            taken[key] = for_provider.pop(PROPAGATION, None)
            kept[key] = (uid, {**content, "forProvider": for_provider})
    return kept, taken


def test_upgrading_provider_kubernetes_under_live_xrs_recreates_nothing(
    oldest_provider_suite: Suite,
) -> None:
    suite = oldest_provider_suite
    old_version = suite.plane.binaries.provider_kubernetes.parent.name
    new_version = suite.engine.provider_kubernetes
    assert old_version != f"provider-kubernetes-{new_version}", "the suite runs the new release"
    pair = Pair.of(suite, "provider-upgrade", coreweave_pools=[dict(POOL)])
    try:
        pair.apply()
        before = pair.settled()
        objects = sorted(key for key, (_, content) in before.items() if is_object(content))
        assert objects, "no Object composed"
        kept_before, old_fields = without_the_new_default(before)
        assert set(old_fields.values()) == {None}, f"the old CRD has {PROPAGATION}: {old_fields}"

        suite.provider.upgrade(*provider_kubernetes(new_version))
        after = pair.settled()
        kept_after, new_fields = without_the_new_default(after)
        assert differences(kept_before, kept_after) == [], f"upgrading to {new_version}"
        assert new_fields == dict.fromkeys(objects, DEFAULT_PROPAGATION)

        # The new release reconciles: a size edited now reaches the CKS NodePool.
        pair.coreweave.manifest["spec"]["nodePools"][0]["nodeCount"] = 2
        suite.plane.api.merge_patch(
            pair.coreweave.kind,
            pair.coreweave.name,
            {"spec": {"nodePools": pair.coreweave.pools}},
            NAMESPACE,
        )
        wait_for(
            f"targetNodes=2 applied by provider-kubernetes {new_version}",
            lambda: (
                (pair.cks.get(kinds.CKS_NODEPOOL, POOL["name"]) or {})
                .get("spec", {})
                .get("targetNodes")
                == 2
            ),
            CONVERGE_SECONDS,
        )
        # And changes exactly what the edit asks: the pool's Object and its NodePool, in place.
        resized, _ = without_the_new_default(pair.settled())
        assert differences(kept_before, resized) == [
            f"changed: {live_key(kinds.CKS_NODEPOOL, POOL['name'])}",
            f"changed: {pair.coreweave.name}/nodepool-{POOL['name']}",
        ]
        suite.notes.append(
            f"provider-kubernetes {old_version.removeprefix('provider-kubernetes-')} -> "
            f"{new_version} on {suite.engine.label}: {len(before)} composed and live objects, "
            f"none re-created or changed; {len(objects)} Objects gained "
            f"{PROPAGATION}={DEFAULT_PROPAGATION} from the CRD"
        )

        cluster_id = suite.cks_cluster(NAMESPACE, pair.coreweave.name).cluster_id
        pair.delete()
        look = suite.clusters.last_looks[cluster_id]
        assert look.nodepools == [POOL["name"], "modelplane-system"], look
    finally:
        pair.delete()
