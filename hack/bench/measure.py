"""Measurements: latency, throughput, server CPU per call, and whole reconciles through
Crossplane's requirements loop.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from hack.bench.scenarios import Scenario, check_response, next_n
from hack.bench.servers import Server


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


@dataclasses.dataclass
class Stats:
    latencies_ms: list[float] = dataclasses.field(default_factory=list)
    errors: int = 0
    bad: int = 0  # FATAL or wrong responses (the function's only)
    cpu_s: float = 0.0
    wall_s: float = 0.0
    calls: int = 0
    # (hits, misses) of the function's memo over the timed concurrent calls.
    memo: tuple[int, int] | None = None

    @property
    def per_s(self) -> float:
        return self.calls / self.wall_s if self.wall_s else float("nan")

    @property
    def cpu_us(self) -> float:
        return self.cpu_s / self.calls * 1e6 if self.calls else float("nan")


def function_response_ok(scenario: Scenario, blob: bytes) -> bool:
    rsp = fnv1.RunFunctionResponse.FromString(blob)
    return len(rsp.desired.resources) == scenario.expected and not any(
        r.severity == fnv1.SEVERITY_FATAL for r in rsp.results
    )


def serial(
    servers: list[Server], scenario: Scenario, fleet: int, calls: int, warmup: int
) -> dict[str, Stats]:
    """Round-robin: every iteration calls each server once, in a rotating order, for the next
    member of a fleet of `fleet` XRs."""
    stats = {s.name: Stats() for s in servers}
    cpu0: dict[str, float] = {}
    for i in range(warmup + calls):
        if i == warmup:
            cpu0 = {s.name: s.cpu() for s in servers}
        shift = i % len(servers)
        for server in servers[shift:] + servers[:shift]:
            data = scenario.call(i % fleet, next_n())
            start = time.perf_counter_ns()
            try:
                blob = server.invoke(data)
            except grpc.RpcError:
                stats[server.name].errors += 1
                continue
            elapsed = time.perf_counter_ns() - start
            record = stats[server.name]
            if i >= warmup:
                record.latencies_ms.append(elapsed / 1e6)
            if server.name == "function" and not function_response_ok(scenario, blob):
                record.bad += 1
    for server in servers:
        record = stats[server.name]
        record.calls = len(record.latencies_ms)
        record.cpu_s = server.cpu() - cpu0[server.name]
    return stats


def warm(servers: list[Server], scenario: Scenario, fleet: int, stats: dict[str, Stats]) -> None:
    """One untimed call per member of a fleet of `fleet` XRs to each server, as the serial phase
    warms: a converged XR was answered before. Without it a server's first call for a member is
    measured too, and composes afresh whenever the memo no longer holds that member's answer
    (issue 31: every call of a 3 s window over 1 024 XRs did)."""
    for server in servers:
        record = stats[server.name]
        for member in range(fleet):
            try:
                blob = server.invoke(scenario.call(member, next_n()))
            except grpc.RpcError:
                record.errors += 1
                continue
            if server.name == "function" and not function_response_ok(scenario, blob):
                record.bad += 1


def concurrent(
    servers: list[Server],
    scenario: Scenario,
    fleet: int,
    workers: int,
    seconds: float,
    rounds: int,
    memo: Callable[[], tuple[float, float]],
    stats: dict[str, Stats],
) -> None:
    """`workers` callers on one channel per server for seconds/rounds, servers alternating per
    round, calling for the members of a fleet of `fleet` XRs in turn (warm() them first), added
    to each server's stats. memo reads the function's memo (hits, misses) counters, once the
    warm-up is done and once after the last round: the calls it answered while loaded."""
    hits0, misses0 = memo()
    window = seconds / rounds
    for r in range(rounds):
        shift = r % len(servers)
        for server in servers[shift:] + servers[:shift]:
            record = stats[server.name]
            deadline = time.perf_counter() + window

            def caller(
                server: Server = server, deadline: float = deadline
            ) -> tuple[list[float], int, list[bytes]]:
                """One caller's latencies, failed calls, and the function's answers to check."""
                latencies: list[float] = []
                blobs: list[bytes] = []
                errors = 0
                for _ in range(1_000_000):  # bounded; the deadline ends it long before
                    if time.perf_counter() >= deadline:
                        break
                    n = next_n()
                    data = scenario.call(n % fleet, n)
                    start = time.perf_counter_ns()
                    try:
                        blob = server.invoke(data)
                    except grpc.RpcError:
                        errors += 1
                        continue
                    latencies.append((time.perf_counter_ns() - start) / 1e6)
                    if server.name == "function":
                        blobs.append(blob)
                return latencies, errors, blobs

            cpu_before = server.cpu()
            start = time.perf_counter()
            with ThreadPoolExecutor(max_workers=workers) as pool:
                results = [f.result() for f in [pool.submit(caller) for _ in range(workers)]]
            record.wall_s += time.perf_counter() - start
            record.cpu_s += server.cpu() - cpu_before
            for latencies, errors, blobs in results:
                record.latencies_ms.extend(latencies)
                record.errors += errors
                record.bad += sum(1 for b in blobs if not function_response_ok(scenario, b))
    for record in stats.values():
        record.calls = len(record.latencies_ms)
    hits, misses = memo()
    stats["function"].memo = (round(hits - hits0), round(misses - misses0))


# Crossplane's FetchingFunctionRunner (internal/xfn/required_resources.go, v2.1.0 to v2.4.0)
# calls a function at most this many times in one reconcile.
MAX_CALLS_PER_RECONCILE = 1 + 5
# The two requirements loops a converged reconcile can go through, by the engines that run them.
# Before v2.4 the first call carries no required resources. From v2.4 it carries those the step
# required last reconcile, and Crossplane stops after it when they already satisfy the answer's
# requirements (composite/composition_functions.go, xfn/required_resources.go at v2.4.0).
UNSEEDED_LOOP = "Crossplane v2.1-v2.3"
SEEDED_LOOP = "Crossplane v2.4"
LOOPS = (UNSEEDED_LOOP, SEEDED_LOOP)

Required = dict[str, list[dict[str, Any]]]


@dataclasses.dataclass
class Reconciles:
    """Whole reconciles of converged XRs, each through Crossplane's requirements loop."""

    calls: list[int] = dataclasses.field(default_factory=list)  # per reconcile
    latencies_ms: list[float] = dataclasses.field(default_factory=list)  # sum of its calls
    cpu_s: float = 0.0

    @property
    def cpu_us(self) -> float:
        return self.cpu_s / len(self.calls) * 1e6 if self.calls else float("nan")

    @property
    def calls_per_reconcile(self) -> float:
        return statistics.mean(self.calls) if self.calls else float("nan")


