"""examples/deletion-guard.yaml names exactly what a delete can cascade from (docs/install.md,
"The deletion guard"): the XRDs and XR CRDs of apis/ and the Configurations
examples/configurations.yaml installs, for deletes only, so that an upgrade goes through.
Its refusals on a real API server are in tests/e2e/test_configuration.py."""

from __future__ import annotations

from pathlib import Path

from harness.example_sets import documents

ROOT = Path(__file__).resolve().parents[1]
GUARD = ROOT / "examples" / "deletion-guard.yaml"
NAME = "inference-clusters-deletion-guard"


def rule(group: str, resource: str, names: list[str]) -> dict[str, object]:
    return {
        "apiGroups": [group],
        "apiVersions": ["*"],
        "operations": ["DELETE"],
        "resources": [resource],
        "resourceNames": names,
    }


def test_the_guard_names_every_xrd_crd_and_configuration_and_refuses_deletes_only() -> None:
    xrds = sorted(
        doc["metadata"]["name"]
        for path in sorted((ROOT / "apis").glob("*/definition.yaml"))
        for doc in documents(path)
    )
    configurations = [
        doc["metadata"]["name"]
        for doc in documents(ROOT / "examples" / "configurations.yaml")
        if doc["kind"] == "Configuration"
    ]
    policy, binding = documents(GUARD)
    assert xrds == [
        "civoclusters.infrastructure.modelplane.ai",
        "coreweaveclusters.infrastructure.modelplane.ai",
    ]
    assert configurations == ["inference-clusters-coreweave", "inference-clusters-civo"]
    assert policy["kind"] == "ValidatingAdmissionPolicy"
    assert policy["metadata"] == {"name": NAME}
    rules = policy["spec"]["matchConstraints"]["resourceRules"]
    # An XRD's XR CRD has the XRD's name.
    assert [{**r, "resourceNames": sorted(r["resourceNames"])} for r in rules] == [
        rule("apiextensions.k8s.io", "customresourcedefinitions", xrds),
        rule("apiextensions.crossplane.io", "compositeresourcedefinitions", xrds),
        rule("pkg.crossplane.io", "configurations", sorted(configurations)),
    ]
    assert policy["spec"]["failurePolicy"] == "Fail"
    [validation] = policy["spec"]["validations"]
    assert (validation["expression"], validation["reason"]) == ("false", "Forbidden")
    assert binding == {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": NAME},
        "spec": {"policyName": NAME, "validationActions": ["Deny"]},
    }
