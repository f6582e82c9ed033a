"""The cluster-autoscaler as Civo runs it: scale-down flags and the image matching the cluster."""

from __future__ import annotations

from typing import Any

import pytest

from harness.fixtures import civo_required, civo_xr, desired, request, results, run
from tests import civo_expected as expected

NO_SKIPS = {"skip-nodes-with-local-storage": False, "skip-nodes-with-system-pods": False}


BASE: dict[str, Any] = {
    "cloudProvider": "civo",
    "secretKeyRefNameOverride": "civo-api-access",
    "autoscalingGroups": [expected.L40S_GROUP],
    "extraArgs": NO_SKIPS,
}
UNKNOWN_MINOR = (
    "input.civo.clusterAutoscaler.imageTag: no cluster-autoscaler release is known for "
    "Kubernetes 1.36, so the chart's default image runs; set imageTag to the "
    "cluster-autoscaler release matching 1.36."
)


RELEASE_CASES = {
    "minor-from-spec": ("1.34.1-k3s1", {}, None, {**BASE, "image": {"tag": "v1.34.5"}}, []),
    "civo-default-version-as-reported": (
        None,
        {"kubernetesVersion": "1.33.4-k3s1"},
        None,
        {**BASE, "image": {"tag": "v1.33.3"}},
        [],
    ),
    "reported-version-wins-during-an-upgrade": (
        "1.35.0-k3s1",
        {"kubernetesVersion": "v1.34.1+k3s1"},
        None,
        {**BASE, "image": {"tag": "v1.34.5"}},
        [],
    ),
    "version-unknown-chart-image": (None, {}, None, BASE, []),
    "unknown-minor-chart-image-with-warning": ("1.36.0-k3s1", {}, None, BASE, [UNKNOWN_MINOR]),
    "step-input-overrides": (
        "1.36.0-k3s1",
        {},
        {"imageTag": "v1.36.0", "skipNodesWithSystemPods": True},
        {
            **BASE,
            "extraArgs": {**NO_SKIPS, "skip-nodes-with-system-pods": True},
            "image": {"tag": "v1.36.0"},
        },
        [],
    ),
}


@pytest.mark.parametrize(
    ("spec_version", "reported", "chart", "want", "warnings"),
    RELEASE_CASES.values(),
    ids=RELEASE_CASES.keys(),
)
def test_release_values(
    spec_version: str | None,
    reported: dict[str, str],
    chart: dict[str, Any] | None,
    want: dict[str, Any],
    warnings: list[str],
) -> None:
    """The Release's values and the Warnings, for the XR's spec.kubernetesVersion (None: unset)
    and what Civo reports of the cluster (reported: its status.atProvider fields)."""
    xr = civo_xr(kubernetesVersion=spec_version)
    if spec_version is None:
        del xr["spec"]["kubernetesVersion"]
    step_input = {"civo": {"clusterAutoscaler": chart}} if chart else None
    rsp = run(request(xr, expected.autoscaled_pool_up(**reported), civo_required(), step_input))
    assert desired(rsp)["cluster-autoscaler"]["spec"]["forProvider"]["values"] == want
    assert [m for s, m in results(rsp) if s == "Warning"] == warnings


def test_running_image_stays_while_the_version_is_unreported() -> None:
    xr = civo_xr()
    del xr["spec"]["kubernetesVersion"]
    observed = expected.autoscaled_pool_up(kubernetesVersion="1.33.4-k3s1")
    rsp = run(request(xr, observed, civo_required()))
    release = desired(rsp)["cluster-autoscaler"]
    assert release["spec"]["forProvider"]["values"]["image"] == {"tag": "v1.33.3"}
    observed["cluster-autoscaler"] = release
    observed["helm-providerconfig"] = desired(rsp)["helm-providerconfig"]
    observed["civo-cluster"]["status"] = {}  # the cluster's status flaps
    rsp = run(request(xr, observed, civo_required()))
    assert desired(rsp)["cluster-autoscaler"] == release


def test_invalid_autoscaler_input_names_the_field() -> None:
    step_input = {
        "civo": {
            "clusterAutoscaler": {"imageTag": "v1.34 latest", "skipNodesWithLocalStorage": "no"}
        }
    }
    rsp = run(request(civo_xr(), step_input=step_input))
    assert results(rsp) == [
        (
            "Fatal",
            "invalid function input (2 problems): input.civo.clusterAutoscaler.imageTag: must "
            'match ^[A-Za-z0-9_][A-Za-z0-9_.-]*$ (got "v1.34 latest"); '
            "input.civo.clusterAutoscaler.skipNodesWithLocalStorage: must be a boolean",
        )
    ]