def reconcile(
    server: Server, scenario: Scenario, member: int, seed: Required | None
) -> tuple[int, int, Required]:
    """One reconcile of a fleet member as Crossplane runs it. The first call carries `seed`
    (None: no required resources, the loop before v2.4); while the response's requirements
    differ from the previous call's, Crossplane fetches them and calls again, except that a
    seeded first call whose requirements resolve to what it carried is final. Returns (calls,
    nanoseconds spent in them, the required resources the last requirements resolve to: the
    next reconcile's seed)."""
    identity = scenario.base.member(member)
    # A member's names, back to the base XR's, to look its requirements up.
    base_names = {fn(identity): old for old, fn in scenario.renames.items()}
    required: Required | None = seed
    previous: fnv1.Requirements | None = None
    calls, elapsed = 0, 0
    for _ in range(MAX_CALLS_PER_RECONCILE):
        data = scenario.variant(required).make(member, next_n())
        start = time.perf_counter_ns()
        blob = server.invoke(data)
        elapsed += time.perf_counter_ns() - start
        calls += 1
        rsp = fnv1.RunFunctionResponse.FromString(blob)
        # Crossplane compares with proto.Equal, for which an unset message equals only
        # another unset one: a function that requires nothing is called once.
        current = rsp.requirements if rsp.HasField("requirements") else None
        if current == previous:
            break
        resolved: Required = {}
        for name, selector in rsp.requirements.resources.items():
            base = fnv1.ResourceSelector()
            base.CopyFrom(selector)
            base.match_name = base_names.get(selector.match_name, selector.match_name)
            base.namespace = base_names.get(selector.namespace, selector.namespace)
            resolved[name] = scenario.resolve(base)
        if calls == 1 and seed is not None and resolved == seed:
            break
        previous, required = current, resolved
    else:
        raise SystemExit(f"bench: {scenario.kind}: requirements did not stabilise")
    check_response(scenario, rsp, f"reconcile of member {member}")
    return calls, elapsed, required or {}


def reconciles(server: Server, scenario: Scenario, fleet: int, count: int, loop: str) -> Reconciles:
    """`count` converged reconciles of members of a fleet of `fleet`, in turn, through `loop`.
    A converged XR was reconciled before (Crossplane reconciles each about once a minute), so
    every member measured is reconciled once first, untimed, which also gives the seeded loop
    what the member required last time."""
    members = [r % fleet for r in range(count)]
    seeded = loop == SEEDED_LOOP
    last: dict[int, Required] = {}
    for member in sorted(set(members)):
        last[member] = reconcile(server, scenario, member, None)[2]
    stats = Reconciles()
    cpu_before = server.cpu()
    for member in members:
        calls, elapsed, last[member] = reconcile(
            server, scenario, member, last[member] if seeded else None
        )
        stats.calls.append(calls)
        stats.latencies_ms.append(elapsed / 1e6)
    stats.cpu_s = server.cpu() - cpu_before
    return stats
