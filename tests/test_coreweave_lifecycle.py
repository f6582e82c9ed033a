"""A CoreWeaveCluster over its life: several reconciles with evolving observed state."""

from __future__ import annotations

import copy
from typing import Any

from harness.fixtures import (
    CLUSTER_PROVIDER_CONFIG,
    ENDPOINT,
    World,
    conditions,
    coreweave_xr,
    credentials_secret,
    desired,
    readiness,
    results,
    xr_status,
)
from tests import coreweave_expected as expected

KUBECONFIG_STATUS = {
    "secrets": [{"type": "Kubeconfig", "name": expected.SECRET_NAME, "key": "kubeconfig"}]
}
FULL_STATUS = {**KUBECONFIG_STATUS, "cache": {"storageClassName": "shared-vast-delete"}}


def validated(pool_object: dict[str, Any], **live_spec: object) -> dict[str, Any]:
    """What provider-kubernetes reports for the NodePool of pool_object once CKS accepted it."""
    live = copy.deepcopy(pool_object["spec"]["forProvider"]["manifest"])
    live["spec"].update(live_spec)
    live["metadata"]["uid"] = "uid-" + live["metadata"]["name"]
    live["status"] = {"conditions": [{"type": "Validated", "status": "True"}]}
    return {"manifest": live}


UNREACHABLE = (
    "connect failed: cannot create new client: Get "
    '"https://ml-team-prod-a1b2c3.k8s.us-east-04a.coreweave.com/api?timeout=32s": dial tcp: '
    "i/o timeout"
)


def retiring(pool_object: dict[str, Any]) -> dict[str, Any]:
    """A fixed pool's Object re-applied with Delete, on its way out."""
    body = copy.deepcopy(pool_object)
    body["spec"]["managementPolicies"] = [*expected.IN_CLUSTER_POLICIES, "Delete"]
    return body


