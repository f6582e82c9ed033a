"""examples/function-runtime.yaml: the runtime Crossplane builds for the function, as documented,
and the Function of a hand install (examples/function.yaml) that names it; and
deploy/monitoring.yaml, which scrapes and alerts on what that runtime serves, whether the function
was installed by hand or by the Configuration packages."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from function import addresses, health, metrics
from hack.configurations import HAND_INSTALLED_FUNCTION, packaged_function_name
from harness.e2e.operability import CROSSPLANE_CORE_SERIES
from harness.example_sets import ROOT
from harness.promql import exported_labels, series_names

# The ports the function serves by default: the runtime config relies on them, sets no flag.
METRICS_PORT = addresses.split(metrics.DEFAULT_ADDRESS)[1]
HEALTH_PORT = addresses.split(health.DEFAULT_ADDRESS)[1]
# The Pod label Crossplane sets to the Function's name, and the names the function is installed
# under: by hand, and by the Configuration packages.
FUNCTION_LABEL = "pkg.crossplane.io/function"
FUNCTION_NAMES = [HAND_INSTALLED_FUNCTION, packaged_function_name()]


def documents(path: str = "examples/function-runtime.yaml") -> dict[str, dict[str, Any]]:
    text = (ROOT / path).read_text()
    return {doc["kind"]: doc for doc in yaml.safe_load_all(text) if doc}


def test_function_uses_the_runtime_config() -> None:
    config = documents()["DeploymentRuntimeConfig"]
    function = documents("examples/function.yaml")["Function"]
    assert function["metadata"]["name"] == HAND_INSTALLED_FUNCTION
    assert function["spec"]["runtimeConfigRef"] == {
        "apiVersion": config["apiVersion"],
        "kind": "DeploymentRuntimeConfig",
        "name": config["metadata"]["name"],
    }


def test_runtime_container_sized_and_replicated() -> None:
    spec = documents()["DeploymentRuntimeConfig"]["spec"]["deploymentTemplate"]["spec"]
    assert spec["replicas"] == 2
    # Crossplane merges the template's container into its runtime container by this name.
    assert spec["template"]["spec"]["containers"] == [
        {
            "name": "package-runtime",
            "ports": [
                {"name": "metrics", "containerPort": METRICS_PORT},
                {"name": "health", "containerPort": HEALTH_PORT},
            ],
            "readinessProbe": {
                "grpc": {"port": HEALTH_PORT},
                "periodSeconds": 5,
                "failureThreshold": 2,
            },
            "livenessProbe": {
                "grpc": {"port": HEALTH_PORT},
                "initialDelaySeconds": 5,
                "periodSeconds": 10,
                "timeoutSeconds": 5,
                "failureThreshold": 3,
            },
            "resources": {
                "requests": {"cpu": "1", "memory": "128Mi"},
                "limits": {"memory": "256Mi"},
            },
        }
    ]
    # Each Pod spread among its own Function's, whatever that Function is named.
    assert spec["template"]["spec"]["topologySpreadConstraints"] == [
        {
            "maxSkew": 1,
            "topologyKey": "kubernetes.io/hostname",
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchExpressions": [{"key": FUNCTION_LABEL, "operator": "Exists"}]},
            "matchLabelKeys": [FUNCTION_LABEL],
        }
    ]


def test_the_pod_monitor_scrapes_the_metrics_port_of_the_functions_pods() -> None:
    monitor = documents("deploy/monitoring.yaml")["PodMonitor"]["spec"]
    spec = documents()["DeploymentRuntimeConfig"]["spec"]["deploymentTemplate"]["spec"]
    container = spec["template"]["spec"]["containers"][0]
    assert monitor["selector"] == {
        "matchExpressions": [{"key": FUNCTION_LABEL, "operator": "In", "values": FUNCTION_NAMES}]
    }
    assert "jobLabel" not in monitor
    [endpoint] = monitor["podMetricsEndpoints"]
    # One job for the function's series, however it was installed: the rules select on it.
    assert endpoint == {
        "port": "metrics",
        "path": "/metrics",
        "interval": "30s",
        "relabelings": [
            {"action": "replace", "targetLabel": "job", "replacement": HAND_INSTALLED_FUNCTION}
        ],
    }
    assert {"name": "metrics", "containerPort": METRICS_PORT} in container["ports"]


@pytest.mark.parametrize(
    ("expr", "names"),
    [
        ('sum by (kind) (rate(a_total{job="x", result="fatal"}[10m])) / b > 0.1', {"a_total", "b"}),
        ("histogram_quantile(0.99, sum by (kind, le) (rate(c_bucket[5m])))", {"c_bucket"}),
        ('count(d{job="x"}) < 2 or absent(e{a="b"})', {"d", "e"}),
        ("f offset 5m and on (pod) g", {"f", "g"}),
    ],
)
def test_series_names_of_an_expression(expr: str, names: set[str]) -> None:
    assert series_names(expr) == names


def test_every_alert_reads_only_series_the_function_or_crossplane_exports(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rules = documents("deploy/monitoring.yaml")["PrometheusRule"]["spec"]["groups"][0]["rules"]
    assert [r["alert"] for r in rules] == [
        "InferenceClustersFatalAnswers",
        "InferenceClustersSlowCalls",
        "InferenceClustersInternalErrors",
        "InferenceClustersReplicaDown",
        "InferenceClustersCallsFailing",
    ]
    exported = set(exported_labels(monkeypatch)) | CROSSPLANE_CORE_SERIES
    used = {name for rule in rules for name in series_names(rule["expr"])}
    assert used - exported == set()
    # Each alert reads at least one of the function's own series or Crossplane's about it.
    for rule in rules:
        assert series_names(rule["expr"]), rule["alert"]
        assert f'job="{HAND_INSTALLED_FUNCTION}"' in rule["expr"] or (
            f'function_name=~"{"|".join(FUNCTION_NAMES)}"' in rule["expr"]
        ), rule["alert"]
