"""An XR is Ready when its cluster serves (docs/design.md, "Ready means serving"): consumers
(Modelplane's InferenceCluster among them) wait for Ready, then read the Secret status.secrets
names and build on it, and drop what they built whenever Ready drops.

- Never without a usable kubeconfig: every composed resource can be Ready before it exists (the
  org credentials missing, or Civo's connection Secret not written yet).
- Not at creation before every pool runs its target's nodes.
- Once Ready, it stays Ready while the cluster serves (pools added, resized or waiting for
  capacity; the cloud updating the cluster in place), and drops only when the cloud reports the
  cluster failed or gone."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from harness.fixtures import (
    CLUSTER_PROVIDER_CONFIG,
    ENDPOINT,
    World,
    civo_connection_secret,
    civo_pool,
    civo_xr,
    conditions,
    coreweave_pool,
    coreweave_xr,
    credentials_secret,
    desired,
    readiness,
    results,
    xr_ready,
    xr_status,
)
from tests import civo_expected, coreweave_expected
from tests.coreweave_expected import running

# Provider status that lets each composed resource's dependants go on.
AT_PROVIDER = {
    "vpc": {"id": "3f0c"},
    "cks-cluster": {"id": "9e1d", "apiServerEndpoint": ENDPOINT},
    "network": {"id": "1d3e-net"},
    "firewall": {"id": "8c2a-fw"},
    "civo-cluster": {"id": "5f0b-cluster", "apiEndpoint": "https://74.220.1.2:6443"},
}
# One pool each: what a pool adds to readiness is the lifecycle tests' subject, not this one's.
COREWEAVE = coreweave_xr(nodePools=[coreweave_pool("cpu", "cd-gp-a192-genoa", 2)])
CIVO = civo_xr(nodePools=[civo_pool("system", "g4s.kube.medium", 2)])
WAIT_FOR_ACCESS = 5  # reconciles: more than either kind needs to converge


def converge(world: World, short: Mapping[str, tuple[int, int]] = {}) -> None:
    """Reconcile, reporting every composed resource Ready, until nothing new is composed: a
    CKS pool runs all its nodes but those `short` names by key, which run (current, queued)."""
    for _ in range(WAIT_FOR_ACCESS):
        rsp = world.reconcile()
        for key, body in desired(rsp).items():
            manifest = body.get("spec", {}).get("forProvider", {}).get("manifest", {})
            is_pool = manifest.get("kind") == "NodePool"
            at_provider = running(body, *short.get(key, (None, 0))) if is_pool else {}
            world.ready(key, atProvider=AT_PROVIDER.get(key, at_provider))


@dataclass(frozen=True)
class Case:
    xr: dict[str, Any]
    cluster_objects: tuple[dict[str, Any], ...]  # what Crossplane can fetch for the function
    access: tuple[str, str]  # ClusterAccess status and reason once converged
    ready: bool
    secrets: list[dict[str, str]]

    def world(self) -> World:
        world = World(copy.deepcopy(self.xr))
        world.cluster_objects = list(self.cluster_objects)
        return world


COREWEAVE_SECRETS = [
    {"type": "Kubeconfig", "name": coreweave_expected.SECRET_NAME, "key": "kubeconfig"}
]
CIVO_SECRETS = [{"type": "Kubeconfig", "name": civo_expected.SECRET_NAME, "key": "kubeconfig"}]

CASES = {
    "coreweave-with-credentials": Case(
        COREWEAVE,
        (CLUSTER_PROVIDER_CONFIG, credentials_secret()),
        ("True", "Available"),
        True,
        COREWEAVE_SECRETS,
    ),
    "coreweave-credentials-missing": Case(
        COREWEAVE, (CLUSTER_PROVIDER_CONFIG,), ("False", "WaitingForCredentials"), False, []
    ),
    "civo-connection-secret-written": Case(
        CIVO, (civo_connection_secret("kubeconfig"),), ("True", "Available"), True, CIVO_SECRETS
    ),
    "civo-connection-secret-not-written": Case(
        CIVO, (), ("False", "WaitingForConnectionSecret"), False, []
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_an_xr_is_ready_only_with_its_kubeconfig(case: Case) -> None:
    world = case.world()
    converge(world)
    rsp = world.reconcile()
    assert all(o.get("status", {}).get("conditions") for o in world.observed.values())
    assert conditions(rsp)["ClusterAccess"][:2] == case.access
    assert xr_ready(rsp) is case.ready
    assert xr_status(rsp).get("secrets", []) == case.secrets


def test_readiness_returns_to_the_composed_resources_once_access_is_established() -> None:
    world = CASES["civo-connection-secret-not-written"].world()
    converge(world)
    assert xr_ready(world.responses[-1]) is False
    world.cluster_objects = [civo_connection_secret("kubeconfig")]
    converge(world)
    rsp = world.responses[-1]
    assert conditions(rsp)["ClusterAccess"][:2] == ("True", "Available")
    assert xr_ready(rsp) is True


# --- Ready means serving --------------------------------------------------------------------

GPU_POOLS = {
    "CoreWeaveCluster": [coreweave_pool("l40s", "gd-8xl40s-i128", 2, "nvidia-l40s")],
    "CivoCluster": [civo_pool("l40s", "an.g1.l40s.kube.x1", 2, "nvidia-l40s")],
}
CIVO_SHORTAGE = (
    "create failed: async create failed: failed to create the node pool: Error: "
    "InsufficientCapacity: no capacity for an.g1.l40s.kube.x1 in LON1"
)


def serving_world(kind: str) -> World:
    """A GPU-only XR of that kind, as Modelplane's InferenceCluster composes it, grown until
    every composed resource is Ready and every pool runs its nodes."""
    if kind == "CoreWeaveCluster":
        world = World(coreweave_xr(nodePools=copy.deepcopy(GPU_POOLS[kind])))
        world.cluster_objects = [CLUSTER_PROVIDER_CONFIG, credentials_secret()]
        converge(world)
    else:
        world = World(civo_xr(nodePools=copy.deepcopy(GPU_POOLS[kind])))
        world.cluster_objects = [civo_connection_secret("kubeconfig")]
        converge(world)
        world.ready("nodepool-l40s", atProvider={"id": "l40s-id", "nodeCount": 2})
    assert xr_ready(world.reconcile()) is True
    return world


def test_a_coreweave_cluster_is_not_ready_before_its_pools_run_their_nodes() -> None:
    world = World(coreweave_xr(nodePools=copy.deepcopy(GPU_POOLS["CoreWeaveCluster"])))
    world.cluster_objects = [CLUSTER_PROVIDER_CONFIG, credentials_secret()]
    converge(world, short={"nodepool-l40s": (0, 2)})
    rsp = world.reconcile()
    assert all(readiness(rsp).values()), "every composed resource is Ready: CKS validated l40s"
    assert xr_ready(rsp) is False
    assert conditions(rsp)["NodePools"] == (
        "False",
        "WaitingForNodes",
        "waiting for node pool l40s (0 of 2 nodes, 2 queued); at target: modelplane-system "
        "(1 of 1 node)",
    )
    world.ready("nodepool-l40s", atProvider=running(desired(rsp)["nodepool-l40s"], 1, 1))
    assert xr_ready(world.reconcile()) is False
    world.ready("nodepool-l40s", atProvider=running(desired(rsp)["nodepool-l40s"]))
    rsp = world.reconcile()
    assert xr_ready(rsp) is True
    assert conditions(rsp)["NodePools"] == (
        "True",
        "AtTarget",
        "node pools at target: modelplane-system (1 of 1 node), l40s (2 of 2 nodes)",
    )


def test_a_civo_cluster_is_not_ready_while_civo_has_no_capacity_for_a_pool() -> None:
    world = World(civo_xr(nodePools=copy.deepcopy(GPU_POOLS["CivoCluster"])))
    world.cluster_objects = [civo_connection_secret("kubeconfig")]
    converge(world)
    world.ready("nodepool-l40s", ready=False, atProvider={"id": "l40s-id"})
    world.unreachable("nodepool-l40s", CIVO_SHORTAGE)
    rsp = world.reconcile()
    assert xr_ready(rsp) is False
    assert conditions(rsp)["NodePools"] == (
        "False",
        "WaitingForNodes",
        f"waiting for node pool l40s (0 of 2 nodes; not Ready yet: {CIVO_SHORTAGE})",
    )
    world.ready("nodepool-l40s", atProvider={"id": "l40s-id", "nodeCount": 2})
    rsp = world.reconcile()
    assert xr_ready(rsp) is True
    assert conditions(rsp)["NodePools"] == (
        "True",
        "AtTarget",
        "node pools at target: l40s (2 of 2 nodes)",
    )


def add_pool(world: World, kind: str) -> None:
    """A GPU pool added, whose nodes CKS or Civo cannot find capacity for."""
    if kind == "CoreWeaveCluster":
        world.xr["spec"]["nodePools"].append(
            coreweave_pool("h100", "gd-8xh100ib-i128", 1, "nvidia-h100")
        )
        rsp = world.reconcile()
        world.ready("nodepool-h100", atProvider=running(desired(rsp)["nodepool-h100"], 0, 1))
    else:
        world.xr["spec"]["nodePools"].append(civo_pool("a100", "g4g.kube.small", 1, "nvidia-a100"))
        world.reconcile()
        world.ready("nodepool-a100", ready=False, atProvider={"id": "a100-id"})
        world.unreachable("nodepool-a100", CIVO_SHORTAGE)


def resize_pool(world: World, kind: str) -> None:
    """l40s grown from 2 to 4 nodes; the cloud runs 2 of them so far."""
    world.xr["spec"]["nodePools"][0]["nodeCount"] = 4
    rsp = world.reconcile()
    if kind == "CoreWeaveCluster":
        world.ready("nodepool-l40s", atProvider=running(desired(rsp)["nodepool-l40s"], 2, 2))
    else:
        world.ready("nodepool-l40s", ready=False, atProvider={"id": "l40s-id", "nodeCount": 2})


def update_in_place(world: World, kind: str) -> None:
    """The cloud updates the cluster in place: not Ready, the kubeconfig kept."""
    key, status = (
        ("cks-cluster", "STATUS_UPDATING")
        if kind == "CoreWeaveCluster"
        else ("civo-cluster", "UPGRADING")
    )
    world.ready(key, ready=False, atProvider={**AT_PROVIDER[key], "status": status})


# What happens to a Ready XR, and what each pool waits for afterwards.
WHILE_SERVING = {
    "CoreWeaveCluster": {
        "pool-added": (add_pool, "waiting for node pool h100 (0 of 1 node, 1 queued)"),
        "pool-resized": (resize_pool, "waiting for node pool l40s (2 of 4 nodes, 2 queued)"),
        "cluster-updated-in-place": (update_in_place, None),
    },
    "CivoCluster": {
        "pool-added": (
            add_pool,
            f"waiting for node pool a100 (0 of 1 node; not Ready yet: {CIVO_SHORTAGE})",
        ),
        "pool-resized": (resize_pool, "waiting for node pool l40s (2 of 4 nodes; not Ready yet)"),
        "cluster-updated-in-place": (update_in_place, None),
    },
}
SERVING_CASES = [
    (kind, change, waiting)
    for kind, changes in WHILE_SERVING.items()
    for change, waiting in changes.values()
]


@pytest.mark.parametrize(
    ("kind", "change", "waiting"),
    SERVING_CASES,
    ids=[f"{kind}-{name}" for kind, changes in WHILE_SERVING.items() for name in changes],
)
def test_a_ready_xr_stays_ready_while_its_cluster_serves(
    kind: str, change: Callable[[World, str], None], waiting: str | None
) -> None:
    world = serving_world(kind)
    before = desired(world.responses[-1])
    change(world, kind)
    for _ in range(2):  # and on the reconcile after Crossplane wrote the XR's Ready
        rsp = world.reconcile()
        assert xr_ready(rsp) is True
        assert conditions(rsp)["ClusterAccess"][0] == "True"
        if waiting is not None:
            assert conditions(rsp)["NodePools"][:2] == ("False", "WaitingForNodes")
            assert conditions(rsp)["NodePools"][2].startswith(waiting)
    assert set(before) <= set(desired(rsp))


CLUSTER_KEY = {"CoreWeaveCluster": "cks-cluster", "CivoCluster": "civo-cluster"}
CLOUD = {
    "CoreWeaveCluster": ("CKS", "inference-east-c7d16"),
    "CivoCluster": ("Civo", "inference-lon-34d99"),
}
# What the cloud reports of the cluster (None: its managed resource is gone), and whether the
# XR stays Ready.
REPORTS = {
    "CoreWeaveCluster": {
        "STATUS_UPGRADING": True,
        "STATUS_RUNNING": True,
        "STATUS_FAILED": False,
        "STATUS_DELETING": False,
        "STATUS_CREATING": False,
        None: False,
    },
    "CivoCluster": {
        "SCALING": True,
        "ACTIVE": True,
        "FAILED": False,
        "DELETING": False,
        "BUILDING": False,
        None: False,
    },
}
REPORT_CASES = [
    (k, status, ready) for k, reports in REPORTS.items() for status, ready in reports.items()
]


@pytest.mark.parametrize(
    ("kind", "status", "stays_ready"),
    REPORT_CASES,
    ids=[f"{k}-{status or 'gone'}" for k, status, _ in REPORT_CASES],
)
def test_a_ready_xr_drops_ready_only_when_its_cluster_cannot_be_used(
    kind: str, status: str | None, stays_ready: bool
) -> None:
    world = serving_world(kind)
    before = desired(world.responses[-1])
    key = CLUSTER_KEY[kind]
    cloud, name = CLOUD[kind]
    if status is None:
        del world.observed[key]
    else:
        world.ready(key, ready=False, atProvider={**AT_PROVIDER[key], "status": status})
    rsp = world.reconcile()
    assert xr_ready(rsp) is stays_ready
    assert desired(rsp) == before, "nothing composed changes"
    if stays_ready:
        assert conditions(rsp)["ClusterAccess"][:2] == ("True", "Available")
        return
    why = (
        f'{cloud} cluster "{name}" is gone from the control plane; it is created again, and the '
        "kubeconfig follows once it is Ready"
        if status is None
        else f'{cloud} reports cluster "{name}" as {status}: it cannot be used'
    )
    reason = "ClusterGone" if status is None else "ClusterNotServing"
    assert conditions(rsp)["ClusterAccess"] == ("False", reason, why)
    assert ("Warning", why) in results(rsp)


def test_after_a_failure_ready_returns_as_at_creation() -> None:
    """Once the XR lost Ready, its consumers dropped what they built on it: Ready returns when
    the cluster serves again and every pool runs its nodes, as at creation."""
    world = serving_world("CoreWeaveCluster")
    add_pool(world, "CoreWeaveCluster")
    world.ready(
        "cks-cluster",
        ready=False,
        atProvider={**AT_PROVIDER["cks-cluster"], "status": "STATUS_FAILED"},
    )
    assert xr_ready(world.reconcile()) is False
    world.ready(
        "cks-cluster", atProvider={**AT_PROVIDER["cks-cluster"], "status": "STATUS_RUNNING"}
    )
    rsp = world.reconcile()
    assert conditions(rsp)["ClusterAccess"][:2] == ("True", "Available")
    assert xr_ready(rsp) is False, "h100 still waits for capacity"
    world.ready("nodepool-h100", atProvider=running(desired(rsp)["nodepool-h100"]))
    assert xr_ready(world.reconcile()) is True
