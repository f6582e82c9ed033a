"""CivoCluster composition rules, one table per rule, asserting whole objects or exact
messages."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from harness.fixtures import (
    civo_required,
    civo_xr,
    conditions,
    desired,
    fatal_only,
    request,
    results,
    run,
)
from tests import civo_expected as expected
from tests.civo_expected import cluster_up
from tests.coreweave_expected import as_ready


def pool(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "role": "System", "size": "g4s.kube.large", **fields}


SYSTEM = {"name": "system", "role": "System", "size": "g4s.kube.medium", "nodeCount": 2}


INVALID_SPECS = {
    "inline-pool-autoscaled": (
        {
            "nodePools": [
                pool("gpu", role="GPU", gpu={"acceleratorType": "L40S"}),
                {**SYSTEM, "maxNodeCount": 3},
            ]
        },
        "invalid CivoCluster spec (1 problem): spec.nodePools[1].maxNodeCount: the first "
        "System pool is the cluster's inline pool and cannot autoscale; remove maxNodeCount "
        "(and minNodeCount)",
    ),
    "gpu-required": (
        {"nodePools": [SYSTEM, pool("gpu", role="GPU")]},
        "invalid CivoCluster spec (1 problem): spec.nodePools[1].gpu: required when role is GPU",
    ),
    "name-count-role": (
        {"nodePools": [SYSTEM, pool("gpu pool", nodeCount=0, role="CPU")]},
        "invalid CivoCluster spec (3 problems): spec.nodePools[1].name: must match "
        '^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$ (got "gpu pool"); '
        "spec.nodePools[1].nodeCount: must be at least 1 (got 0); spec.nodePools[1].role: "
        "must be one of 'System' or 'GPU' (got \"CPU\")",
    ),
    "bounds-and-duplicates": (
        {"nodePools": [SYSTEM, pool("w", minNodeCount=3, maxNodeCount=2), pool("w")]},
        "invalid CivoCluster spec (2 problems): spec.nodePools[1].minNodeCount: must not "
        'exceed maxNodeCount (3 > 2); spec.nodePools[2].name: duplicate pool name "w" (also '
        "spec.nodePools[1])",
    ),
    "region-and-version": (
        {"region": "", "kubernetesVersion": ""},
        "invalid CivoCluster spec (2 problems): spec.kubernetesVersion: must not be empty; "
        "spec.region: must not be empty",
    ),
    "role-required": (
        {"nodePools": [SYSTEM, {"name": "l40s", "size": "an.g1.l40s.kube.x1"}]},
        "invalid CivoCluster spec (1 problem): spec.nodePools[1].role: required",
    ),
    "autoscaled-workers": (
        {"nodePools": [SYSTEM, pool("workers", nodeCount=1, maxNodeCount=4)]},
        "invalid CivoCluster spec (1 problem): spec.nodePools[1].name: an autoscaled pool "
        'cannot be named "workers": its Civo pool ID would be "workers", which the '
        "cluster-autoscaler treats as the node group of every pool, so its bounds would "
        "apply to all pools; rename the pool or remove maxNodeCount",
    ),
}


@pytest.mark.parametrize(("spec", "message"), INVALID_SPECS.values(), ids=INVALID_SPECS.keys())
def test_invalid_spec_is_one_fatal_naming_every_field(spec: dict[str, Any], message: str) -> None:
    """On a new XR and on a live one alike: a FATAL applies nothing, so nothing composed is lost."""
    for observed, required in ((None, None), (cluster_up(), civo_required())):
        assert fatal_only(run(request(civo_xr(**spec), observed, required))) == message


POOL_SHAPES = {
    "fixed-system-pool-named-workers": (
        pool("workers", nodeCount=3),
        expected.nodepool_spec("workers", "g4s.kube.large", None, autoscaled=False, count=3),
    ),
    "second-system-pool-may-autoscale": (
        pool("more-system", role="System", nodeCount=1, minNodeCount=1, maxNodeCount=3),
        expected.nodepool_spec("more-system", "g4s.kube.large", None, autoscaled=True),
    ),
    "autoscaled-gpu-pool": (
        pool(
            "h",
            role="GPU",
            size="an.g1.l40s.kube.x2",
            nodeCount=2,
            maxNodeCount=6,
            gpu={"acceleratorType": "L40S"},
        ),
        expected.nodepool_spec("h", "an.g1.l40s.kube.x2", "L40S", autoscaled=True, count=2),
    ),
}


@pytest.mark.parametrize(("extra", "want"), POOL_SHAPES.values(), ids=POOL_SHAPES.keys())
def test_node_pool_shapes(extra: dict[str, Any], want: dict[str, Any]) -> None:
    rsp = run(request(civo_xr(nodePools=[SYSTEM, extra]), cluster_up()))
    assert desired(rsp)[f"nodepool-{extra['name']}"]["spec"] == want


def test_size_of_live_pool_is_kept() -> None:
    state = cluster_up()
    state["nodepool-a100"] = copy.deepcopy(expected.A100_POOL)
    xr = civo_xr()
    xr["spec"]["nodePools"][2]["size"] = "g4g.kube.large"
    rsp = run(request(xr, state))
    assert desired(rsp)["nodepool-a100"] == expected.A100_POOL
    assert (
        "Warning",
        'spec.nodePools[2].size: node pool "a100" keeps size "g4g.kube.small"; Civo cannot '
        'change the size of a live pool. To use "g4g.kube.large", add a pool under a new name and '
        "remove this one once it is no longer needed.",
    ) in results(rsp)


def test_region_change_on_live_cluster_keeps_live_region() -> None:
    rsp = run(request(civo_xr(region="FRA1"), cluster_up()))
    assert desired(rsp)["civo-cluster"] == expected.CLUSTER
    assert desired(rsp)["network"] == expected.NETWORK
    assert results(rsp)[0] == (
        "Warning",
        'spec.region: the Civo cluster and its network stay in "LON1"; a region cannot change on '
        'a live cluster. To run in "FRA1", create a new CivoCluster there and move workloads.',
    )


FLANNEL_INPUT = {"civo": {"cni": "flannel", "applications": "-traefik2-nodeport,-metrics-server"}}
KEEPS_APPLICATIONS = (
    "Warning",
    "input.civo.applications: the cluster keeps the applications it was created with; Civo "
    "cannot change them on a live cluster.",
)


def test_step_input_shapes_a_new_cluster() -> None:
    rsp = run(request(civo_xr(), None, None, FLANNEL_INPUT))
    for_provider = desired(rsp)["civo-cluster"]["spec"]["forProvider"]
    assert for_provider["cni"] == "flannel"
    assert for_provider["applications"] == "-traefik2-nodeport,-metrics-server"


def test_live_cluster_keeps_cni_and_applications() -> None:
    rsp = run(request(civo_xr(), cluster_up(), None, FLANNEL_INPUT))
    assert desired(rsp)["civo-cluster"] == expected.CLUSTER
    assert results(rsp)[:2] == [
        (
            "Warning",
            'input.civo.cni: the cluster keeps CNI "cilium"; Civo cannot change the CNI of a live '
            "cluster.",
        ),
        KEEPS_APPLICATIONS,
    ]


def test_unset_kubernetes_version_is_left_to_civo() -> None:
    xr = civo_xr()
    del xr["spec"]["kubernetesVersion"]
    rsp = run(request(xr))
    assert "kubernetesVersion" not in desired(rsp)["civo-cluster"]["spec"]["forProvider"]


def test_late_initialised_inline_pool_fields_are_not_an_edit() -> None:
    state = cluster_up()
    state["civo-cluster"]["spec"]["forProvider"]["pools"] = {
        **expected.INLINE_POOL,
        "publicIpNodePool": False,
        "taint": [],
    }
    rsp = run(request(civo_xr(), state))
    assert desired(rsp)["civo-cluster"] == expected.CLUSTER
    assert not [r for r in results(rsp) if r[0] == "Warning"]


def test_inline_pool_removed_from_spec_stays_with_the_cluster() -> None:
    a100 = pool("a100", role="GPU", size="g4g.kube.small", gpu={"acceleratorType": "A100"})
    pools = [pool("core", nodeCount=1), a100]
    rsp = run(request(civo_xr(nodePools=pools), cluster_up()))
    assert desired(rsp)["civo-cluster"] == expected.CLUSTER
    assert "nodepool-core" in desired(rsp), "the new first System pool is a separate node pool"
    assert results(rsp)[0] == (
        "Warning",
        'spec.nodePools: the cluster\'s inline System pool "system" is part of the cluster and '
        "cannot be removed; it stays as it is.",
    )


def observed_pool(name: str, pool_id: str, created: bool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "kubernetes.civo.m.upbound.io/v1beta1",
        "kind": "NodePool",
        "metadata": {"name": name, "annotations": {"crossplane.io/external-name": pool_id}},
        "spec": {"forProvider": {"size": "g4s.kube.large"}},
    }
    return as_ready(body, atProvider={"id": pool_id}) if created else body


AUTOSCALED = [
    SYSTEM,
    pool("a", minNodeCount=2, maxNodeCount=5, nodeCount=2),
    pool("b", nodeCount=3, maxNodeCount=9),
]


GROUP_CASES = {
    "every-pool-id-known": (
        {"a": ("id-a", True), "b": ("id-b", True)},
        [
            {"name": "id-a", "minSize": 2, "maxSize": 5},
            {"name": "id-b", "minSize": 3, "maxSize": 9},
        ],
        None,
    ),
    "external-name-before-creation-is-not-a-pool-id": (
        {"a": ("id-a", True), "b": ("b", False)},
        [{"name": "id-a", "minSize": 2, "maxSize": 5}],
        "waiting for the Civo pool IDs of autoscaled pools b",
    ),
    "no-release-before-any-pool-id": (
        {},
        None,
        "waiting for the Civo pool IDs of autoscaled pools a, b",
    ),
}


@pytest.mark.parametrize(
    ("observed_pools", "groups", "message"), GROUP_CASES.values(), ids=GROUP_CASES.keys()
)
def test_autoscaler_groups_come_from_observed_pool_ids(
    observed_pools: dict[str, tuple[str, bool]],
    groups: list[dict[str, Any]] | None,
    message: str | None,
) -> None:
    state = cluster_up()
    for name, (pool_id, created) in observed_pools.items():
        state[f"nodepool-{name}"] = observed_pool(name, pool_id, created)
    rsp = run(request(civo_xr(nodePools=AUTOSCALED), state, civo_required()))
    composed = desired(rsp)
    if groups is None:
        assert "cluster-autoscaler" not in composed
        assert "helm-providerconfig" not in composed
    else:
        assert composed["cluster-autoscaler"] == expected.autoscaler(groups)
        assert composed["helm-providerconfig"] == expected.HELM_PROVIDER_CONFIG
    assert [m for s, m in results(rsp) if s == "Normal"] == ([message] if message else [])


def test_invalid_step_input_is_fatal() -> None:
    step_input = {"civo": {"cni": "calico", "clusterAutoscaler": {"chartVersion": "latest"}}}
    rsp = run(request(civo_xr(), None, None, step_input))
    assert fatal_only(rsp) == (
        "invalid function input (2 problems): input.civo.clusterAutoscaler.chartVersion: must "
        'match ^[0-9]+\\.[0-9]+\\.[0-9]+$ (got "latest"); input.civo.cni: must be one of '
        "'flannel' or 'cilium' (got \"calico\")"
    )


def test_composed_resource_names_are_stable() -> None:
    """Keys and object names are a public contract: civo_expected spells every one out."""
    rsp = run(request(civo_xr(), expected.autoscaled_pool_up(), civo_required()))
    assert desired(rsp) == expected.converged()
    assert conditions(rsp)["NodePools"] == (
        "False",
        "WaitingForNodes",
        "waiting for node pools l40s (0 of 1 node), a100 (not created yet)",
    )


@pytest.mark.parametrize(
    ("xr_name", "object_name", "helm_release"),
    [
        # Helm's own limit is met: the release is named after the object, as provider-helm
        # names it when no external name is set (what 0.1.0 and 0.2.0 installed).
        (
            "inference-lon",
            "inference-lon-cluster-autoscaler-5dfa4",
            "inference-lon-cluster-autoscaler-5dfa4",
        ),
        (
            "inference-lon-llama-70b-serving",
            "inference-lon-llama-70b-serving-cluster-autoscaler-18b1b",
            "inference-lon-llama-70b-serving-cluster-autosca-b7050",
        ),
        (
            "a-very-long-inference-cluster-name-in-london-for-serving-models",
            "a-very-long-inference-cluster-name-in-london-for-serving-38fa1",
            "a-very-long-inference-cluster-name-in-london-fo-ff3fd",
        ),
    ],
)
def test_the_helm_release_name_fits_helm(xr_name: str, object_name: str, helm_release: str) -> None:
    """Helm refuses release names over 53 characters; the Release's name may have 63."""
    state = cluster_up()
    state["nodepool-l40s"] = observed_pool("l40s", "a7c1e0f2-l40s", True)
    xr = civo_xr()
    xr["metadata"]["name"] = xr_name
    release = desired(run(request(xr, state, civo_required())))["cluster-autoscaler"]
    assert release["metadata"] == {
        "name": object_name,
        "annotations": {"crossplane.io/external-name": helm_release},
    }
    assert len(helm_release) <= 53


def test_live_cluster_created_without_applications_gets_none_added() -> None:
    state = cluster_up()
    del state["civo-cluster"]["spec"]["forProvider"]["applications"]
    rsp = run(request(civo_xr(), state))
    assert "applications" not in desired(rsp)["civo-cluster"]["spec"]["forProvider"]
    assert results(rsp)[0] == KEEPS_APPLICATIONS


def test_autoscaler_keeps_a_known_group_while_pool_status_flaps() -> None:
    state = cluster_up()
    state["nodepool-l40s"] = observed_pool("l40s", "a7c1e0f2-l40s", created=False)
    state["cluster-autoscaler"] = as_ready(expected.autoscaler([expected.L40S_GROUP]))
    rsp = run(request(civo_xr(), state, civo_required()))
    assert desired(rsp)["cluster-autoscaler"] == expected.autoscaler([expected.L40S_GROUP])
    assert [r for r in results(rsp) if r[0] == "Normal"] == []
