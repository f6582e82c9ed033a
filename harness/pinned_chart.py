"""Where the cluster-autoscaler chart the committed Civo Composition pins is found: the real
chart archives in ../shared/charts, read by the chart check in `make test` and served by the
e2e suite's chart mirrors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
CHARTS = REPO.parent / "shared" / "charts"
COMPOSITION = REPO / "apis" / "civoclusters" / "composition.yaml"
CHART_NAME = "cluster-autoscaler"


def chart_archive(version: str) -> Path:
    return CHARTS / f"{CHART_NAME}-{version}.tgz"


def step_input() -> dict[str, Any]:
    """The input of the Civo Composition's one function step."""
    composition = yaml.safe_load(COMPOSITION.read_text())
    steps = composition["spec"]["pipeline"]
    assert len(steps) == 1, "one function step composes a CivoCluster"
    return dict(steps[0]["input"])


def pinned_chart_version() -> str:
    """The chart version the committed Civo Composition pins."""
    return str(step_input()["civo"]["clusterAutoscaler"]["chartVersion"])
