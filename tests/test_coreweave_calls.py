"""Function calls per converged reconcile: what Crossplane's requirements loop needs (before
v2.4, and v2.4's, whose first call carries what the step required last time), and the token
still reaching the kubeconfig within one reconcile when it rotates or moves."""

from __future__ import annotations

import base64
import copy
from collections.abc import Callable
from typing import Any

import pytest

from function.coreweave import access
from function.shared.observed import View
from function.shared.outcome import Requirement
from function.shared.validation import Credentials
from harness.fixtures import (
    CLUSTER_PROVIDER_CONFIG,
    NAMESPACE,
    World,
    civo_connection_secret,
    civo_xr,
    coreweave_xr,
    credentials_secret,
    desired,
    results,
)
from tests.test_memo import converged

ANNOTATION = "inference.fn.modelplane.ai/credentials-secret"
PC_REQUIREMENT = Requirement(
    "coreweave-providerconfig",
    "coreweave.m.crossplane.io/v1beta1",
    "ClusterProviderConfig",
    "coreweave",
)


def secret_requirement(name: str, namespace: str = "crossplane-system") -> Requirement:
    return Requirement("coreweave-credentials", "v1", "Secret", name, namespace)


# The two requirements loops, by the engines that run them (harness/fixtures.py).
LOOPS = pytest.mark.parametrize("seeded", [False, True], ids=["v2.1-loop", "v2.4-loop"])


def coreweave_world(seeded: bool = False) -> World:
    world = World(coreweave_xr(), seeded=seeded)
    world.cluster_objects = [CLUSTER_PROVIDER_CONFIG, credentials_secret()]
    converged(world)
    return world


def kubeconfig_token(world: World) -> str:
    text = base64.b64decode(world.observed["kubeconfig"]["data"]["kubeconfig"]).decode()
    return text.rsplit("token: ", 1)[1].strip().strip('"')


def moved_to(name: str, token: str) -> list[dict[str, Any]]:
    """The ProviderConfig now names another Secret, which holds token."""
    config = copy.deepcopy(CLUSTER_PROVIDER_CONFIG)
    config["spec"]["credentials"]["secretRef"]["name"] = name
    secret = credentials_secret(token)
    secret["metadata"]["name"] = name
    return [config, secret]


@LOOPS
def test_converged_coreweave_reconcile_takes_two_calls_or_one_when_seeded(seeded: bool) -> None:
    world = coreweave_world(seeded)
    world.reconcile()
    assert world.calls[-1] == (1 if seeded else 2)
    assert world.observed["kubeconfig"]["metadata"]["annotations"][ANNOTATION] == (
        "crossplane-system/coreweave-creds"
    )


def test_first_kubeconfig_follows_the_chain_in_three_calls() -> None:
    """Nothing is remembered before the kubeconfig Secret first exists."""
    world = coreweave_world()
    first_with_secret = next(
        i for i, rsp in enumerate(world.responses) if "kubeconfig" in rsp.desired.resources
    )
    assert world.calls[first_with_secret] == 3


def rotate_in_place(world: World) -> None:
    world.cluster_objects = [CLUSTER_PROVIDER_CONFIG, credentials_secret(ROTATED)]


def move_to_another_secret(world: World) -> None:
    world.cluster_objects = moved_to("coreweave-creds-v2", MOVED)


ROTATED = "CW-SECRET-rotated-000000000001"
MOVED = "CW-SECRET-moved-00000000000002"
SOURCE = "crossplane-system/coreweave-creds"
MOVED_SOURCE = "crossplane-system/coreweave-creds-v2"


