"""The cluster-autoscaler Helm values for a Civo cluster, as Civo itself runs the autoscaler."""

from __future__ import annotations

import re
from typing import Any

from function.input import ClusterAutoscalerChart

# The Secret Civo puts in kube-system of every cluster; the chart reads it in place.
CIVO_API_SECRET = "civo-api-access"  # noqa: S105 - a name, not a secret
# A published cluster-autoscaler release per Kubernetes minor (registry.k8s.io/autoscaling/
# cluster-autoscaler): upstream supports the autoscaler whose minor matches the cluster's.
RELEASE_FOR_MINOR = {
    "1.30": "v1.30.6",
    "1.31": "v1.31.4",
    "1.32": "v1.32.5",
    "1.33": "v1.33.3",
    "1.34": "v1.34.5",
    "1.35": "v1.35.0",
}
_MINOR = re.compile(r"^v?([0-9]+)\.([0-9]+)")


def kubernetes_minor(version: str | None) -> str | None:
    """ "1.34" of a Civo version string such as "1.34.1-k3s1" or "v1.34.1+k3s1"."""
    match = _MINOR.match(version or "")
    return f"{int(match.group(1))}.{int(match.group(2))}" if match else None


def image_tag(
    chart: ClusterAutoscalerChart, minor: str | None, running: str | None
) -> tuple[str | None, str | None]:
    """The autoscaler image tag to run and, when none matches the cluster, a warning.

    None keeps the chart's own image (cluster-autoscaler 1.35.0 in chart 9.59.0). While the
    cluster's version is not reported, the running tag stays: a status flap must not redeploy
    the autoscaler.
    """
    if chart.imageTag is not None:
        return chart.imageTag, None
    if minor is None:
        return running, None
    tag = RELEASE_FOR_MINOR.get(minor)
    if tag is None:
        return None, (
            f"input.civo.clusterAutoscaler.imageTag: no cluster-autoscaler release is known for "
            f"Kubernetes {minor}, so the chart's default image runs; set imageTag to the "
            f"cluster-autoscaler release matching {minor}."
        )
    return tag, None


def values(
    chart: ClusterAutoscalerChart, groups: list[dict[str, Any]], tag: str | None
) -> dict[str, Any]:
    """Helm values: the Civo cloud provider on the cluster's own API Secret, one node group per
    autoscaled pool, and Civo's own scale-down flags."""
    result: dict[str, Any] = {
        "cloudProvider": "civo",
        "secretKeyRefNameOverride": CIVO_API_SECRET,
        # With no groups the chart renders no Deployment: no autoscaler keeps acting on stale
        # pools once the last pool stops autoscaling.
        "autoscalingGroups": groups,
        # Civo's own autoscaler ships with both false: with the chart's defaults a GPU node whose
        # model server caches in an emptyDir is never scaled down.
        "extraArgs": {
            "skip-nodes-with-local-storage": chart.skipNodesWithLocalStorage,
            "skip-nodes-with-system-pods": chart.skipNodesWithSystemPods,
        },
    }
    if tag is not None:
        result["image"] = {"tag": tag}
    return result
