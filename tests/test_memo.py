"""The memo: a converged reconcile is answered from the XR's previous answer only when nothing
the core read has changed, and then with exactly the bytes a fresh composition would give."""

from __future__ import annotations

import base64
import copy
import json
import random
from collections.abc import Callable
from typing import Any

import pytest
from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2 as structpb

from function import runner
from function.memo.memo import Memo
from function.shared.cache import LRU
from hack.example_stages import SHARED_VAST
from harness.fixtures import (
    CIVO_SECRET_NAME,
    CLUSTER_PROVIDER_CONFIG,
    ENDPOINT,
    SERVICER,
    World,
    civo_connection_secret,
    civo_xr,
    coreweave_xr,
    credentials_secret,
    readiness,
    request,
    xr_ready,
)
from tests.coreweave_expected import running
from tests.gowire import shuffled

Inputs = tuple[dict[str, Any], dict[str, dict[str, Any]], dict[str, list[dict[str, Any]]]]


def converged(world: World) -> Inputs:
    """Drive world until every composed resource is Ready; the request's parts, as Crossplane
    sends them on the final pass of the requirements loop."""
    for _ in range(8):
        rsp = world.reconcile()
        if rsp.results == [] and xr_ready(rsp) and len(readiness(rsp)) > 3:
            break
        for key, body in world.observed.items():
            manifest = body.get("spec", {}).get("forProvider", {}).get("manifest")
            if key == "shared-vast-observer":
                world.ready(key, atProvider={"manifest": SHARED_VAST})
            elif key == "cks-cluster":
                world.ready(key, atProvider={"apiServerEndpoint": ENDPOINT, "id": "9e1d"})
            elif key == "civo-cluster":
                world.ready(key, atProvider={"id": "5f0b", "kubernetesVersion": "1.34.1-k3s1"})
            elif key.startswith("nodepool-") and manifest is None:
                body["metadata"]["annotations"]["crossplane.io/external-name"] = key + "-id"
                spec = body["spec"]
                initial = spec.get("initProvider", {}).get("nodeCount")
                count = spec["forProvider"].get("nodeCount", initial)
                world.ready(key, atProvider={"id": key + "-id", "nodeCount": count})
            elif manifest is not None and manifest["kind"] == "NodePool":
                world.ready(key, atProvider=running(body))
            elif manifest is not None:
                world.ready(key, atProvider={"manifest": manifest})
            else:
                world.ready(key)
    else:
        raise AssertionError("the XR did not converge")
    world.observed.get("kubeconfig", {}).pop("status", None)  # Secrets have no status
    return copy.deepcopy(world.xr), copy.deepcopy(world.observed), last_required(world)


def last_required(world: World) -> dict[str, list[dict[str, Any]]]:
    """What world's last reconcile required, resolved: what the final call of its next carries."""
    return {name: world._resolve(selector) for name, selector in world.last_requirements.items()}


def converged_coreweave() -> Inputs:
    world = World(coreweave_xr())
    world.cluster_objects = [CLUSTER_PROVIDER_CONFIG, credentials_secret()]
    return converged(world)


def converged_civo() -> Inputs:
    world = World(civo_xr())
    world.cluster_objects = [civo_connection_secret()]
    return converged(world)


CONVERGED = {"CoreWeaveCluster": converged_coreweave, "CivoCluster": converged_civo}


class Counting:
    """A core that counts its runs (the memo is keyed by the core, so one per test)."""

    def __init__(self, core: runner.Core) -> None:
        self.core, self.runs = core, 0

    def __call__(self, *args: Any) -> Any:
        self.runs += 1
        return self.core(*args)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, Counting]:
    cores = {}
    for (api_version, kind), core in list(runner.CORES.items()):
        cores[kind] = Counting(core)
        monkeypatch.setitem(runner.CORES, (api_version, kind), cores[kind])
    return cores


def canonical(wire: bytes) -> bytes:
    """An answer as Crossplane parses it, in canonical bytes."""
    return fnv1.RunFunctionResponse.FromString(wire).SerializeToString(deterministic=True)


def answered(req: fnv1.RunFunctionRequest, memo: Memo = SERVICER.memo) -> bytes:
    """The answer as sent (from the tests' servicer's memo, unless given another), canonical."""
    return canonical(runner.answer(req, memo).wire)


