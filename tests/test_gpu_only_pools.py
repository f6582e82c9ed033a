"""What Modelplane's InferenceCluster sends: only GPU pools. A CivoCluster then gets the step
input's default System pool as the cluster's inline pool (honored at creation only, like any
inline pool); a CoreWeaveCluster gets its system pool as always."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from harness.fixtures import (
    CLUSTER_PROVIDER_CONFIG,
    ENDPOINT,
    World,
    civo_pool,
    civo_xr,
    coreweave_pool,
    coreweave_xr,
    credentials_secret,
    desired,
    fatal_only,
    request,
    results,
    run,
)
from tests import civo_expected, coreweave_expected
from tests.civo_expected import cluster_up

# What Modelplane's InferenceCluster composes for each cloud: GPU pools only.
CIVO_GPU_ONLY = [civo_pool("l40s", "an.g1.l40s.kube.x1", 1, "nvidia-l40s")]
COREWEAVE_GPU_ONLY = [coreweave_pool("l40s", "gd-8xl40s-i128", 1, "nvidia-l40s")]
DEFAULT_INLINE_POOL = {
    "label": "system",
    "size": "g4p.kube.small",
    "nodeCount": 2,
    "labels": {"modelplane.ai/pool": "system"},
}
OWN_SYSTEM_POOL = {"civo": {"systemPool": {"name": "infra", "size": "g4s.kube.large"}}}


def civo_cluster(pools: dict[str, Any]) -> dict[str, Any]:
    cluster = copy.deepcopy(civo_expected.CLUSTER)
    cluster["spec"]["forProvider"]["pools"] = pools
    return cluster


def created_with(pools: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The Civo cluster as the provider reports it, created with that inline pool."""
    observed = cluster_up()
    observed["civo-cluster"]["spec"]["forProvider"]["pools"] = pools
    return observed


NEW_CLUSTER_CASES = {
    "default-system-pool": (None, DEFAULT_INLINE_POOL),
    "system-pool-from-the-step-input": (
        OWN_SYSTEM_POOL,
        {
            "label": "infra",
            "size": "g4s.kube.large",
            "nodeCount": 2,
            "labels": {"modelplane.ai/pool": "infra"},
        },
    ),
}


@pytest.mark.parametrize(
    ("step_input", "inline_pool"), NEW_CLUSTER_CASES.values(), ids=NEW_CLUSTER_CASES.keys()
)
def test_a_civo_cluster_of_gpu_pools_gets_a_system_pool(
    step_input: dict[str, Any] | None, inline_pool: dict[str, Any]
) -> None:
    xr = civo_xr(nodePools=CIVO_GPU_ONLY)
    rsp = run(request(xr, None, None, step_input))
    assert desired(rsp)["civo-cluster"] == civo_cluster(inline_pool)
    rsp = run(request(xr, created_with(inline_pool), None, step_input))
    composed = desired(rsp)
    assert composed["civo-cluster"] == civo_cluster(inline_pool)
    assert composed["nodepool-l40s"] == civo_expected.nodepool(
        "l40s",
        "inference-lon-nodepool-l40s-33090",
        "an.g1.l40s.kube.x1",
        "nvidia-l40s",
        autoscaled=False,
    )
    assert [r for r in results(rsp) if r[0] == "Warning"] == []


def test_a_coreweave_cluster_of_gpu_pools_gets_its_system_pool() -> None:
    world = World(coreweave_xr(nodePools=COREWEAVE_GPU_ONLY))
    world.cluster_objects = [CLUSTER_PROVIDER_CONFIG, credentials_secret()]
    world.reconcile()
    world.ready("vpc", atProvider={"id": "3f0c-vpc"})
    world.ready("cks-cluster", atProvider={"id": "9e1d-cks", "apiServerEndpoint": ENDPOINT})
    rsp = world.reconcile()
    assert desired(rsp) == {
        "vpc": coreweave_expected.VPC,
        "cks-cluster": coreweave_expected.CLUSTER,
        "usage-vpc-by-cluster": coreweave_expected.USAGE_VPC,
        "kubeconfig": coreweave_expected.KUBECONFIG_SECRET,
        "kubernetes-providerconfig": coreweave_expected.PROVIDER_CONFIG,
        "usage-kubeconfig-by-providerconfig": coreweave_expected.USAGE_KUBECONFIG,
        "system-nodepool": coreweave_expected.SYSTEM_POOL,
        "nodepool-l40s": coreweave_expected.L40S_POOL,
        "shared-vast-observer": coreweave_expected.SHARED_VAST_OBSERVER,
    }
    assert [r for r in results(rsp) if r[0] != "Normal"] == []