@pytest.mark.parametrize(
    ("change", "seeded", "calls", "token", "source"),
    [
        pytest.param(
            rotate_in_place, False, [2, 2], ROTATED, SOURCE, id="token-rotated-in-place-v2.1-loop"
        ),
        # The seeded first call already carries the rotated Secret.
        pytest.param(
            rotate_in_place, True, [1, 1], ROTATED, SOURCE, id="token-rotated-in-place-v2.4-loop"
        ),
        pytest.param(
            move_to_another_secret,
            False,
            [3, 2],
            MOVED,
            MOVED_SOURCE,
            id="providerconfig-names-another-secret-v2.1-loop",
        ),
        # The seeded call sees the ProviderConfig name the new Secret and asks for it; the
        # reconcile after is seeded with it.
        pytest.param(
            move_to_another_secret,
            True,
            [2, 1],
            MOVED,
            MOVED_SOURCE,
            id="providerconfig-names-another-secret-v2.4-loop",
        ),
    ],
)
def test_new_token_reaches_the_kubeconfig_on_the_next_reconcile(
    change: Callable[[World], None], seeded: bool, calls: list[int], token: str, source: str
) -> None:
    world = coreweave_world(seeded)
    change(world)
    world.reconcile()
    assert kubeconfig_token(world) == token
    world.reconcile()
    assert world.calls[-2:] == calls
    assert kubeconfig_token(world) == token
    assert world.observed["kubeconfig"]["metadata"]["annotations"][ANNOTATION] == source
    assert [results(rsp) for rsp in world.responses[-2:]] == [[], []]


@LOOPS
def test_converged_civo_reconcile_takes_one_call(seeded: bool) -> None:
    world = World(civo_xr(), seeded=seeded)
    world.cluster_objects = [civo_connection_secret()]
    converged(world)
    world.reconcile()
    assert world.calls[-1] == 1


CREDENTIALS = Credentials(name="coreweave", type="ClusterProviderConfig")
PC = View.from_dict(CLUSTER_PROVIDER_CONFIG)
SECRET = View.from_dict(credentials_secret())
OTHER_SECRET = View.from_dict({**credentials_secret(), "metadata": {"name": "old-creds"}})


@pytest.mark.parametrize(
    ("remembered", "required", "requirements", "problem"),
    [
        pytest.param(
            None, {}, [PC_REQUIREMENT], 'reading ClusterProviderConfig "coreweave"', id="chain"
        ),
        pytest.param(
            "crossplane-system/coreweave-creds",
            {},
            [PC_REQUIREMENT, secret_requirement("coreweave-creds")],
            'reading ClusterProviderConfig "coreweave"',
            id="guess-asked-with-the-providerconfig",
        ),
        pytest.param(
            "team/old-creds",
            {"coreweave-providerconfig": [PC], "coreweave-credentials": [OTHER_SECRET]},
            [PC_REQUIREMENT, secret_requirement("coreweave-creds")],
            'reading Secret "crossplane-system/coreweave-creds"',
            id="wrong-guess-not-used",
        ),
        pytest.param(
            "crossplane-system/coreweave-creds",
            {"coreweave-providerconfig": [PC], "coreweave-credentials": [SECRET]},
            [PC_REQUIREMENT, secret_requirement("coreweave-creds")],
            None,
            id="right-guess-same-requirements",
        ),
    ],
)
def test_read_token_asks_for_the_remembered_secret(
    remembered: str | None,
    required: dict[str, list[View]],
    requirements: list[Requirement],
    problem: str | None,
) -> None:
    lookup = access.read_token(CREDENTIALS, NAMESPACE, required, access.SecretRef.parse(remembered))
    assert lookup.requirements == requirements
    assert lookup.problem == problem
    assert (lookup.token is not None) == (problem is None)


@pytest.mark.parametrize(
    ("annotation", "ref"),
    [
        (
            "crossplane-system/coreweave-creds",
            access.SecretRef("crossplane-system", "coreweave-creds"),
        ),
        (None, None),
        ("", None),
        ("coreweave-creds", None),
        ("/coreweave-creds", None),
        ("crossplane-system/", None),
        ("a/b/c", None),
    ],
)
def test_secret_ref_annotation(annotation: str | None, ref: access.SecretRef | None) -> None:
    assert access.SecretRef.parse(annotation) == ref


def test_kubeconfig_secret_names_its_token_source_and_nothing_secret() -> None:
    world = coreweave_world()
    secret = desired(world.responses[-1])["kubeconfig"]
    assert secret["metadata"] == {
        "name": "inference-east-kubeconfig-08981",
        "annotations": {ANNOTATION: "crossplane-system/coreweave-creds"},
    }