def composed_afresh(req: fnv1.RunFunctionRequest) -> bytes:
    rsp = response.to(req)
    runner.write(runner.run(req), rsp)
    return rsp.SerializeToString(deterministic=True)


def answered_as_afresh(
    core: Counting, req: fnv1.RunFunctionRequest, core_runs: int, memo: Memo = SERVICER.memo
) -> bytes:
    """req's answer, asserted to be a fresh composition's, running the core core_runs times."""
    runs = core.runs
    answer = answered(req, memo)
    assert core.runs == runs + core_runs
    assert answer == composed_afresh(req)
    return answer


XR, OBSERVED, REQUIRED = 0, 1, 2
DROP = object()


def edit(part: int, path: str, value: Any = DROP) -> Callable[[Inputs], None]:
    """A change to one part of the inputs at a dotted path (a number is a list index); without
    a value, the key is dropped."""
    *parents, last = [int(step) if step.isdigit() else step for step in path.split(".")]

    def change(inputs: Inputs) -> None:
        target: Any = inputs[part]
        for step in parents:
            target = target[step]
        if value is DROP:
            del target[last]
        else:
            target[last] = value

    return change


NOT_READY = [{"type": "Ready", "status": "False", "reason": "Unavailable"}]
ROTATED = credentials_secret("CW-SECRET-rotated-0123456789")["data"]
STILL_READY = [
    {"type": "ClusterAccess", "status": "True", "reason": "Available"},
    {"type": "Ready", "status": "True", "reason": "Available"},
    {"type": "Responsive", "status": "False", "reason": "WatchCircuitOpen"},
    {"type": "Synced", "status": "True", "reason": "ReconcileSuccess"},
]
INSTANCE_TYPE = "nodepool-l40s.spec.forProvider.manifest.spec.instanceType"
API_SERVER_ENDPOINT = "cks-cluster.status.atProvider.apiServerEndpoint"

# (kind, change, whether the memo may answer): every change the core reads recomposes; metadata
# noise does not.
CASES = [
    ("CoreWeaveCluster", edit(XR, "metadata.resourceVersion", "42"), True),
    ("CoreWeaveCluster", edit(OBSERVED, "vpc.metadata.managedFields", [{"manager": "x"}]), True),
    ("CoreWeaveCluster", edit(OBSERVED, "nodepool-h100.metadata.uid", "u"), True),
    ("CoreWeaveCluster", edit(OBSERVED, "nodepool-h100.status.conditions", NOT_READY), False),
    ("CoreWeaveCluster", edit(OBSERVED, "kubeconfig"), False),
    ("CoreWeaveCluster", edit(OBSERVED, INSTANCE_TYPE, "gd-8xa100-i128"), False),
    ("CoreWeaveCluster", edit(OBSERVED, API_SERVER_ENDPOINT, "h"), False),
    ("CoreWeaveCluster", edit(REQUIRED, "coreweave-credentials.0.data", ROTATED), False),
    ("CoreWeaveCluster", edit(REQUIRED, "coreweave-credentials", []), False),
    ("CoreWeaveCluster", edit(REQUIRED, "coreweave-credentials"), False),
    ("CoreWeaveCluster", edit(XR, "spec.nodePools.1.nodeCount", 3), False),
    ("CoreWeaveCluster", edit(XR, "spec.zone", "US-WEST-01A"), False),
    ("CivoCluster", edit(XR, "metadata.generation", 9), True),
    ("CivoCluster", edit(XR, "status.conditions", []), False),
    ("CivoCluster", edit(XR, "status.conditions", STILL_READY), True),
    # A converged XR's answer does not depend on its own Ready, which Crossplane writes after
    # the reconcile that made it Ready: the next one is still answered by the memo.
    ("CivoCluster", edit(XR, "status.conditions", [STILL_READY[0], STILL_READY[3]]), True),
    ("CoreWeaveCluster", edit(XR, "status.conditions", []), True),
    ("CivoCluster", edit(OBSERVED, "nodepool-l40s.metadata.annotations", {}), False),
    ("CivoCluster", edit(OBSERVED, "civo-cluster.status.atProvider.kubernetesVersion", "1"), False),
]


