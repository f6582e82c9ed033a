"""Function calls per converged reconcile: what Crossplane's requirements loop needs (before
v2.4, and v2.4's, whose first call carries what the step required last time), and the token
still reaching the kubeconfig within one reconcile when it rotates or moves."""

from __future__ import annotations

import base64
import copy
from collections.abc import Callable

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
from tests import coreweave_expected
from tests.test_memo import converged

ANNOTATION = "inference.fn.modelplane.ai/credentials-secret"
PC_REQUIREMENT = Requirement(
    "coreweave-providerconfig",
    "coreweave.m.crossplane.io/v1beta1",
    "ClusterProviderConfig",
    "coreweave",
)
BOTH_REQUIREMENTS = [
    PC_REQUIREMENT,
    Requirement("coreweave-credentials", "v1", "Secret", "coreweave-creds", "crossplane-system"),
]
SOURCE = "crossplane-system/coreweave-creds"


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


@LOOPS
def test_converged_coreweave_reconcile_takes_two_calls_or_one_when_seeded(seeded: bool) -> None:
    world = coreweave_world(seeded)
    world.reconcile()
    assert world.calls[-1] == (1 if seeded else 2)
    assert world.observed["kubeconfig"]["metadata"]["annotations"][ANNOTATION] == SOURCE


def test_first_kubeconfig_follows_the_chain_in_three_calls() -> None:
    """Nothing is remembered before the kubeconfig Secret first exists."""
    world = coreweave_world()
    first_with_secret = next(
        i for i, rsp in enumerate(world.responses) if "kubeconfig" in rsp.desired.resources
    )
    assert world.calls[first_with_secret] == 3


def rotate_in_place(world: World) -> tuple[str, str]:
    """A new token in the same Secret; the token and source the kubeconfig must then have."""
    rotated = "CW-SECRET-rotated-000000000001"
    world.cluster_objects = [CLUSTER_PROVIDER_CONFIG, credentials_secret(rotated)]
    return rotated, SOURCE


def move_to_another_secret(world: World) -> tuple[str, str]:
    """The ProviderConfig now names another Secret, which holds a new token; the token and
    source the kubeconfig must then have."""
    moved = "CW-SECRET-moved-00000000000002"
    name = "coreweave-creds-v2"
    config = copy.deepcopy(CLUSTER_PROVIDER_CONFIG)
    config["spec"]["credentials"]["secretRef"]["name"] = name
    secret = credentials_secret(moved)
    secret["metadata"]["name"] = name
    world.cluster_objects = [config, secret]
    return moved, "crossplane-system/coreweave-creds-v2"


# The calls of the two reconciles after the change, by whether the loop is seeded.
NEW_TOKEN_CASES = {
    # The seeded first call already carries the rotated Secret.
    "token-rotated-in-place": (rotate_in_place, {False: [2, 2], True: [1, 1]}),
    # The seeded call sees the ProviderConfig name the new Secret and asks for it; the
    # reconcile after is seeded with it.
    "providerconfig-names-another-secret": (move_to_another_secret, {False: [3, 2], True: [2, 1]}),
}


@LOOPS
@pytest.mark.parametrize(("change", "calls"), NEW_TOKEN_CASES.values(), ids=NEW_TOKEN_CASES.keys())
def test_new_token_reaches_the_kubeconfig_on_the_next_reconcile(
    change: Callable[[World], tuple[str, str]], calls: dict[bool, list[int]], seeded: bool
) -> None:
    world = coreweave_world(seeded)
    token, source = change(world)
    world.reconcile()
    assert kubeconfig_token(world) == token
    world.reconcile()
    assert world.calls[-2:] == calls[seeded]
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


READING_PC = 'reading ClusterProviderConfig "coreweave"'
READ_TOKEN_CASES = {
    "chain": (None, {}, [PC_REQUIREMENT], READING_PC),
    "guess-asked-with-the-providerconfig": (SOURCE, {}, BOTH_REQUIREMENTS, READING_PC),
    "wrong-guess-not-used": (
        "team/old-creds",
        {"coreweave-providerconfig": [PC], "coreweave-credentials": [OTHER_SECRET]},
        BOTH_REQUIREMENTS,
        'reading Secret "crossplane-system/coreweave-creds"',
    ),
    "right-guess-same-requirements": (
        SOURCE,
        {"coreweave-providerconfig": [PC], "coreweave-credentials": [SECRET]},
        BOTH_REQUIREMENTS,
        None,
    ),
}


@pytest.mark.parametrize(
    ("remembered", "required", "requirements", "problem"),
    READ_TOKEN_CASES.values(),
    ids=READ_TOKEN_CASES.keys(),
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
        (SOURCE, access.SecretRef("crossplane-system", "coreweave-creds")),
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
    assert secret["metadata"] == coreweave_expected.KUBECONFIG_SECRET["metadata"]
