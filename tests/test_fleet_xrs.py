"""The fleet `make fleet` creates (hack/fleet/xrs.py): names of its own per XR, CKS pool names
unique across the fleet, and the autoscaled CivoClusters it was asked for."""

from __future__ import annotations

import pytest

from hack.fleet.xrs import autoscaled, fleet


def test_every_xr_and_every_cks_pool_has_a_name_of_its_own() -> None:
    members = fleet(3, civo_autoscaled=3)
    assert [m.name for m in members] == [
        "fleet-east-000",
        "fleet-lon-000",
        "fleet-east-001",
        "fleet-lon-001",
        "fleet-east-002",
        "fleet-lon-002",
    ]
    coreweave_pools = [
        p["name"]
        for m in members
        if m.kind.kind == "CoreWeaveCluster"
        for p in m.manifest["spec"]["nodePools"]
    ]
    assert coreweave_pools == ["h100", "l40s", "cpu"] * 3
    assert {m.described for m in members[:2]} == {
        "CoreWeaveCluster/ml-team/fleet-east-000",
        "CivoCluster/ml-team/fleet-lon-000",
    }


@pytest.mark.parametrize(("size", "civo_autoscaled", "expected"), [(4, 4, 4), (4, 1, 1), (4, 0, 0)])
def test_only_the_first_civo_clusters_autoscale(
    size: int, civo_autoscaled: int, expected: int
) -> None:
    civo = [m for m in fleet(size, civo_autoscaled) if m.kind.kind == "CivoCluster"]
    assert [autoscaled(m) for m in civo] == [i < expected for i in range(size)]


def test_a_fixed_civo_pool_keeps_its_initial_size() -> None:
    fixed = next(m for m in fleet(1, civo_autoscaled=0) if m.kind.kind == "CivoCluster")
    l40s = next(p for p in fixed.manifest["spec"]["nodePools"] if p["name"] == "l40s")
    assert l40s == {
        "name": "l40s",
        "role": "GPU",
        "size": "an.g1.l40s.kube.x1",
        "nodeCount": 1,
        "gpu": {"acceleratorType": "nvidia-l40s"},
    }


def test_only_coreweave_requires_resources_when_converged() -> None:
    assert {(m.kind.kind, m.requires_resources) for m in fleet(1, 1)} == {
        ("CoreWeaveCluster", True),
        ("CivoCluster", False),
    }