@pytest.mark.parametrize(
    ("kind", "change", "memoised"), CASES, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(CASES)]
)
def test_memo_answers_only_what_a_fresh_composition_would(
    counted: dict[str, Counting], kind: str, change: Callable[[Inputs], None], memoised: bool
) -> None:
    inputs = CONVERGED[kind]()
    first = request(*inputs)
    assert answered(first) == composed_afresh(first)
    change(inputs)
    answered_as_afresh(counted[kind], request(*inputs), 0 if memoised else 1)


def test_memo_leaves_keys_an_earlier_step_composed_to_write(counted: dict[str, Counting]) -> None:
    """An earlier pipeline step's object under one of our keys is merged field by field, as
    write() does, never replaced by recorded bytes."""
    req = request(*converged_coreweave())
    answered(req)
    req.desired.resources["vpc"].resource.update({"metadata": {"labels": {"team": "ml"}}})
    req.desired.resources["vpc"].connection_details["note"] = b"kept"
    answered_as_afresh(counted["CoreWeaveCluster"], req, 1)


@pytest.mark.parametrize(
    ("kind", "seeded", "passes"),
    [
        ("CoreWeaveCluster", False, [2, 2, 2]),
        ("CivoCluster", False, [1, 1, 1]),
        # Crossplane v2.4: the first call carries last reconcile's required resources; it is
        # the old second pass, and the memo answers it.
        ("CoreWeaveCluster", True, [1, 1, 1]),
        ("CivoCluster", True, [1, 1, 1]),
    ],
    ids=["coreweave-v2.1-loop", "civo-v2.1-loop", "coreweave-v2.4-loop", "civo-v2.4-loop"],
)
def test_every_pass_of_a_converged_reconcile_is_memoised(
    counted: dict[str, Counting], kind: str, seeded: bool, passes: list[int]
) -> None:
    """Crossplane calls once per pass of its requirements loop; each pass has its own entry, so
    a converged reconcile runs no core at all, however many passes it takes."""
    xr, observed, _ = CONVERGED[kind]()
    world = World(xr, seeded=seeded)
    world.observed = observed
    world.cluster_objects = (
        [CLUSTER_PROVIDER_CONFIG, credentials_secret()]
        if kind == "CoreWeaveCluster"
        else [civo_connection_secret()]
    )
    first = world.reconcile()
    runs = counted[kind].runs
    answers = [world.reconcile() for _ in passes]
    assert world.calls[1:] == passes
    assert counted[kind].runs == runs
    assert all(a == first for a in answers)


def test_memo_of_another_xr_is_not_used(counted: dict[str, Counting]) -> None:
    xr, observed, required = converged_civo()
    answered(request(xr, observed, required))
    other = copy.deepcopy(xr)
    other["metadata"]["namespace"] = "other-team"
    answered_as_afresh(counted["CivoCluster"], request(other, observed, required), 1)


def test_converged_civo_reconcile_reads_no_secret() -> None:
    """The fixture above converges as Crossplane would: the key is in the XR's status."""
    xr, _, required = converged_civo()
    assert required == {}
    assert xr["status"]["secrets"] == [
        {"type": "Kubeconfig", "name": CIVO_SECRET_NAME, "key": "kubeconfig"}
    ]


@pytest.mark.parametrize(
    ("puts", "kept"),
    [
        pytest.param([(b"a", 40), (b"b", 40)], [b"a", b"b"], id="fits"),
        pytest.param([(b"a", 40), (b"b", 40), (b"c", 40)], [b"b", b"c"], id="oldest-goes"),
        pytest.param([(b"a", 40), (b"b", 70)], [b"b"], id="one-large-evicts-two"),
        pytest.param([(b"a", 40), (b"z", 101)], [b"a"], id="larger-than-budget-not-kept"),
        pytest.param([(b"a", 60), (b"a", 30), (b"b", 60)], [b"a", b"b"], id="replaced-recounted"),
    ],
)
def test_lru_is_bounded_by_bytes(puts: list[tuple[bytes, int]], kept: list[bytes]) -> None:
    cache: LRU[int] = LRU(100, cost=lambda _, value: value)
    for key, cost in puts:
        cache.put(key, cost)
    assert [k for k in (b"a", b"b", b"c", b"z") if cache.get(k) is not None] == kept
    assert cache.held_bytes == sum(cache.get(k) or 0 for k in kept)


