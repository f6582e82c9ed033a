"""An XR is Ready only when its kubeconfig can be used: consumers (Modelplane's InferenceCluster
among them) wait for Ready and then read the Secret status.secrets names. Every composed
resource can be Ready before that: the org credentials missing, or Civo's connection Secret not
written yet. Each case drives a World until every composed resource is Ready."""

from __future__ import annotations

import copy
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
    xr_ready,
    xr_status,
)
from tests import civo_expected, coreweave_expected

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


def converge(world: World) -> None:
    """Reconcile, reporting every composed resource Ready, until nothing new is composed."""
    for _ in range(WAIT_FOR_ACCESS):
        rsp = world.reconcile()
        for key in desired(rsp):
            world.ready(key, atProvider=AT_PROVIDER.get(key, {}))


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
