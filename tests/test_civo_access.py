"""Which key of the Civo connection Secret holds the kubeconfig: read, never guessed."""

from __future__ import annotations

import base64
import copy
from typing import Any

import pytest

from harness.fixtures import (
    CIVO_KUBECONFIG,
    CIVO_SECRET_NAME,
    civo_connection_secret,
    civo_required,
    civo_xr,
    conditions,
    desired,
    request,
    results,
    run,
    xr_status,
)
from tests import civo_expected as expected

REQUIREMENT = "civo-connection-secret"
DESCRIBED = f'Secret "ml-team/{CIVO_SECRET_NAME}"'


def helm_key(rsp: Any) -> str | None:
    config = desired(rsp).get("helm-providerconfig")
    return None if config is None else config["spec"]["credentials"]["secretRef"]["key"]


def published(key: str) -> dict[str, Any]:
    """The XR status naming the connection Secret's key that holds the kubeconfig."""
    return {"secrets": [{"type": "Kubeconfig", "name": CIVO_SECRET_NAME, "key": key}]}


def secret_with(data: dict[str, str]) -> dict[str, Any]:
    secret = civo_connection_secret()
    secret["data"] = {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}
    return secret


KEY_CASES = {
    "kubeconfig": ([civo_connection_secret("kubeconfig")], "kubeconfig", None),
    "namespaced-provider-attribute-key-only": (
        [civo_connection_secret("attribute.kubeconfig")],
        "attribute.kubeconfig",
        None,
    ),
    "both-keys-prefer-kubeconfig": (
        [civo_connection_secret("kubeconfig", "attribute.kubeconfig")],
        "kubeconfig",
        None,
    ),
    "empty-kubeconfig-key-is-not-a-kubeconfig": (
        [secret_with({"kubeconfig": "", "attribute.kubeconfig": CIVO_KUBECONFIG})],
        "attribute.kubeconfig",
        None,
    ),
    "no-key-holds-a-kubeconfig": (
        [secret_with({"attribute.id": "5f0b-cluster", "kubeconfig": "not a kubeconfig"})],
        None,
        (
            "WaitingForKubeconfig",
            f"waiting for the connection {DESCRIBED} to hold a kubeconfig under key "
            '"kubeconfig" or "attribute.kubeconfig"',
        ),
    ),
    "secret-not-written-yet": (
        [],
        None,
        ("WaitingForConnectionSecret", f"waiting for the cluster's connection {DESCRIBED}"),
    ),
}


@pytest.mark.parametrize(("secrets", "key", "waiting"), KEY_CASES.values(), ids=KEY_CASES.keys())
def test_the_key_that_holds_a_kubeconfig_is_published(
    secrets: list[dict[str, Any]], key: str | None, waiting: tuple[str, str] | None
) -> None:
    rsp = run(request(civo_xr(), expected.autoscaled_pool_up(), {REQUIREMENT: secrets}))
    requirement = rsp.requirements.resources[REQUIREMENT]
    assert (requirement.api_version, requirement.kind, requirement.match_name) == (
        "v1",
        "Secret",
        CIVO_SECRET_NAME,
    )
    assert requirement.namespace == "ml-team"
    if key is None:
        assert waiting is not None
        assert xr_status(rsp) == {}
        assert conditions(rsp)["ClusterAccess"] == ("False", *waiting)
        assert ("Normal", waiting[1]) in results(rsp)
        assert conditions(rsp)["Autoscaler"] == (
            "False",
            "WaitingForKubeconfig",
            "the cluster-autoscaler is installed once the cluster's kubeconfig is readable",
        )
        assert helm_key(rsp) is None
        assert "cluster-autoscaler" not in desired(rsp)
    else:
        assert xr_status(rsp) == published(key)
        assert conditions(rsp)["ClusterAccess"] == (
            "True",
            "Available",
            f'kubeconfig in Secret "{CIVO_SECRET_NAME}", key "{key}"',
        )
        assert helm_key(rsp) == key


def test_nothing_is_read_before_the_cluster_exists() -> None:
    rsp = run(request(civo_xr()))
    assert not rsp.requirements.resources
    assert conditions(rsp)["ClusterAccess"] == (
        "False",
        "WaitingForCluster",
        'waiting for Civo cluster "inference-lon-34d99" to be created; it writes its kubeconfig '
        f'to Secret "{CIVO_SECRET_NAME}"',
    )
    assert xr_status(rsp) == {}


@pytest.mark.parametrize("key", ["kubeconfig", "attribute.kubeconfig"])
def test_a_key_found_once_is_kept_without_reading_again(key: str) -> None:
    available = {"type": "ClusterAccess", "status": "True", "reason": "Available"}
    xr = {**civo_xr(), "status": {**published(key), "conditions": [available]}}
    state = expected.autoscaled_pool_up()
    state["civo-cluster"]["status"] = {}  # even while the cluster's status flaps
    rsp = run(request(xr, state))
    assert not rsp.requirements.resources, "one call per reconcile once the key is known"
    assert xr_status(rsp) == published(key)
    assert helm_key(rsp) == key


def test_status_from_an_older_version_is_verified_by_reading_the_secret() -> None:
    """Before this check the function published key "kubeconfig" without reading the Secret."""
    xr = {**civo_xr(), "status": published("kubeconfig")}
    rsp = run(request(xr, expected.autoscaled_pool_up(), civo_required("attribute.kubeconfig")))
    assert REQUIREMENT in rsp.requirements.resources
    assert xr_status(rsp)["secrets"][0]["key"] == "attribute.kubeconfig"


def test_a_key_in_use_stays_while_the_secret_cannot_confirm_one() -> None:
    state = expected.autoscaled_pool_up()
    state["helm-providerconfig"] = copy.deepcopy(expected.HELM_PROVIDER_CONFIG)
    rsp = run(request(civo_xr(), state, {REQUIREMENT: []}))
    assert helm_key(rsp) == "kubeconfig"
    assert desired(rsp)["cluster-autoscaler"] == expected.autoscaler([expected.L40S_GROUP])
    assert conditions(rsp)["ClusterAccess"][:2] == ("False", "WaitingForConnectionSecret")