@pytest.mark.parametrize("padding", [0, 10_000], ids=["small-cached", "large-not-cached"])
def test_secret_values_are_cached_only_when_small(padding: int) -> None:
    from function.coreweave import access
    from function.shared.observed import View

    token = "CW-SECRET-cache-bound-0123456789"
    document = json.dumps({"token": token, "padding": "x" * padding}).encode()
    encoded = base64.b64encode(document).decode()
    access._decode_token.cache_clear()
    secret = View.from_dict({"data": {"credentials": encoded}})
    assert access._token_from_secret(secret, "credentials") == token
    assert access._decode_token.cache_info().currsize == (1 if padding == 0 else 0)


# A tag as Crossplane writes one: the hex SHA-256 of the request's first pass.
TAG = "9f2b" * 16


@pytest.mark.parametrize("kind", ["CoreWeaveCluster", "CivoCluster"])
def test_a_repeat_in_another_wire_order_is_answered_as_a_fresh_composition(
    counted: dict[str, Counting], kind: str
) -> None:
    """An idle XR's poll sends its request again, the same content in another byte order
    (gRPC-go writes map entries in Go's random order): the memo answers it, with what a fresh
    composition gives."""
    req = request(*CONVERGED[kind]())
    req.meta.tag = TAG
    first = answered(req)
    for seed in range(3):
        blob = shuffled(
            req.SerializeToString(),
            fnv1.RunFunctionRequest.DESCRIPTOR,
            random.Random(seed),  # noqa: S311
        )
        assert blob != req.SerializeToString()
        again = fnv1.RunFunctionRequest.FromString(blob)
        assert again == req
        assert answered_as_afresh(counted[kind], again, 0) == first


def test_go_wire_order_moves_map_entries_and_keeps_the_message() -> None:
    """The re-encoding above: Struct fields are a map, re-encoded its entries come in another
    order, nested ones too, and the message is the same; other fields keep their place."""
    message = structpb.Struct()
    message.update({k: {"inner": {n: n for n in "abcdef"}} for k in "pqrstuvw"})
    request = fnv1.RunFunctionRequest()
    request.meta.tag = "t"
    request.observed.composite.resource.CopyFrom(message)
    blob = request.SerializeToString(deterministic=True)
    again = shuffled(blob, fnv1.RunFunctionRequest.DESCRIPTOR, random.Random(7))  # noqa: S311 - an order, no secret
    assert again != blob
    assert sorted(again) == sorted(blob)
    assert fnv1.RunFunctionRequest.FromString(again) == request
    assert again.startswith(blob[: len(b"\x0a\x03\x0a\x01t")])


def test_one_tag_on_two_passes_gets_each_its_own_answer(counted: dict[str, Counting]) -> None:
    """Crossplane tags a step's first request and sends every later pass of its requirements
    loop under that tag with other required resources (crossplane v2.4.0
    internal/xfn/required_resources.go keeps req.Meta): a tag does not name the content, and
    nothing may be answered by tag alone."""
    xr, observed, required = converged_coreweave()
    first_pass, final_pass = request(xr, observed, None), request(xr, observed, required)
    for req in (first_pass, final_pass):
        req.meta.tag = TAG
    composed = [answered(first_pass), answered(final_pass)]
    # Each pass has its own memo entry: answered again, neither runs the core.
    core = counted["CoreWeaveCluster"]
    assert composed == [answered_as_afresh(core, req, 0) for req in (first_pass, final_pass)]
    assert composed[0] != composed[1]


def test_a_memo_too_small_for_an_answer_composes_every_call_exactly(
    counted: dict[str, Counting],
) -> None:
    """--memo-mib bounds the memo: an answer that does not fit is not kept, and the XR is
    composed afresh on every call, with the same answer."""
    req = request(*converged_civo())
    small = Memo(1024)  # bytes: less than one converged CivoCluster's entry
    for _ in range(3):
        answered_as_afresh(counted["CivoCluster"], req, 1, small)
