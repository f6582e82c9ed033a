"""A CivoCluster through the real Crossplane, stage by stage, on the API server's objects.

The Civo provider is faked: network, firewall, cluster and pools get the status
provider-upjet-civo reports, pools their Civo ID as external name, and the cluster its
connection Secret, the kubeconfig of a Kubernetes of its own. The cluster-autoscaler Release is
the real provider-helm's: the XR is Ready only once Helm installed the chart there. What Helm
created is tests/e2e/test_cluster_autoscaler.py's subject.
"""

from __future__ import annotations

import copy
import functools
import time

import pytest

from harness.e2e import kinds
from harness.e2e.kube import ApiError, wait_for
from harness.e2e.stages import (
    CONVERGE_SECONDS,
    cleaned_up,
    converged_idle_window,
    delete_xr,
    get_xr,
    same_objects,
    stays_ready_through,
    wait_ready,
)
from harness.e2e.suite import Suite
from harness.e2e.workload import helm_releases
from harness.e2e.xr import composed, example_xr, external_name, reason

XR_KIND = kinds.CIVO_CLUSTER_XR
COMPOSED = kinds.CIVO_COMPOSED
CLOUD_KEYS = {
    "network",
    "firewall",
    "civo-cluster",
    "usage-network-by-cluster",
    "usage-firewall-by-cluster",
}


@pytest.mark.every_engine
def test_civo_cluster_lifecycle(suite: Suite) -> None:
    api, cloud, log = suite.plane.api, suite.cloud, suite.log
    xr = example_xr("civo")
    name, namespace = xr["metadata"]["name"], xr["metadata"]["namespace"]
    pools = xr["spec"]["nodePools"]
    inline = next(p["name"] for p in pools if p.get("role") == "System")
    extra_pools = [p for p in pools if p["name"] != inline]
    autoscaled = [p for p in extra_pools if "maxNodeCount" in p]

    now_composed = functools.partial(composed, api, name, namespace, COMPOSED)
    xr_now = functools.partial(get_xr, api, XR_KIND, name, namespace)

    with cleaned_up(suite, XR_KIND, name, namespace, churn=True):
        # --- new: the Civo cluster is being created; no pools yet -----------------------------
        log.begin(name, "new")
        cloud.hold(kinds.CIVO_CLUSTER)
        api.apply(XR_KIND, xr)
        wait_for(
            "network, firewall, cluster and Usages, pools waiting for the cluster",
            lambda: (
                set(now_composed()) == CLOUD_KEYS
                and reason(xr_now(), "NodePools") == "WaitingForCluster"
            ),
            CONVERGE_SECONDS,
        )
        cluster_ref = now_composed()["civo-cluster"]
        cluster = api.get(kinds.CIVO_CLUSTER, cluster_ref.name, namespace)
        assert cluster is not None
        assert cluster["spec"]["forProvider"]["pools"]["label"] == inline

        # --- cluster-ready: pools, autoscaler, kubeconfig -------------------------------------
        log.begin(name, "cluster-ready")
        cloud.release(kinds.CIVO_CLUSTER)
        ready = wait_ready(api, XR_KIND, name, namespace)
        keys = set(now_composed())
        expected = CLOUD_KEYS | {f"nodepool-{p['name']}" for p in extra_pools}
        if autoscaled:
            expected |= {"helm-providerconfig", "cluster-autoscaler"}
        assert keys == expected
        secret_name = cluster["spec"]["writeConnectionSecretToRef"]["name"]
        assert ready["status"]["secrets"] == [
            {"type": "Kubeconfig", "name": secret_name, "key": "kubeconfig"}
        ]
        release_ref = now_composed()["cluster-autoscaler"]
        release = api.get(kinds.HELM_RELEASE, release_ref.name, namespace)
        assert release is not None
        groups = release["spec"]["forProvider"]["values"]["autoscalingGroups"]
        assert groups == [
            {
                "name": external_name(
                    api, name, namespace, kinds.CIVO_NODEPOOL, f"nodepool-{p['name']}"
                ),
                "minSize": p.get("minNodeCount", p["nodeCount"]),
                "maxSize": p["maxNodeCount"],
            }
            for p in autoscaled
        ]

        # --- converged: nothing changes any more ----------------------------------------------
        # Converged, it reads the kubeconfig key from its own status: no required resources.
        converged_idle_window(suite, XR_KIND, name, namespace, COMPOSED, requires_resources=False)

        # --- ready flap ------------------------------------------------------------------------
        log.begin(name, "ready-flap")
        before = now_composed()
        # The cloud updates the cluster in place (not Ready, the kubeconfig kept): the cluster
        # serves, so the XR stays Ready and its consumers keep their ProviderConfig.
        for unavailable in (True, False):
            since = time.monotonic()
            cloud.flap(kinds.CIVO_CLUSTER, cluster_ref.name, unavailable=unavailable)
            stays_ready_through(suite, XR_KIND, name, namespace, since)
            same_objects(before, now_composed())

        # --- invalid edit: every Civo rule is also in the XRD, so the API server refuses it ---
        log.begin(name, "invalid-edit")
        inline_autoscaled = copy.deepcopy(pools)
        next(p for p in inline_autoscaled if p["role"] == "System")["maxNodeCount"] = 4
        with pytest.raises(ApiError) as refused:
            api.merge_patch(XR_KIND, name, {"spec": {"nodePools": inline_autoscaled}}, namespace)
        assert refused.value.status == 422 and "inline pool" in str(refused.value)
        assert xr_now()["spec"]["nodePools"] == pools
        same_objects(before, now_composed())

        # --- pool removed ----------------------------------------------------------------------
        log.begin(name, "pool-removed")
        removed = next(p["name"] for p in extra_pools if "maxNodeCount" not in p)
        kept_pools = [p for p in pools if p["name"] != removed]
        api.merge_patch(XR_KIND, name, {"spec": {"nodePools": kept_pools}}, namespace)
        wait_for(
            f"pool {removed} gone",
            lambda: f"nodepool-{removed}" not in now_composed(),
            CONVERGE_SECONDS,
        )
        same_objects(
            {k: v for k, v in before.items() if k != f"nodepool-{removed}"}, now_composed()
        )
        wait_ready(api, XR_KIND, name, namespace)

        # --- deleted: the cluster before its network and firewall, nothing left ----------------
        log.begin(name, "deleted")
        last = now_composed()
        delete_xr(suite, XR_KIND, COMPOSED, name, namespace)
        wait_for(
            "the connection Secret to be garbage-collected with the cluster",
            lambda: api.get(kinds.SECRET, secret_name, namespace) is None,
            CONVERGE_SECONDS,
        )
        at = log.deletion_times(last)
        assert at["civo-cluster"] < at["network"], "network deleted before the cluster"
        assert at["civo-cluster"] < at["firewall"], "firewall deleted before the cluster"


