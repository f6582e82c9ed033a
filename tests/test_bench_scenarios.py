"""The bench (hack/bench/) measures converged reconciles. Its requests must compose exactly what
a converged XR composes, or `make bench` stops at its start (as it did when a Usage was retired
and nothing ran the bench). Its concurrent phase times a converged fleet's calls (issue 31):
each server first gets one untimed call per XR, as the serial phase's warm-up gives it, so no
timed call is the first its memo sees of an XR."""

from __future__ import annotations

from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.resource import struct_to_dict

from hack.bench import measure
from hack.bench.report import Cell, fmt
from hack.bench.scenarios import build_scenarios, next_n, runner_response

# Building them checks that every member of the fleet (here both) composes that many desired
# resources, every one Ready, with no result.
SCENARIOS = build_scenarios(2)
COREWEAVE = SCENARIOS[0]


def test_each_bench_request_composes_a_converged_xr() -> None:
    assert [(s.kind, s.expected) for s in SCENARIOS] == [
        # vpc, cks-cluster, 2 Usages, kubeconfig, kubernetes-providerconfig, system pool,
        # shared-vast observer, StorageClass clone, a pool each (8) and a settings Object per
        # autoscaled pool (4).
        ("CoreWeaveCluster", 21),
        # network, firewall, cluster, 2 Usages, helm ProviderConfig, the autoscaler, and a
        # NodePool per pool but the inline one (7).
        ("CivoCluster", 14),
    ]


class FakeServer:
    def __init__(self, name: str, answer: bytes) -> None:
        self.name, self.answer = name, answer
        self.requests: list[bytes] = []

    def invoke(self, data: bytes) -> bytes:
        self.requests.append(data)
        return self.answer

    def cpu(self) -> float:
        return 0.0


def test_the_warm_up_calls_each_member_once_per_server() -> None:
    answer = runner_response(fnv1.RunFunctionRequest.FromString(COREWEAVE.call(0, next_n())))
    servers: list[Any] = [
        FakeServer("function", answer.SerializeToString()),
        FakeServer("noop", b""),
    ]
    stats = measure.serial(servers, COREWEAVE, 2, calls=0, warmup=2)
    for server in servers:
        requests = [fnv1.RunFunctionRequest.FromString(r) for r in server.requests]
        names = [
            struct_to_dict(r.observed.composite.resource)["metadata"]["name"] for r in requests
        ]
        assert names == [COREWEAVE.base.member(m).name for m in range(2)]
    # The function's answers are checked (the fake's answer is member 0's: converged, not FATAL),
    # and nothing is timed.
    assert (stats["function"].errors, stats["function"].bad, stats["function"].calls) == (0, 0, 0)


@pytest.mark.parametrize(
    ("function_cpu_s", "noop_cpu_s", "shown"),
    [
        (0.004, 0.002, "2.00"),
        # A run shorter than the process clock's tick: the floor took no measurable CPU.
        (0.004, 0.0, "n/a"),
    ],
)
def test_cpu_ratio_to_the_floor(function_cpu_s: float, noop_cpu_s: float, shown: str) -> None:
    stats = {
        "function": measure.Stats(latencies_ms=[1.0, 1.0], cpu_s=function_cpu_s),
        "noop": measure.Stats(latencies_ms=[1.0, 1.0], cpu_s=noop_cpu_s),
    }
    assert fmt(Cell(COREWEAVE, fleet=2, stats=stats, callers=8).cpu_ratio()) == shown
