"""harness/validator.py, kube-apiserver's own validation code, answers the corpus of
tests/validation_corpus.py as the API server does (tests/e2e/test_server_validation.py holds the
real one to the same answers): realistic objects of every composed kind pass, and each mistake
is refused with the API server's exact errors."""

from __future__ import annotations

import pytest

from harness.validator import Validator, xrds
from tests.validation_corpus import CASES, DELETE, NOT_CHECKED, VALID, Case, changed


@pytest.mark.parametrize("name", sorted(VALID))
def test_realistic_objects_pass(validator: Validator, name: str) -> None:
    assert validator.validate(VALID[name]) == []


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_each_mistake_gets_the_api_servers_errors(validator: Validator, case: Case) -> None:
    assert validator.validate(case.obj, with_status=case.with_status) == case.errors


def test_unknown_fields_are_pruned_quietly_without_strict_validation(validator: Validator) -> None:
    obj = changed("civo-nodepool", ("spec.forProvider.nodeCout", 2))
    verdict = validator.verdict(obj, "Ignore")
    assert verdict.known
    assert (verdict.errors, verdict.message) == ((), "")
    assert "nodeCout" not in verdict.stored["spec"]["forProvider"]


def test_a_create_drops_the_status_its_subresource_owns(validator: Validator) -> None:
    obj = changed("usage", ("status", {"conditions": []}))
    verdict = validator.verdict(obj)
    assert verdict.known and "status" not in verdict.stored


def test_kinds_without_a_crd(validator: Validator) -> None:
    assert not validator.has_schema("v1", "Secret")
    assert not validator.has_schema("protection.crossplane.io/v1", "Usage")
    assert validator.has_schema("protection.crossplane.io/v1beta1", "Usage")


def test_the_message_is_the_api_servers_status_message(validator: Validator) -> None:
    cluster = changed("civo-cluster", ("spec.forProvider", None))
    assert validator.verdict(cluster).message == (
        'Cluster.kubernetes.civo.m.upbound.io "inference-lon" is invalid: '
        "[spec.forProvider: Required value, <nil>: Invalid value: null: some validation rules "
        "were not checked because the object was invalid; correct the existing errors to "
        "complete validation]"
    )


def test_xr_pool_rules_of_the_xrd() -> None:
    """The XRD's enum and CEL rules, on the CRD Crossplane derives from it."""
    xr = changed("civo-xr")
    xr["spec"]["nodePools"][1]["role"] = "Gpu"
    assert xrds().validate(xr) == [
        'spec.nodePools[1].role: Unsupported value: "Gpu": supported values: "System", "GPU"',
        NOT_CHECKED,
    ]
    xr = changed("coreweave-xr")
    xr["spec"]["nodePools"][0].update(minNodeCount=9, maxNodeCount=3)
    assert xrds().validate(xr) == [
        "spec.nodePools[0].minNodeCount: Invalid value: "
        "minNodeCount must be less than or equal to maxNodeCount"
    ]


def test_xrd_defaults_are_applied() -> None:
    xr = changed("coreweave-xr", ("spec.credentials", DELETE))
    assert xrds().verdict(xr).stored["spec"]["credentials"] == {
        "name": "default",
        "type": "ClusterProviderConfig",
    }