# Deleting a CivoCluster whose cluster does not answer, or is gone, finishes within this long:
# nothing it composes needs the workload cluster to be deleted.
UNREACHABLE_DELETION_SECONDS = 120


@pytest.mark.every_engine
@pytest.mark.parametrize("outage", ["api-server-stopped", "deleted-outside-crossplane"])
def test_civo_cluster_deleted_while_its_cluster_does_not_answer(suite: Suite, outage: str) -> None:
    """The Civo cluster's API server stopped, or the cluster deleted outside Crossplane: deleting
    the XR still finishes, the cluster-autoscaler's Release released without a Helm uninstall
    and every Civo resource deleted."""
    api = suite.plane.api
    name = f"gone-{outage.split('-', maxsplit=1)[0]}-lon"
    xr = example_xr("civo", name)
    namespace = xr["metadata"]["namespace"]

    with cleaned_up(suite, XR_KIND, name, namespace):
        api.apply(XR_KIND, xr)
        wait_ready(api, XR_KIND, name, namespace)
        cluster_id = external_name(api, name, namespace, kinds.CIVO_CLUSTER, "civo-cluster")
        inside = suite.clusters.get(cluster_id).api
        wait_for(
            "the cluster-autoscaler installed in the cluster",
            lambda: helm_releases(inside),
            CONVERGE_SECONDS,
        )
        assert "cluster-autoscaler" in composed(api, name, namespace, COMPOSED)
        if outage == "api-server-stopped":
            suite.clusters.outage(cluster_id)
        else:
            suite.cloud.delete_outside_crossplane(cluster_id)
        took = delete_xr(suite, XR_KIND, COMPOSED, name, namespace, cluster_id)
        suite.notes.append(
            f"{name} on {suite.engine.label} ({outage}): deleted, everything gone in "
            f"{took:.1f} s (bound {UNREACHABLE_DELETION_SECONDS} s)"
        )
        assert took <= UNREACHABLE_DELETION_SECONDS, f"deletion took {took:.1f} s"
