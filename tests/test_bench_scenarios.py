"""The benchmark measures converged reconciles: its requests (hack/bench/scenarios.py) must
compose exactly what a converged XR composes, or `make bench` stops at its start (as it did
when a Usage was retired and nothing ran the bench)."""

from __future__ import annotations

import itertools
import random

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2 as structpb

from hack.bench.gowire import shuffled
from hack.bench.scenarios import REPEATED, build_scenarios, next_n, runner_response
from harness.fixtures import desired, results

SCENARIOS = build_scenarios(2)


@pytest.mark.parametrize(
    ("label", "composed"),
    [
        # vpc, cks-cluster, 2 Usages, kubeconfig, kubernetes-providerconfig, system pool,
        # shared-vast observer, StorageClass clone, a pool each (5) and a settings Object per
        # autoscaled pool (3).
        ("CoreWeaveCluster (with metadata noise)", 21),
        ("CoreWeaveCluster (bare)", 21),
        # network, firewall, cluster, 2 Usages, helm ProviderConfig, the autoscaler, and a
        # NodePool per pool but the inline one (7).
        ("CivoCluster (with metadata noise)", 14),
        ("CivoCluster (bare)", 14),
        ("CoreWeaveCluster (repeated)", 21),
        ("CivoCluster (repeated)", 14),
    ],
)
def test_each_bench_request_composes_a_converged_xr(label: str, composed: int) -> None:
    (scenario,) = [s for s in SCENARIOS if s.label == label]
    assert scenario.expected == composed
    for member in range(scenario.members):
        request = scenario.call(member, next_n())
        rsp = runner_response(fnv1.RunFunctionRequest.FromString(request))
        assert len(desired(rsp)) == composed
        assert [severity for severity, _ in results(rsp)] == []


@pytest.mark.parametrize("kind", ["CoreWeaveCluster", "CivoCluster"])
def test_a_repeated_request_is_the_noisy_one_again_in_another_wire_order(kind: str) -> None:
    """An idle XR's polls, as Crossplane sends them: the same content (resourceVersions and tag
    included), never the same bytes twice in a row."""
    (repeated,) = [s for s in SCENARIOS if s.kind == kind and s.shape == REPEATED]
    for member in range(repeated.members):
        sent = [repeated.call(member, next_n()) for _ in range(len(repeated.orders) + 1)]
        assert all(a != b for a, b in itertools.pairwise(sent))
        decoded = [fnv1.RunFunctionRequest.FromString(b) for b in sent]
        assert all(d == decoded[0] for d in decoded)
        xr = decoded[0].observed.composite.resource
        assert xr["metadata"]["managedFields"], "the noisy content, metadata noise included"


def test_go_wire_order_moves_map_entries_and_keeps_the_message() -> None:
    """Struct fields are a map: re-encoded, its entries come in another order, nested ones too,
    and the message is the same; other fields keep their place."""
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
