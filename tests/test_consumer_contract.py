"""Where this API is stricter than a consumer (Modelplane's InferenceCluster) may assume: the
exact message its apply gets from the API server, or the function's FATAL where only the
function checks, each quoted in docs/api.md ("What a consumer may rely on")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.fixtures import (
    civo_pool,
    civo_xr,
    coreweave_pool,
    coreweave_xr,
    fatal_only,
    request,
    results,
    run,
)
from harness.validator import xrds

API_PAGE = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def gpu(cloud: str, name: str = "h100", nodes: int = 1, **bounds: int) -> dict[str, Any]:
    if cloud == "coreweave":
        return coreweave_xr(
            nodePools=[coreweave_pool(name, "gd-8xh100ib-i128", nodes, "nvidia-h100", **bounds)]
        )
    return civo_xr(
        nodePools=[civo_pool(name, "an.g1.l40s.kube.x1", nodes, "nvidia-l40s", **bounds)]
    )


# What the API server refuses a consumer's XR with (the field error of its Status message).
REFUSED = {
    "coreweave-pool-name-is-a-dns-label": (
        gpu("coreweave", "H100_Pool"),
        'spec.nodePools[0].name: Invalid value: "H100_Pool": spec.nodePools[0].name in body '
        "should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'",
    ),
    "civo-counts-are-at-least-1": (
        gpu("civo", nodes=0),
        "spec.nodePools[0].nodeCount: Invalid value: 0: spec.nodePools[0].nodeCount in body "
        "should be greater than or equal to 1",
    ),
    "node-count-at-most-max": (
        gpu("coreweave", nodes=4, maxNodeCount=2),
        "spec.nodePools[0].nodeCount: Invalid value: nodeCount must be less than or equal to "
        "maxNodeCount",
    ),
    "min-node-count-at-most-max": (
        gpu("civo", minNodeCount=3, maxNodeCount=2),
        "spec.nodePools[0].minNodeCount: Invalid value: minNodeCount must be less than or equal "
        "to maxNodeCount",
    ),
    "civo-no-autoscaled-workers": (
        gpu("civo", "workers", maxNodeCount=4),
        "spec.nodePools: Invalid value: an autoscaled pool cannot be named workers: the "
        "cluster-autoscaler would apply its bounds to every pool",
    ),
}
# What only the function refuses: one FATAL, nothing applied.
FATAL = {
    "coreweave-system-pool-name-is-reserved": (
        gpu("coreweave", "modelplane-system"),
        'invalid CoreWeaveCluster spec (1 problem): spec.nodePools[0].name: "modelplane-system" '
        "is reserved for the system pool the function adds; choose another name",
    ),
    "civo-default-system-pool-name-is-taken": (
        gpu("civo", "system"),
        'invalid CivoCluster spec (1 problem): spec.nodePools[0].name: "system" is the name of '
        "the default System pool (step input civo.systemPool.name) that Civo creates with the "
        "cluster because no pool has role System; rename this pool or add a System pool",
    ),
}


@pytest.mark.parametrize(("xr", "message"), REFUSED.values(), ids=REFUSED.keys())
def test_the_api_server_refuses_what_the_api_page_says(xr: dict[str, Any], message: str) -> None:
    assert list(xrds().verdict(xr, "Ignore").errors) == [message]
    assert message in API_PAGE.read_text()


@pytest.mark.parametrize(("xr", "message"), FATAL.values(), ids=FATAL.keys())
def test_the_function_refuses_what_the_api_page_says(xr: dict[str, Any], message: str) -> None:
    assert xrds().verdict(xr, "Ignore").errors == (), "the API server accepts it"
    assert fatal_only(run(request(xr))) == message
    assert message in API_PAGE.read_text()


@pytest.mark.parametrize("cloud", ["coreweave", "civo"])
def test_gpu_pools_alone_are_accepted(cloud: str) -> None:
    xr = gpu(cloud)
    assert xrds().verdict(xr, "Ignore").errors == ()
    assert [severity for severity, _ in results(run(request(xr)))] == ["Normal"]
