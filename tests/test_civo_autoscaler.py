"""The cluster-autoscaler as Civo runs it: scale-down flags and the image matching the cluster."""

from __future__ import annotations

from typing import Any

import pytest

from harness.fixtures import civo_required, civo_xr, desired, request, results, run
from tests import civo_expected as expected

NO_SKIPS = {"skip-nodes-with-local-storage": False, "skip-nodes-with-system-pods": False}


def state(reported_version: str | None = None) -> dict[str, dict[str, Any]]:
    if reported_version is None:
        return expected.autoscaled_pool_up()
    return expected.autoscaled_pool_up(kubernetesVersion=reported_version)


def values(spec_version: str | None, reported: str | None, chart: dict[str, Any] | None) -> Any:
    xr = civo_xr()
    if spec_version is None:
        del xr["spec"]["kubernetesVersion"]
    else:
        xr["spec"]["kubernetesVersion"] = spec_version
    step_input = {"civo": {"clusterAutoscaler": chart}} if chart else None
    rsp = run(request(xr, state(reported), civo_required(), step_input))
    release = desired(rsp)["cluster-autoscaler"]["spec"]["forProvider"]["values"]
    return release, [m for s, m in results(rsp) if s == "Warning"]


BASE: dict[str, Any] = {
    "cloudProvider": "civo",
    "secretKeyRefNameOverride": "civo-api-access",
    "autoscalingGroups": [expected.L40S_GROUP],
}
UNKNOWN_MINOR = (
    "input.civo.clusterAutoscaler.imageTag: no cluster-autoscaler release is known for "
    "Kubernetes 1.36, so the chart's default image runs; set imageTag to the "
    "cluster-autoscaler release matching 1.36."
)


@pytest.mark.parametrize(
    ("spec_version", "reported", "chart", "want", "warnings"),
    [
        pytest.param(
            "1.34.1-k3s1",
            None,
            None,
            {**BASE, "extraArgs": NO_SKIPS, "image": {"tag": "v1.34.5"}},
            [],
            id="minor-from-spec",
        ),
        pytest.param(
            None,
            "1.33.4-k3s1",
            None,
            {**BASE, "extraArgs": NO_SKIPS, "image": {"tag": "v1.33.3"}},
            [],
            id="civo-default-version-as-reported",
        ),
        pytest.param(
            "1.35.0-k3s1",
            "v1.34.1+k3s1",
            None,
            {**BASE, "extraArgs": NO_SKIPS, "image": {"tag": "v1.34.5"}},
            [],
            id="reported-version-wins-during-an-upgrade",
        ),
        pytest.param(
            None, None, None, {**BASE, "extraArgs": NO_SKIPS}, [], id="version-unknown-chart-image"
        ),
        pytest.param(
            "1.36.0-k3s1",
            None,
            None,
            {**BASE, "extraArgs": NO_SKIPS},
            [UNKNOWN_MINOR],
            id="unknown-minor-chart-image-with-warning",
        ),
        pytest.param(
            "1.36.0-k3s1",
            None,
            {"imageTag": "v1.36.0", "skipNodesWithSystemPods": True},
            {
                **BASE,
                "extraArgs": {**NO_SKIPS, "skip-nodes-with-system-pods": True},
                "image": {"tag": "v1.36.0"},
            },
            [],
            id="step-input-overrides",
        ),
    ],
)
def test_release_values(
    spec_version: str | None,
    reported: str | None,
    chart: dict[str, Any] | None,
    want: dict[str, Any],
    warnings: list[str],
) -> None:
    assert values(spec_version, reported, chart) == (want, warnings)


def test_running_image_stays_while_the_version_is_unreported() -> None:
    xr = civo_xr()
    del xr["spec"]["kubernetesVersion"]
    observed = state("1.33.4-k3s1")
    rsp = run(request(xr, observed, civo_required()))
    release = desired(rsp)["cluster-autoscaler"]
    assert release["spec"]["forProvider"]["values"]["image"] == {"tag": "v1.33.3"}
    observed["cluster-autoscaler"] = release
    observed["helm-providerconfig"] = desired(rsp)["helm-providerconfig"]
    observed["civo-cluster"]["status"] = {}  # the cluster's status flaps
    rsp = run(request(xr, observed, civo_required()))
    assert desired(rsp)["cluster-autoscaler"] == release


def test_invalid_autoscaler_input_names_the_field() -> None:
    xr = civo_xr()
    step_input = {
        "civo": {
            "clusterAutoscaler": {"imageTag": "v1.34 latest", "skipNodesWithLocalStorage": "no"}
        }
    }
    rsp = run(request(xr, None, None, step_input))
    assert results(rsp) == [
        (
            "Fatal",
            "invalid function input (2 problems): input.civo.clusterAutoscaler.imageTag: must "
            'match ^[A-Za-z0-9_][A-Za-z0-9_.-]*$ (got "v1.34 latest"); '
            "input.civo.clusterAutoscaler.skipNodesWithLocalStorage: must be a boolean",
        )
    ]
