"""What the real cluster-autoscaler chart must create for a CivoCluster, built from what a user
and the providers gave (the XR's pools, the pool IDs Civo reported, the Composition's step
input, the chart's own default arguments), never from the values the function wrote. Shared by
the chart check in `make test` (tests/test_autoscaler_chart.py) and the e2e suite, where the
real provider-helm installs the chart (tests/e2e/test_cluster_autoscaler.py)."""

from __future__ import annotations

import tarfile
from pathlib import Path
from typing import Any

import yaml

from function.civo.autoscaler import CIVO_API_SECRET, kubernetes_minor
from function.input import parse_input
from harness.pinned_chart import step_input

# Where Civo's own API Secret sits, and the keys the chart reads from it (chart README).
CIVO_ENV = {
    "CIVO_API_URL": "api-url",
    "CIVO_API_KEY": "api-key",
    "CIVO_CLUSTER_ID": "cluster-id",
    "CIVO_REGION": "region",
}
CHART_IMAGE = "registry.k8s.io/autoscaling/cluster-autoscaler"
# The cluster-autoscaler release expected for the minor the tests' Civo clusters run (1.34),
# written here, not read from the function's RELEASE_FOR_MINOR, so that a wrong entry there
# fails the tests: upstream's newest 1.34 patch release when chart 9.59.0 was pinned. The
# chart's own minor is checked against its appVersion (tests/test_autoscaler_chart.py).
EXPECTED_RELEASE = {"1.34": "v1.34.5"}
CONTAINER = "civo-cluster-autoscaler"


def chart_yaml(archive: Path, name: str) -> Any:
    with tarfile.open(archive) as chart:
        member = chart.extractfile(f"cluster-autoscaler/{name}")
        assert member is not None
        return yaml.safe_load(member.read())


def command(pools: list[dict[str, Any]], pool_ids: dict[str, str], archive: Path) -> list[str]:
    """The autoscaler's command line: one --nodes=<min>:<max>:<Civo pool ID> per autoscaled pool
    of the XR, in the XR's order, then the chart's arguments with the step input's scale-down
    flags."""
    nodes = [
        f"--nodes={pool.get('minNodeCount', pool.get('nodeCount') or 1)}:"
        f"{pool['maxNodeCount']}:{pool_ids[pool['name']]}"
        for pool in pools
        if pool.get("maxNodeCount") is not None
    ]
    chart = parse_input(step_input()).civo.clusterAutoscaler
    extra = {
        **chart_yaml(archive, "values.yaml")["extraArgs"],
        "skip-nodes-with-local-storage": chart.skipNodesWithLocalStorage,
        "skip-nodes-with-system-pods": chart.skipNodesWithSystemPods,
    }
    flags = [
        f"--{key}={str(value).lower() if isinstance(value, bool) else value}"
        for key, value in sorted(extra.items())
    ]
    return [
        "./cluster-autoscaler",
        "--cloud-provider=civo",
        "--namespace=kube-system",
        *nodes,
        *flags,
    ]


def image(kubernetes_version: str | None) -> str | None:
    """The cluster-autoscaler release for the cluster's minor (None: unknown here)."""
    minor = kubernetes_minor(kubernetes_version)
    return f"{CHART_IMAGE}:{EXPECTED_RELEASE[minor]}" if minor is not None else None


def chart_app_version(archive: Path) -> str:
    """The cluster-autoscaler version the chart itself ships (Chart.yaml's appVersion)."""
    return str(chart_yaml(archive, "Chart.yaml")["appVersion"])


def civo_env() -> list[dict[str, Any]]:
    """The CIVO_* variables, each read from Civo's own Secret in kube-system."""
    return [
        {"name": name, "valueFrom": {"secretKeyRef": {"key": key, "name": CIVO_API_SECRET}}}
        for name, key in CIVO_ENV.items()
    ]
