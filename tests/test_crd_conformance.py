"""Every object the function composes, at every lifecycle stage, validates against the real
provider and Crossplane CRDs in ../shared/crds (schema and CEL), and the XR status it writes
validates against the project's own XRD, checked by kube-apiserver's own validation code
(harness/validator.py)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from harness.example_sets import example_set
from harness.invariants import object_problems
from harness.validator import Validator
from tests import coreweave_expected as expected
from tests.test_newer_providers import (
    HELM_V1_3_0,
    KUBERNETES_V1_2_1,
    civo_life,
    coreweave_life,
)

# (stage, desired resources, XR with desired status) for each reconcile of the proven providers'
# lives; Civo's under the namespaced provider's connection Secret key.
STAGES = [
    (f"{kind}-{stage}", answer["desired"], xr)
    for kind, life in (
        ("coreweave", coreweave_life(KUBERNETES_V1_2_1)),
        ("civo", civo_life(HELM_V1_3_0, key="attribute.kubeconfig")),
    )
    for (stage, answer), xr in zip(life.answers, life.xrs, strict=True)
]


@pytest.mark.parametrize(("stage", "resources", "xr"), STAGES, ids=[s[0] for s in STAGES])
def test_composed_objects_validate(
    validator: Validator, stage: str, resources: dict[str, Any], xr: dict[str, Any]
) -> None:
    assert object_problems(resources) == {}
    assert validator.validate(xr, with_status=True) == []


def test_every_kind_composed_is_checked() -> None:
    kinds = {(b["apiVersion"], b["kind"]) for _, resources, _ in STAGES for b in resources.values()}
    assert kinds == {
        ("networking.coreweave.m.crossplane.io/v1alpha1", "VPC"),
        ("cks.coreweave.m.crossplane.io/v1alpha1", "Cluster"),
        ("protection.crossplane.io/v1beta1", "Usage"),
        ("v1", "Secret"),
        ("kubernetes.m.crossplane.io/v1alpha1", "ProviderConfig"),
        ("kubernetes.m.crossplane.io/v1alpha1", "Object"),
        ("vpc.civo.m.upbound.io/v1beta1", "Network"),
        ("vpc.civo.m.upbound.io/v1beta1", "Firewall"),
        ("kubernetes.civo.m.upbound.io/v1beta1", "Cluster"),
        ("kubernetes.civo.m.upbound.io/v1beta1", "NodePool"),
        ("helm.m.crossplane.io/v1beta1", "ProviderConfig"),
        ("helm.m.crossplane.io/v1beta1", "Release"),
    }


def test_validator_would_catch_a_broken_cluster(validator: Validator) -> None:
    """The check above is only as good as the validator: a cluster without zone must fail."""
    cluster = copy.deepcopy(expected.CLUSTER)
    del cluster["spec"]["forProvider"]["zone"]
    cluster["metadata"]["namespace"] = "ml-team"
    assert validator.validate(cluster) == [
        "spec: Invalid value: spec.forProvider.zone is a required parameter"
    ]


@pytest.mark.parametrize("cloud", ["coreweave", "civo"])
def test_example_xr_validates_against_the_xrd(validator: Validator, cloud: str) -> None:
    xr = yaml.safe_load(example_set(cloud).xr.read_text())
    assert validator.validate(xr) == []
