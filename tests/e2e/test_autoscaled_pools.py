"""Issue 11's proof: an autoscaled CKS pool keeps the autoscaler's targetNodes while its other
settings follow the XR, with the real provider-kubernetes in server-side apply (its default)
and in client-side apply mode, against a stand-in NodePool CRD that requires targetNodes.

The pool is two Objects (docs/design.md, "Autoscaled CKS pools"): the creator `nodepool-<name>` that
never updates the pool, and the settings Object `autoscaled-nodepool-<name>` without
targetNodes. A fake CKS autoscaler changes targetNodes through an Update under its own field
manager, before and after the provider re-applies the pool's settings.
"""

from __future__ import annotations

from typing import Any

import pytest

from harness.e2e import kinds
from harness.e2e.kube import is_true, wait_for
from harness.e2e.stages import CONVERGE_SECONDS, delete_coreweave_xr, wait_pool_gone, wait_ready
from harness.e2e.suite import Suite
from harness.e2e.xr import composed, example_xr
from harness.fixtures import coreweave_pool

XR_KIND = kinds.COREWEAVE_CLUSTER_XR
AUTOSCALER = "cks-cluster-autoscaler"
# provider-kubernetes re-applies every poll; short so that the re-applies happen in the test.
POLL = "15s"


def owners(pool: dict[str, Any], field: str) -> set[str]:
    """The field managers that own spec.<field> of the live NodePool."""
    return {
        entry["manager"]
        for entry in pool["metadata"].get("managedFields") or []
        if f"f:{field}" in ((entry.get("fieldsV1") or {}).get("f:spec") or {})
    }


@pytest.mark.every_engine
def test_autoscaled_pool_keeps_the_autoscalers_count(suite: Suite) -> None:
    """Server-side apply, provider-kubernetes' default: on every row of the matrix."""
    keeps_the_autoscalers_count(suite, server_side_apply=True)


def test_autoscaled_pool_keeps_the_autoscalers_count_under_client_side_apply(suite: Suite) -> None:
    keeps_the_autoscalers_count(suite, server_side_apply=False)


def keeps_the_autoscalers_count(suite: Suite, server_side_apply: bool) -> None:
    api = suite.plane.api
    mode = "ssa" if server_side_apply else "csa"
    name, pool_name = f"autoscale-{mode}", f"h100-{mode}"
    pool_keys = (f"nodepool-{pool_name}", f"autoscaled-nodepool-{pool_name}")
    pool = coreweave_pool(
        pool_name, "gd-8xh100ib-i128", 2, "nvidia-h100", minNodeCount=1, maxNodeCount=6
    )
    xr = example_xr("coreweave", name, [pool])
    namespace = xr["metadata"]["namespace"]

    def live() -> dict[str, Any]:
        found = suite.cks_cluster(namespace, name).api.get(kinds.CKS_NODEPOOL, pool_name)
        assert found is not None, f"CKS NodePool {pool_name} is gone"
        return found

    def objects_synced() -> bool:
        refs = composed(api, name, namespace, (kinds.KUBERNETES_OBJECT,))
        return all(
            key in refs
            and is_true(api.get(kinds.KUBERNETES_OBJECT, refs[key].name, namespace), "Synced")
            for key in pool_keys
        )

    def edit(**fields: Any) -> None:
        pool.update(fields)
        api.merge_patch(XR_KIND, name, {"spec": {"nodePools": [pool]}}, namespace)

    suite.provider.restart(server_side_apply=server_side_apply, poll=POLL)
    try:
        # Created with the size CKS needs; both Objects Synced once the pool exists.
        api.apply(XR_KIND, xr)
        wait_ready(api, XR_KIND, name, namespace)
        wait_for("both Objects of the pool Synced", objects_synced, CONVERGE_SECONDS)
        assert live()["spec"]["targetNodes"] == 2

        # The autoscaler scales up; the XR's bounds and labels are edited afterwards, so the
        # settings Object re-applies after the autoscaler's change.
        cluster_id = suite.cks_cluster(namespace, name).cluster_id
        suite.cloud.autoscale_cks_pool(cluster_id, pool_name, 4)
        edit(maxNodeCount=8, gpu={"acceleratorType": "nvidia-h100-sxm"})
        wait_for(
            "the bounds and label edits live on the pool",
            lambda: (
                live()["spec"]["maxNodes"] == 8
                and live()["spec"]["nodeLabels"]["modelplane.ai/gpu"] == "nvidia-h100-sxm"
            ),
            CONVERGE_SECONDS,
        )
        assert live()["spec"]["targetNodes"] == 4, "an apply reverted the autoscaler's count"

        # The autoscaler scales again, then the lower bound is edited: the re-apply that carries
        # the edit must leave the new count alone.
        suite.cloud.autoscale_cks_pool(cluster_id, pool_name, 5)
        edit(minNodeCount=2)
        wait_for(
            "minNodes=2 live on the pool",
            lambda: live()["spec"]["minNodes"] == 2,
            CONVERGE_SECONDS,
        )
        wait_for("both Objects of the pool Synced", objects_synced, CONVERGE_SECONDS)
        final = live()
        assert final["spec"]["targetNodes"] == 5, "an apply reverted the autoscaler's count"
        assert final["spec"]["autoscaling"] is True
        # Who owns what: the count is the autoscaler's alone; no Object's manager holds it.
        assert owners(final, "targetNodes") == {AUTOSCALER}, final["metadata"]["managedFields"]
        assert AUTOSCALER not in owners(final, "maxNodes")
        assert owners(final, "maxNodes"), "nobody owns maxNodes"
        suite.notes.append(
            f"{mode}: targetNodes owned by {sorted(owners(final, 'targetNodes'))}, "
            f"maxNodes by {sorted(owners(final, 'maxNodes'))}"
        )

        # Removing the pool deletes its NodePool: the settings Object goes first (released,
        # it has no Delete), then the creator, re-applied with Delete, deletes the pool.
        inside = suite.cks_cluster(namespace, name).api
        objects = composed(api, name, namespace, (kinds.KUBERNETES_OBJECT,))
        # How provider-kubernetes deletes the pool: with the API server's background
        # propagation, which the function leaves to the provider (docs/design.md, "Deleting
        # a removed pool's NodePool"): v1.3's Object CRD defaults the field to Background,
        # v1.2 has no field and sends no policy.
        creator = objects[f"nodepool-{pool_name}"].content["forProvider"]
        expected = None if suite.engine.provider_kubernetes.startswith("v1.2.") else "Background"
        assert creator.get("deletionPropagationPolicy") == expected, creator
        pool_objects = [objects[key].name for key in pool_keys]
        filler = {"name": "cpu", "role": "CPU", "instanceType": "cd-gp-a192-genoa", "nodeCount": 1}
        api.merge_patch(XR_KIND, name, {"spec": {"nodePools": [filler]}}, namespace)
        wait_pool_gone(api, namespace, pool_objects, inside, pool_name)
    finally:
        delete_coreweave_xr(suite, name, namespace)
        suite.provider.restart(server_side_apply=True)
