"""A CoreWeaveCluster through the real Crossplane, stage by stage, on the API server's objects.

The cloud half is faked (VPC and CKS cluster status); the in-cluster half is real:
provider-kubernetes applies the NodePool and StorageClass Objects through the kubeconfig Secret
the function wrote, into this same API server.
"""

from __future__ import annotations

import copy
import functools
import time
from typing import Any

import pytest
import yaml

from harness.e2e import kinds
from harness.e2e.controlplane import CROSSPLANE_NAMESPACE
from harness.e2e.kube import Kube, condition, is_true, wait_for
from harness.e2e.scene import CREDENTIALS_SECRET, write_credentials
from harness.e2e.stages import (
    CONVERGE_SECONDS,
    COREWEAVE_FIXED_IN_CLUSTER,
    QUIET_SECONDS,
    cleaned_up,
    converged_idle_window,
    delete_xr,
    get_xr,
    not_synced,
    same_objects,
    stays_ready_through,
    wait_pool_gone,
    wait_quiet,
    wait_ready,
    warning_events,
)
from harness.e2e.suite import Suite
from harness.e2e.xr import composed, example_xr, reason, secret_text

XR_KIND = kinds.COREWEAVE_CLUSTER_XR
COMPOSED = kinds.COREWEAVE_COMPOSED
# Keys composed whatever the pools (docs/composed.md).
CLOUD_KEYS = {"vpc", "cks-cluster", "usage-vpc-by-cluster"}
ACCESS_KEYS = {
    "kubeconfig",
    "kubernetes-providerconfig",
    "usage-kubeconfig-by-providerconfig",
    "shared-vast-observer",
    "rwx-storageclass",
    "system-nodepool",
}
RWX_STORAGE_CLASS = "shared-vast-delete"
SYSTEM_POOL = "modelplane-system"
# A rotated org token reaches the kubeconfig Secret within this long where Crossplane watches the
# credentials Secret (a required resource, v2.4+): one reconcile, on a loaded 2-core machine...
ROTATION_WATCHED_SECONDS = 15
# ...and otherwise at the XR's next poll: the pipeline's 60 s TTL plus Crossplane's 10 % jitter,
# and the same slack.
ROTATION_POLLED_SECONDS = 66 + ROTATION_WATCHED_SECONDS
# The watched bound holds when the XR's watch circuit breaker lets the Secret's event through:
# closed, or open with its half-open slot free, which it is once no event has reached the XR for
# 30 s (halfOpenInterval, internal/circuit/token_bucket.go). Right after a burst (the cluster
# coming up, a Ready flap) an open breaker drops the event and the change waits for the poll.
BREAKER_HALF_OPEN_SECONDS = 30


def live_uids(inside: Kube, pools: list[dict[str, Any]]) -> dict[str, str | None]:
    """UID of each of these pools' NodePools, the system pool's and the StorageClass clone's."""
    objects = [*((kinds.CKS_NODEPOOL, str(p["name"])) for p in pools), *COREWEAVE_FIXED_IN_CLUSTER]
    found = {f"{kind.kind}/{name}": inside.get(kind, name) for kind, name in objects}
    return {key: live["metadata"]["uid"] if live else None for key, live in found.items()}


def pool_keys(keys: set[str], pool: str) -> set[str]:
    """A pool's Objects: `nodepool-<name>`, and any further Objects one pool may take
    (e.g. `autoscaled-nodepool-<name>` for an autoscaled pool)."""
    return {k for k in keys if k == f"nodepool-{pool}" or k.endswith(f"-nodepool-{pool}")}


