"""The real cluster-autoscaler chart, rendered by the Helm that provider-helm embeds, with the
values of every committed Civo stage that composes the autoscaler Release.

The chart has no values.schema.json: Helm accepts any values, and a misspelt one is silently
ignored. Only the rendered Deployment proves that the autoscaler would run with the cloud
provider, node groups, flags, Secret and image the function means. The expectations are built
from the stage's own inputs (the XR's pools, the pool IDs and Kubernetes version the observed
resources report, the Composition's step input, the chart's own default arguments), not from
the values the function wrote.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from function.civo.autoscaler import RELEASE_FOR_MINOR
from harness.e2e.binaries import helm
from harness.example_sets import STAGES, ExampleSet, documents, example_sets
from harness.pinned_chart import CHARTS, chart_archive
from tests import autoscaler_expected as expect

RELEASE_KIND = ("helm.m.crossplane.io/v1beta1", "Release")


def stages_with_release() -> list[tuple[ExampleSet, str, dict[str, Any]]]:
    """(example set, stage, Release) of every committed render that composes the Release."""
    return [
        (example, stage, doc)
        for example in example_sets()
        for stage in STAGES
        if example.rendered(stage).is_file()
        for doc in documents(example.rendered(stage))
        if (doc.get("apiVersion"), doc.get("kind")) == RELEASE_KIND
    ]


def chart_or_skip(release: dict[str, Any], *, with_helm: bool = True) -> Path:
    """The archive of the Release's chart version; skips, saying why, without it or (with_helm)
    without Helm."""
    archive = chart_archive(release["spec"]["forProvider"]["chart"]["version"])
    if not archive.exists():
        pytest.skip(f"the chart {archive.name} is not in {CHARTS}")
    if with_helm and not helm().exists():
        pytest.skip(f"Helm is not built at {helm()}: run `make test` (it builds it with Go)")
    return archive


def expected_args(example: ExampleSet, stage: str, archive: Path) -> list[str]:
    """The autoscaler's command line the chart must render for this stage."""
    xr = yaml.safe_load(example.xr.read_text())
    pool_ids: dict[str, str] = {}
    for pool in documents(example.observed(stage)):
        pool_id = pool.get("status", {}).get("atProvider", {}).get("id")
        if pool["kind"] == "NodePool" and pool_id:
            key = pool["metadata"]["annotations"]["crossplane.io/composition-resource-name"]
            pool_ids[key.removeprefix("nodepool-")] = pool_id
    return expect.command(xr["spec"]["nodePools"], pool_ids, archive)


def expected_image(example: ExampleSet, stage: str) -> str:
    """The release for the cluster's minor: the version Civo reports, else the XR's
    spec.kubernetesVersion; with neither (a status that lost it in a Ready flap, and no version
    asked for), the image the observed Release runs: a flap must not redeploy the autoscaler."""
    observed = documents(example.observed(stage))
    cluster = next(d for d in observed if d["kind"] == "Cluster")
    xr = yaml.safe_load(example.xr.read_text())
    reported = cluster["status"]["atProvider"].get("kubernetesVersion")
    wanted = expect.image(reported or xr["spec"].get("kubernetesVersion"))
    if wanted is not None:
        return wanted
    running = next(d for d in observed if (d["apiVersion"], d["kind"]) == RELEASE_KIND)
    return f"{expect.CHART_IMAGE}:{running['spec']['forProvider']['values']['image']['tag']}"


def render(release: dict[str, Any], archive: Path, tmp: Path) -> list[dict[str, Any]]:
    for_provider = release["spec"]["forProvider"]
    values = tmp / "values.yaml"
    values.write_text(yaml.safe_dump(for_provider["values"]))
    template = [str(helm()), "template", "cluster-autoscaler", str(archive)]
    command = [*template, f"--namespace={for_provider['namespace']}", f"--values={values}"]
    result = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)
    assert result.returncode == 0, f"$ {shlex.join(command)}\n{result.stderr}"
    return [d for d in yaml.safe_load_all(result.stdout) if d]


RELEASES = stages_with_release()


def test_the_committed_renders_compose_the_release() -> None:
    # Every Civo example converges with an autoscaled pool: its converged and ready-flap
    # stages compose the Release. Fewer means this check silently covers less.
    assert [(example.name, stage) for example, stage, _ in RELEASES] == [
        ("civo", "converged"),
        ("civo", "ready-flap"),
        ("civo-api-reference", "converged"),
        ("civo-api-reference", "ready-flap"),
    ]


@pytest.mark.parametrize(
    ("example", "stage", "release"),
    RELEASES,
    ids=[f"{example.name}/{stage}" for example, stage, _ in RELEASES],
)
def test_the_chart_renders_the_autoscaler_the_function_means(
    example: ExampleSet, stage: str, release: dict[str, Any], tmp_path: Path
) -> None:
    archive = chart_or_skip(release)
    rendered = render(release, archive, tmp_path)

    deployments = [d for d in rendered if d["kind"] == "Deployment"]
    assert len(deployments) == 1, [d["kind"] for d in rendered]
    deployment = deployments[0]
    assert deployment["metadata"]["namespace"] == "kube-system"
    containers = deployment["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == [expect.CONTAINER]
    container = containers[0]
    assert container["command"] == expected_args(example, stage, archive)
    assert container["image"] == expected_image(example, stage)
    civo_env = [e for e in container["env"] if e["name"].startswith("CIVO_")]
    assert civo_env == expect.civo_env()
    # The chart's own Secret is not rendered: the autoscaler reads Civo's in place.
    assert [d for d in rendered if d["kind"] == "Secret"] == []


def test_without_autoscaled_pools_the_chart_renders_no_autoscaler(tmp_path: Path) -> None:
    """The last autoscaled pool made fixed: the function keeps the Release with no node groups,
    and the chart then renders no Deployment (no autoscaler acting on stale pools)."""
    _, _, release = RELEASES[0]
    archive = chart_or_skip(release)
    fixed = yaml.safe_load(yaml.safe_dump(release))
    fixed["spec"]["forProvider"]["values"]["autoscalingGroups"] = []
    kinds = sorted(d["kind"] for d in render(fixed, archive, tmp_path))
    # Its RBAC, Service and PodDisruptionBudget stay, inert: nothing runs the autoscaler.
    assert kinds == [
        "ClusterRole",
        "ClusterRoleBinding",
        "PodDisruptionBudget",
        "Role",
        "RoleBinding",
        "Service",
        "ServiceAccount",
    ]


def test_the_function_runs_the_charts_own_release_on_the_charts_minor() -> None:
    """For the Kubernetes minor the pinned chart was made for, the function's table names the
    release the chart ships (its appVersion), read from the archive, not from the function."""
    _, _, release = RELEASES[0]
    shipped = expect.chart_app_version(chart_or_skip(release, with_helm=False))
    minor = ".".join(shipped.split(".")[:2])
    assert RELEASE_FOR_MINOR[minor] == f"v{shipped}"
    assert max(RELEASE_FOR_MINOR, key=lambda m: tuple(int(p) for p in m.split("."))) == minor
