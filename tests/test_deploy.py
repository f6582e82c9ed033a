"""deploy/runtime-config.yaml: the runtime Crossplane builds for the function, as documented."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]


def documents() -> dict[str, dict[str, Any]]:
    text = (ROOT / "deploy" / "runtime-config.yaml").read_text()
    return {doc["kind"]: doc for doc in yaml.safe_load_all(text)}


def test_function_uses_the_runtime_config() -> None:
    docs = documents()
    config = docs["DeploymentRuntimeConfig"]
    assert docs["Function"]["spec"]["runtimeConfigRef"] == {
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
            "resources": {
                "requests": {"cpu": "1", "memory": "128Mi"},
                "limits": {"memory": "256Mi"},
            },
        }
    ]
    spread = spec["template"]["spec"]["topologySpreadConstraints"][0]
    assert spread["labelSelector"] == {
        "matchLabels": {"pkg.crossplane.io/function": "function-inference-clusters"}
    }