@pytest.mark.every_engine
def test_coreweave_cluster_lifecycle(suite: Suite) -> None:
    api, cloud, log = suite.plane.api, suite.cloud, suite.log
    xr = example_xr("coreweave")
    name, namespace = xr["metadata"]["name"], xr["metadata"]["namespace"]
    pools = [p["name"] for p in xr["spec"]["nodePools"]]

    now_composed = functools.partial(composed, api, name, namespace, COMPOSED)
    xr_now = functools.partial(get_xr, api, XR_KIND, name, namespace)

    with cleaned_up(suite, XR_KIND, name, namespace, churn=True):
        # --- new: the CKS cluster is still being created --------------------------------------
        log.begin(name, "new")
        cloud.hold(kinds.CKS_CLUSTER)
        api.apply(XR_KIND, xr)
        wait_for(
            "VPC, cluster and their Usage, waiting for the cluster",
            lambda: (
                set(now_composed()) == CLOUD_KEYS
                and reason(xr_now(), "ClusterAccess") == "WaitingForCluster"
            ),
            CONVERGE_SECONDS,
        )
        assert not is_true(xr_now(), "Ready")

        # --- cluster-ready: endpoint reported, everything composed and Ready ------------------
        log.begin(name, "cluster-ready")
        cloud.release(kinds.CKS_CLUSTER)
        ready = wait_ready(api, XR_KIND, name, namespace)
        keys = set(now_composed())
        assert keys >= CLOUD_KEYS | ACCESS_KEYS
        for pool in pools:
            assert pool_keys(keys, pool), f"no Object for pool {pool}: {sorted(keys)}"
        objects = {k: v for k, v in now_composed().items() if v.kind == "Object"}
        for key, ref in objects.items():
            obj = api.get(kinds.KUBERNETES_OBJECT, ref.name, namespace)
            # Synced and Ready: provider-kubernetes authenticated with the function's kubeconfig.
            assert is_true(obj, "Synced") and is_true(obj, "Ready"), (
                key,
                obj and obj.get("status"),
            )
            # No Object deletes while wanted: deleting the XR must never need the cluster.
            policies = set(ref.content["managementPolicies"])
            assert not policies & {"*", "Delete"}, (key, sorted(policies))

        kubeconfig_name = now_composed()["kubeconfig"].name

        def kubeconfig() -> dict[str, Any]:
            secret = api.get(kinds.SECRET, kubeconfig_name, namespace)
            return dict(yaml.safe_load(secret_text(secret, "kubeconfig")))

        assert ready["status"]["secrets"] == [
            {"type": "Kubeconfig", "name": kubeconfig_name, "key": "kubeconfig"}
        ]
        assert ready["status"]["cache"] == {"storageClassName": RWX_STORAGE_CLASS}
        assert is_true(ready, "ClusterAccess") and is_true(ready, "SharedStorage")
        cks = suite.cks_cluster(namespace, name)
        inside = cks.api
        issued = kubeconfig()
        assert issued["clusters"][0]["cluster"]["server"] == f"https://127.0.0.1:{cks.port}"
        assert issued["users"][0]["user"]["token"] == suite.plane.org_token

        for pool in xr["spec"]["nodePools"]:
            live = inside.get(kinds.CKS_NODEPOOL, pool["name"])
            assert live is not None, f"CKS NodePool {pool['name']} was not created"
            assert live["spec"]["instanceType"] == pool["instanceType"]
            assert live["spec"]["nodeLabels"]["modelplane.ai/pool"] == pool["name"]
            assert live["spec"]["autoscaling"] == ("maxNodeCount" in pool)
            if "maxNodeCount" in pool:
                assert live["spec"]["maxNodes"] == pool["maxNodeCount"]
            else:
                assert live["spec"]["targetNodes"] == pool["nodeCount"]
        system = inside.get(kinds.CKS_NODEPOOL, SYSTEM_POOL)
        assert system is not None and system["spec"]["nodeLabels"]["modelplane.ai/system"] == "true"

        original = inside.get(kinds.STORAGE_CLASS, "shared-vast")
        clone = inside.get(kinds.STORAGE_CLASS, RWX_STORAGE_CLASS)
        assert original is not None and clone is not None, "the RWX StorageClass was not created"
        assert clone["reclaimPolicy"] == "Delete"
        for field in ("provisioner", "parameters", "mountOptions", "volumeBindingMode"):
            assert clone.get(field) == original.get(field), field

        # --- converged: nothing changes any more ----------------------------------------------
        # Its step requires the credentials Secret and provider config even when converged.
        converged_idle_window(suite, XR_KIND, name, namespace, COMPOSED, requires_resources=True)

        # --- ready flap: the cluster reports Unavailable for a while --------------------------
        log.begin(name, "ready-flap")
        before = now_composed()
        # The cloud updates the cluster in place (not Ready, the kubeconfig kept): the cluster
        # serves, so the XR stays Ready and its consumers keep their ProviderConfig.
        for unavailable in (True, False):
            since = time.monotonic()
            cloud.flap(kinds.CKS_CLUSTER, before["cks-cluster"].name, unavailable=unavailable)
            stays_ready_through(suite, XR_KIND, name, namespace, since)
            same_objects(before, now_composed())

        # --- token rotated: the org token's new value reaches the kubeconfig -----------------
        log.begin(name, "token-rotated")
        rotated = suite.plane.rotated_org_token
        wait_quiet(log, XR_KIND, name, BREAKER_HALF_OPEN_SECONDS + QUIET_SECONDS)

        rotated_at = time.monotonic()
        write_credentials(suite.plane, CREDENTIALS_SECRET, rotated)
        wait_for(
            "the rotated org token in the kubeconfig Secret",
            lambda: kubeconfig()["users"][0]["user"]["token"] == rotated,
            CONVERGE_SECONDS,
            interval=0.5,
        )
        took = time.monotonic() - rotated_at
        bound = (
            ROTATION_WATCHED_SECONDS
            if suite.engine.watches_required_resources
            else ROTATION_POLLED_SECONDS
        )
        suite.notes.append(
            f"{name} on {suite.engine.label}: a rotated org token reached the kubeconfig in "
            f"{took:.1f} s (bound {bound} s)"
        )
        assert took <= bound, f"{suite.engine.label}: rotation took {took:.1f} s, over {bound} s"
        same_objects(before, now_composed())
        wait_ready(api, XR_KIND, name, namespace)

        # --- credentials gone: the last kubeconfig is kept ------------------------------------
        log.begin(name, "credentials-gone")
        assert api.get(kinds.SECRET, CREDENTIALS_SECRET, CROSSPLANE_NAMESPACE) is not None
        written = api.get(kinds.SECRET, kubeconfig_name, namespace)
        api.delete(kinds.SECRET, CREDENTIALS_SECRET, CROSSPLANE_NAMESPACE)
        wait_for(
            "ClusterAccess=LastKnownKubeconfig",
            lambda: reason(xr_now(), "ClusterAccess") == "LastKnownKubeconfig",
            CONVERGE_SECONDS,
        )
        same_objects(before, now_composed())
        kept = api.get(kinds.SECRET, kubeconfig_name, namespace)
        assert kept is not None and written is not None and kept["data"] == written["data"]
        write_credentials(suite.plane, CREDENTIALS_SECRET, rotated)
        wait_for(
            "ClusterAccess=Available again",
            lambda: reason(xr_now(), "ClusterAccess") == "Available",
            CONVERGE_SECONDS,
        )
        wait_ready(api, XR_KIND, name, namespace)
        same_objects(before, now_composed())

        # --- invalid edit: a FATAL on the XR, nothing applied, nothing deleted ----------------
        log.begin(name, "invalid-edit")
        invalid = copy.deepcopy(xr["spec"]["nodePools"])
        invalid.append({"name": SYSTEM_POOL, "role": "CPU", "instanceType": "cd-gp-i64-erapids"})
        api.merge_patch(XR_KIND, name, {"spec": {"nodePools": invalid}}, namespace)
        message = wait_for(
            "a FATAL result on the XR's Synced condition",
            lambda: not_synced(xr_now(), "reserved"),
            CONVERGE_SECONDS,
        )
        assert "spec.nodePools[3].name" in message, message
        assert warning_events(api, namespace, name, "reserved"), "no Warning event"
        same_objects(before, now_composed())
        assert inside.get(kinds.CKS_NODEPOOL, SYSTEM_POOL) is not None
        api.merge_patch(XR_KIND, name, {"spec": {"nodePools": xr["spec"]["nodePools"]}}, namespace)
        wait_for("Synced=True again", lambda: is_true(xr_now(), "Synced"), CONVERGE_SECONDS)
        wait_ready(api, XR_KIND, name, namespace)
        same_objects(before, now_composed())

        # --- pool removed: only that pool goes, in the cluster too ----------------------------
        log.begin(name, "pool-removed")
        removed = "l40s"
        kept_pools = [p for p in xr["spec"]["nodePools"] if p["name"] != removed]
        live_before = live_uids(inside, kept_pools)
        gone = pool_keys(set(before), removed)
        api.merge_patch(XR_KIND, name, {"spec": {"nodePools": kept_pools}}, namespace)
        wait_pool_gone(api, namespace, [before[k].name for k in gone], inside, removed)
        same_objects({k: v for k, v in before.items() if k not in gone}, now_composed())
        assert live_uids(inside, kept_pools) == live_before, "another in-cluster object changed"
        wait_ready(api, XR_KIND, name, namespace)

        # --- deleted: the cluster takes its NodePools with it; nothing left -------------------
        log.begin(name, "deleted")
        last = now_composed()
        took = delete_xr(suite, XR_KIND, COMPOSED, name, namespace, cks.cluster_id)
        suite.notes.append(
            f"{name} on {suite.engine.label}: deleted, everything gone in {took:.1f} s"
        )
        # Every Object was released, not deleted: its NodePool was still in the cluster when
        # the cloud deleted the cluster, which took them with it (as CKS does).
        look = suite.clusters.last_looks[cks.cluster_id]
        assert look.nodepools == sorted([SYSTEM_POOL, *(p["name"] for p in kept_pools)])
        at = log.deletion_times(last)
        assert at["cks-cluster"] < at["vpc"], "VPC deleted before the cluster"
        assert at["kubernetes-providerconfig"] < at["kubeconfig"], (
            "kubeconfig deleted before its user"
        )


