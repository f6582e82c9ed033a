"""The bench's concurrent phase times a converged fleet's calls (issue 31): each server first
gets one untimed call per XR, as the serial phase's warm-up gives it, so no timed call is the
first its memo sees of an XR."""

from __future__ import annotations

from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.resource import struct_to_dict

from function import runner
from function.memo.memo import MEMO_BYTES, Memo
from hack.bench import measure
from hack.bench.report import Loaded, fmt
from hack.bench.scenarios import build_scenarios, next_n

COREWEAVE = next(s for s in build_scenarios(2) if s.kind == "CoreWeaveCluster")


class FakeServer:
    def __init__(self, name: str, answer: bytes) -> None:
        self.name, self.answer = name, answer
        self.requests: list[bytes] = []

    def invoke(self, data: bytes) -> bytes:
        self.requests.append(data)
        return self.answer


def test_warm_calls_each_member_once_per_server() -> None:
    answer = runner.answer(
        fnv1.RunFunctionRequest.FromString(COREWEAVE.template.make(0, next_n())),
        Memo(MEMO_BYTES),
    ).wire
    servers: list[Any] = [FakeServer("function", answer), FakeServer("noop", b"")]
    stats = {s.name: measure.Stats() for s in servers}
    measure.warm(servers, COREWEAVE, 2, stats)
    for server in servers:
        assert [
            struct_to_dict(fnv1.RunFunctionRequest.FromString(r).observed.composite.resource)[
                "metadata"
            ]["name"]
            for r in server.requests
        ] == [COREWEAVE.base.member(m).name for m in range(2)]
    # The function's answers are checked (the fake's answer is member 0's: converged, not FATAL).
    assert (stats["function"].errors, stats["function"].bad) == (0, 0)


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
        "function": measure.Stats(cpu_s=function_cpu_s, calls=2),
        "noop": measure.Stats(cpu_s=noop_cpu_s, calls=2),
    }
    loaded = Loaded(COREWEAVE, fleet=2, callers=8, stats=stats)
    assert fmt(loaded.cpu_ratio()) == shown