SYSTEM_NAMED_GPU_POOL = [civo_pool("system", "an.g1.l40s.kube.x1", 1, "nvidia-l40s")]
CLASH = (
    'invalid CivoCluster spec (1 problem): spec.nodePools[0].name: "system" is the name of the '
    "default System pool (step input civo.systemPool.name) that Civo creates with the cluster "
    "because no pool has role System; rename this pool or add a System pool"
)


@pytest.mark.parametrize(
    "observed",
    [None, created_with(DEFAULT_INLINE_POOL)],
    ids=["new-cluster", "cluster-created-with-the-default"],
)
def test_a_pool_named_like_the_default_system_pool_is_refused(
    observed: dict[str, dict[str, Any]] | None,
) -> None:
    rsp = run(request(civo_xr(nodePools=SYSTEM_NAMED_GPU_POOL), observed))
    assert fatal_only(rsp) == CLASH


def test_the_name_is_free_once_the_cluster_has_another_inline_pool() -> None:
    rsp = run(request(civo_xr(nodePools=SYSTEM_NAMED_GPU_POOL), created_with(OTHER_INLINE_POOL)))
    composed = desired(rsp)
    assert composed["civo-cluster"] == civo_cluster(OTHER_INLINE_POOL)
    assert composed["nodepool-system"]["spec"]["forProvider"]["label"] == "system"


OTHER_INLINE_POOL = {
    "label": "workers",
    "size": "g4s.kube.medium",
    "nodeCount": 1,
    "labels": {"modelplane.ai/pool": "workers"},
}
AS_DEFAULT = '(size "g4p.kube.small", nodeCount 2)'
# Edits after creation of a cluster created from GPU pools alone: the inline pool stays as it
# was created and nothing else is composed for it; one Warning says so.
LATER_EDITS = {
    "system-pool-added": (
        [civo_pool("core", "g4s.kube.large", 3), *CIVO_GPU_ONLY],
        None,
        'spec.nodePools[0]: the cluster was created with the default inline System pool "system" '
        f"{AS_DEFAULT} and keeps it: the first System pool is the cluster's inline pool, honored "
        'at creation only, so "core" is not created. For more system capacity, add another '
        "System pool.",
    ),
    "default-system-pool-changed": (
        CIVO_GPU_ONLY,
        {"civo": {"systemPool": {"size": "g4p.kube.medium", "nodeCount": 3}}},
        'input.civo.systemPool: the cluster keeps its inline System pool "system" as created '
        f"{AS_DEFAULT}; the step input's System pool applies to new clusters only.",
    ),
}


@pytest.mark.parametrize(
    ("pools", "step_input", "warning"), LATER_EDITS.values(), ids=LATER_EDITS.keys()
)
def test_the_default_system_pool_is_honored_at_creation_only(
    pools: list[dict[str, Any]], step_input: dict[str, Any] | None, warning: str
) -> None:
    observed = created_with(DEFAULT_INLINE_POOL)
    before = desired(run(request(civo_xr(nodePools=CIVO_GPU_ONLY), observed)))
    rsp = run(request(civo_xr(nodePools=pools), observed, None, step_input))
    assert desired(rsp) == before
    assert [r for r in results(rsp) if r[0] == "Warning"] == [("Warning", warning)]


def test_a_second_system_pool_added_later_is_a_node_pool() -> None:
    pools = [civo_pool("core", "g4s.kube.large", 3), civo_pool("more", "g4s.kube.large", 2)]
    rsp = run(
        request(civo_xr(nodePools=[*pools, *CIVO_GPU_ONLY]), created_with(DEFAULT_INLINE_POOL))
    )
    composed = desired(rsp)
    assert "nodepool-core" not in composed
    assert composed["nodepool-more"] == {
        "apiVersion": "kubernetes.civo.m.upbound.io/v1beta1",
        "kind": "NodePool",
        "metadata": {"name": "inference-lon-nodepool-more-29c25"},
        "spec": civo_expected.nodepool_spec(
            "more", "g4s.kube.large", None, autoscaled=False, count=2
        ),
    }