# Deleting an XR whose cluster does not answer finishes within this long (measured: see
# docs/testing.md); Objects are released without contacting the cluster, so it does not wait on
# provider-kubernetes' retries.
UNREACHABLE_DELETION_SECONDS = 120
WAITING_WARNING = 'node pool "l40s" is no longer in spec.nodePools, but the CKS cluster does not'


@pytest.mark.every_engine
def test_coreweave_cluster_unreachable_removal_waits_and_deletion_finishes(suite: Suite) -> None:
    """The CKS cluster stops answering: a pool removed meanwhile waits, with a Warning, and is
    deleted once the cluster answers; deleting the XR while it does not answer finishes, and the
    CKS cluster and VPC are deleted."""
    api, log = suite.plane.api, suite.log
    name = "unreachable-east"
    xr = example_xr("coreweave", name)
    namespace = xr["metadata"]["namespace"]
    removed = "l40s"
    kept_pools = [p for p in xr["spec"]["nodePools"] if p["name"] != removed]

    now_composed = functools.partial(composed, api, name, namespace, COMPOSED)

    def warned() -> bool:
        return bool(warning_events(api, namespace, name, WAITING_WARNING))

    def removed_object_waits() -> bool:
        ref = now_composed().get(f"nodepool-{removed}")
        obj = ref and api.get(kinds.KUBERNETES_OBJECT, ref.name, namespace)
        return bool(
            obj
            and not {"*", "Delete"} & set(obj["spec"]["managementPolicies"])
            and condition(obj, "Synced").get("status") == "False"
        )

    with cleaned_up(suite, XR_KIND, name, namespace):
        log.begin(name, "converged")
        api.apply(XR_KIND, xr)
        wait_ready(api, XR_KIND, name, namespace)
        cks = suite.cks_cluster(namespace, name)
        before = now_composed()
        live_before = live_uids(cks.api, kept_pools)

        # --- the CKS cluster stops answering; a pool is removed: it waits, and says so --------
        log.begin(name, "removed-unreachable")
        suite.clusters.outage(cks.cluster_id)
        api.merge_patch(XR_KIND, name, {"spec": {"nodePools": kept_pools}}, namespace)
        wait_for(f"a Warning that {removed} waits for the cluster", warned, CONVERGE_SECONDS)
        wait_for(
            f"{removed}'s Object kept, without Delete, not Synced",
            removed_object_waits,
            CONVERGE_SECONDS,
        )
        still = now_composed()
        assert {k: v.uid for k, v in still.items()} == {k: v.uid for k, v in before.items()}, (
            "something was dropped or re-created while the cluster did not answer"
        )

        # --- it answers again: the pool is deleted, nothing else changes --------------------
        log.begin(name, "removed-answering")
        answered_at = time.monotonic()
        suite.clusters.recover(cks.cluster_id)
        wait_pool_gone(api, namespace, [before[f"nodepool-{removed}"].name], cks.api, removed)
        suite.notes.append(
            f"{name} on {suite.engine.label}: a pool removed during an outage was deleted "
            f"{time.monotonic() - answered_at:.1f} s after the cluster answered again"
        )
        assert {k: v.uid for k, v in now_composed().items()} == {
            k: v.uid for k, v in before.items() if k != f"nodepool-{removed}"
        }
        assert live_uids(cks.api, kept_pools) == live_before, "another in-cluster object changed"
        wait_ready(api, XR_KIND, name, namespace)

        # --- it stops answering again, and the XR is deleted: deletion finishes -------------
        log.begin(name, "deleted-unreachable")
        suite.clusters.outage(cks.cluster_id)
        took = delete_xr(suite, XR_KIND, COMPOSED, name, namespace, cks.cluster_id)
        suite.notes.append(
            f"{name} on {suite.engine.label}: deleted while its cluster did not answer, "
            f"everything gone in {took:.1f} s (bound {UNREACHABLE_DELETION_SECONDS} s)"
        )
        assert took <= UNREACHABLE_DELETION_SECONDS, f"deletion took {took:.1f} s"