def test_coreweave_cluster_lifecycle() -> None:
    world = World(coreweave_xr())
    world.cluster_objects = [CLUSTER_PROVIDER_CONFIG, credentials_secret()]

    # 1. New: only the network and the cluster; everything else waits for the cluster.
    rsp = world.reconcile()
    assert desired(rsp) == {
        "vpc": expected.VPC,
        "cks-cluster": expected.CLUSTER,
        "usage-vpc-by-cluster": expected.USAGE_VPC,
    }
    assert readiness(rsp) == {"vpc": False, "cks-cluster": False, "usage-vpc-by-cluster": False}
    waiting = 'waiting for CKS cluster "inference-east-c7d16" to become Ready'
    assert results(rsp) == [("Normal", waiting)]
    assert conditions(rsp)["ClusterAccess"] == ("False", "WaitingForCluster", waiting)
    assert len(rsp.requirements.resources) == 0, "credentials are not read before they are needed"

    # 2. Cluster Ready but no endpoint yet: still waiting, with the reason.
    world.ready("vpc", atProvider={"id": "3f0c-vpc"})
    world.ready("cks-cluster", atProvider={"id": "9e1d-cks", "status": "STATUS_RUNNING"})
    world.ready("usage-vpc-by-cluster")
    rsp = world.reconcile()
    assert set(desired(rsp)) == {"vpc", "cks-cluster", "usage-vpc-by-cluster"}
    endpoint_wait = "waiting for the CKS API endpoint (status.atProvider.apiServerEndpoint)"
    assert results(rsp) == [("Normal", endpoint_wait)]
    assert conditions(rsp)["ClusterAccess"] == ("False", "WaitingForEndpoint", endpoint_wait)

    # 3. Endpoint reported: kubeconfig, ProviderConfig, Usages, every pool and the observer.
    world.report("cks-cluster", atProvider={"id": "9e1d-cks", "apiServerEndpoint": ENDPOINT})
    rsp = world.reconcile()
    want = expected.converged()
    # The autoscaled pool's settings Object only once its pool exists.
    del want["autoscaled-nodepool-h100"], want["rwx-storageclass"]
    assert desired(rsp) == want
    assert xr_status(rsp) == KUBECONFIG_STATUS
    assert results(rsp) == [
        ("Normal", 'waiting to observe StorageClass "shared-vast" in the CKS cluster')
    ]
    assert conditions(rsp)["ClusterAccess"] == (
        "True",
        "Available",
        f'kubeconfig in Secret "{expected.SECRET_NAME}"',
    )

    # 4. Converged: pools validated, shared-vast observed, the autoscaler grew h100 to 5.
    for key in ("system-nodepool", "nodepool-l40s", "nodepool-cpu"):
        world.ready(key, atProvider=validated(expected.converged()[key]))
    world.ready("nodepool-h100", atProvider=validated(expected.H100_POOL, targetNodes=5))
    world.ready("shared-vast-observer", atProvider={"manifest": expected.SHARED_VAST_LIVE})
    for key in world.observed:
        if key not in ("vpc", "cks-cluster") and "status" not in world.observed[key]:
            world.report(key)  # Secrets, ProviderConfigs and Usages exist once applied.
    rsp = world.reconcile()
    # The pool exists: its settings Object joins; the creator is not changed (it never updates).
    assert desired(rsp) == expected.converged()
    world.ready("rwx-storageclass", atProvider={"manifest": {}})
    world.ready("autoscaled-nodepool-h100", atProvider=validated(expected.H100_POOL, targetNodes=5))
    rsp = world.reconcile()
    assert desired(rsp) == expected.converged()
    assert all(readiness(rsp).values()), readiness(rsp)
    assert xr_status(rsp) == FULL_STATUS
    assert results(rsp) == []
    converged_state = desired(rsp)

    # 5. Ready flap: the cluster loses Ready and its endpoint. Nothing is dropped; the
    # kubeconfig already written is kept and the user is told why.
    world.ready("cks-cluster", ready=False, atProvider={"id": "9e1d-cks"})
    rsp = world.reconcile()
    assert desired(rsp) == converged_state
    assert readiness(rsp)["cks-cluster"] is False
    kept = "keeping the kubeconfig already written: the CKS API endpoint is not reported right now"
    assert results(rsp) == [("Warning", kept)]

    # 6. Credentials gone: the ClusterProviderConfig was deleted. Still nothing is dropped.
    world.ready("cks-cluster", atProvider={"id": "9e1d-cks", "apiServerEndpoint": ENDPOINT})
    world.cluster_objects = []
    rsp = world.reconcile()
    assert desired(rsp) == converged_state
    gone = 'keeping the kubeconfig already written: ClusterProviderConfig "coreweave" not found'
    assert results(rsp) == [("Warning", gone)]
    assert conditions(rsp)["ClusterAccess"] == (
        "True",
        "LastKnownKubeconfig",
        'cannot refresh it: ClusterProviderConfig "coreweave" not found',
    )
    world.cluster_objects = [CLUSTER_PROVIDER_CONFIG, credentials_secret()]

    # 7. instanceType edit on a live pool: the live pool keeps its type, with a Warning.
    world.xr["spec"]["nodePools"][1]["instanceType"] = "gd-8xh200ib-i128"
    rsp = world.reconcile()
    assert desired(rsp) == converged_state
    assert results(rsp) == [
        (
            "Warning",
            'spec.nodePools[1].instanceType: node pool "l40s" keeps instanceType '
            '"gd-8xl40s-i128"; CKS cannot change the instance type of a live pool. To use '
            '"gd-8xh200ib-i128", add a pool under a new name and remove this one once it is '
            "no longer needed.",
        )
    ]

    # 8. Pool removed from the spec while the cluster answers: its Object is re-applied with
    # Delete, then dropped, which deletes the NodePool; all else stays as it was.
    world.xr["spec"]["nodePools"][1]["instanceType"] = "gd-8xl40s-i128"
    del world.xr["spec"]["nodePools"][2]
    rsp = world.reconcile()
    assert desired(rsp) == {**converged_state, "nodepool-cpu": retiring(expected.CPU_POOL)}
    assert readiness(rsp)["nodepool-cpu"] is True, "a pool on its way out never holds Ready"
    assert results(rsp) == [("Normal", expected.RETIRING % "cpu")]
    rsp = world.reconcile()
    converged_state = {k: v for k, v in converged_state.items() if k != "nodepool-cpu"}
    assert desired(rsp) == converged_state
    assert results(rsp) == [("Normal", expected.DELETING % "cpu")]
    rsp = world.reconcile()
    assert desired(rsp) == converged_state
    assert results(rsp) == []

    # 9. Pool removed while the cluster does not answer: it keeps its policies without Delete
    # (deleting the XR now must not need the cluster) and the user is told; once the cluster
    # answers it goes as above. Delete is withdrawn again if the cluster stops answering
    # between the two steps.
    l40s = converged_state["nodepool-l40s"]
    del world.xr["spec"]["nodePools"][1]
    for _ in range(2):  # away, answering, away again, answering
        world.unreachable("nodepool-l40s", UNREACHABLE)
        rsp = world.reconcile()
        assert desired(rsp) == converged_state, "no Delete while the cluster is away"
        assert results(rsp) == [("Warning", expected.WAITING % "l40s" + UNREACHABLE)]
        world.ready("nodepool-l40s", atProvider=validated(l40s))
        rsp = world.reconcile()
        assert desired(rsp) == {**converged_state, "nodepool-l40s": retiring(l40s)}
    rsp = world.reconcile()
    converged_state = {k: v for k, v in converged_state.items() if k != "nodepool-l40s"}
    assert desired(rsp) == converged_state
    assert results(rsp) == [("Normal", expected.DELETING % "l40s")]
