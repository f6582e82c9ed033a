"""Measurements: latency, throughput, server CPU per call, and whole reconciles through
Crossplane's requirements loop.
"""

from __future__ import annotations

import dataclasses
import time
from concurrent.futures import ThreadPoolExecutor

import grpc
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from hack.bench.scenarios import Scenario, check_response, next_n
from hack.bench.scrape import scrape
from hack.bench.servers import Server
from harness.fixtures import MAX_CALLS_PER_RECONCILE, Required, requirements_loop


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


@dataclasses.dataclass
class Stats:
    """A server's timed calls, or its whole reconciles (each one a call in these figures)."""

    latencies_ms: list[float] = dataclasses.field(default_factory=list)
    errors: int = 0
    bad: int = 0  # FATAL or wrong responses (the function's only)
    cpu_s: float = 0.0
    wall_s: float = 0.0
    # (hits, misses) of the function's memo over the timed concurrent calls.
    memo: tuple[int, int] | None = None
    # Whole reconciles: the calls each took.
    calls_per_reconcile: list[int] = dataclasses.field(default_factory=list)

    @property
    def calls(self) -> int:
        return len(self.latencies_ms)

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
    member of a fleet of `fleet` XRs. With calls=0 and warmup=fleet, the untimed call per member
    the concurrent phase needs first: a converged XR was answered before, and without it a
    server's first call for a member would be timed, composing afresh whenever the memo no
    longer holds that member's answer (issue 31: every call of a 3 s window over 1 024 XRs did).
    """
    stats = {s.name: Stats() for s in servers}
    cpu0: dict[str, float] = {}
    for i in range(warmup + calls):
        if i == warmup:
            cpu0 = {s.name: s.cpu() for s in servers}
        shift = i % len(servers)
        for server in servers[shift:] + servers[:shift]:
            record = stats[server.name]
            data = scenario.call(i % fleet, next_n())
            start = time.perf_counter_ns()
            try:
                blob = server.invoke(data)
            except grpc.RpcError:
                record.errors += 1
                continue
            if i >= warmup:
                record.latencies_ms.append((time.perf_counter_ns() - start) / 1e6)
            if server.name == "function" and not function_response_ok(scenario, blob):
                record.bad += 1
    for server in servers:
        stats[server.name].cpu_s = server.cpu() - cpu0[server.name] if calls else 0.0
    return stats


def concurrent(
    servers: list[Server],
    scenario: Scenario,
    fleet: int,
    workers: int,
    seconds: float,
    rounds: int,
    stats: dict[str, Stats],
) -> None:
    """`workers` callers on one channel per server for seconds/rounds, servers alternating per
    round, calling for the members of a fleet of `fleet` XRs in turn (warm them first: serial()),
    added to each server's stats. The function's memo (hits, misses) counters, scraped once the
    warm-up is done and once after the last round, say how many of its loaded calls the memo
    answered: a converged fleet's calls all should be."""
    (function,) = [s for s in servers if s.name == "function"]
    hits0, misses0 = scrape(function).memo
    for r in range(rounds):
        shift = r % len(servers)
        for server in servers[shift:] + servers[:shift]:
            deadline = time.perf_counter() + seconds / rounds

            def caller(
                server: Server = server, deadline: float = deadline
            ) -> tuple[list[float], int, list[bytes]]:
                """One caller's latencies, failed calls, and the function's answers to check."""
                latencies: list[float] = []
                blobs: list[bytes] = []
                errors = 0
                while time.perf_counter() < deadline:
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

            record, cpu_before, start = stats[server.name], server.cpu(), time.perf_counter()
            with ThreadPoolExecutor(max_workers=workers) as pool:
                results = [f.result() for f in [pool.submit(caller) for _ in range(workers)]]
            record.wall_s += time.perf_counter() - start
            record.cpu_s += server.cpu() - cpu_before
            for latencies, errors, blobs in results:
                record.latencies_ms.extend(latencies)
                record.errors += errors
                record.bad += sum(not function_response_ok(scenario, b) for b in blobs)
    hits, misses = scrape(function).memo
    stats["function"].memo = (round(hits - hits0), round(misses - misses0))


# The two requirements loops a converged reconcile can go through, by the engines that run them
# (harness/e2e/engine.py, calls_per_converged_reconcile, says how they differ).
UNSEEDED_LOOP = "Crossplane v2.1-v2.3"
SEEDED_LOOP = "Crossplane v2.4"
LOOPS = (UNSEEDED_LOOP, SEEDED_LOOP)

Selectors = dict[str, fnv1.ResourceSelector]


def requirements(rsp: fnv1.RunFunctionResponse) -> fnv1.Requirements | None:
    """As Crossplane compares them (proto.Equal): an unset message equals only another unset one."""
    return rsp.requirements if rsp.HasField("requirements") else None


def reconcile(
    server: Server, scenario: Scenario, member: int, seed: Selectors | None
) -> tuple[int, int, Selectors]:
    """One reconcile of a fleet member as Crossplane runs it (harness.fixtures.requirements_loop),
    its first call carrying what `seed` resolves to (None: nothing, the loop before v2.4).
    Returns (calls, nanoseconds spent in them, the selectors its last answer required: the next
    reconcile's seed)."""
    # A member's names, back to the base XR's, to look its requirements up.
    base_names = {fn(scenario.base.member(member)): old for old, fn in scenario.renames.items()}
    elapsed = 0

    def call(required: Required | None) -> fnv1.RunFunctionResponse:
        nonlocal elapsed
        data = scenario.variant(required).make(member, next_n())
        start = time.perf_counter_ns()
        blob = server.invoke(data)
        elapsed += time.perf_counter_ns() - start
        return fnv1.RunFunctionResponse.FromString(blob)

    passes = requirements_loop(call, lambda selector: scenario.resolve(selector, base_names), seed)
    final = requirements(passes[-1])
    if len(passes) == MAX_CALLS_PER_RECONCILE and final != requirements(passes[-2]):
        raise SystemExit(f"bench: {scenario.kind}: requirements did not stabilise")
    check_response(scenario, passes[-1], f"reconcile of member {member}")
    return len(passes), elapsed, dict(passes[-1].requirements.resources)


def reconciles(server: Server, scenario: Scenario, fleet: int, count: int, loop: str) -> Stats:
    """`count` converged reconciles of members of a fleet of `fleet`, in turn, through `loop`.
    A converged XR was reconciled before (Crossplane reconciles each about once a minute), so
    every member measured is reconciled once first, untimed, which also gives the seeded loop
    what the member required last time."""
    members = [r % fleet for r in range(count)]
    last = {member: reconcile(server, scenario, member, None)[2] for member in members[:fleet]}
    stats, cpu_before = Stats(), server.cpu()
    for member in members:
        seed = last[member] if loop == SEEDED_LOOP else None
        calls, elapsed, last[member] = reconcile(server, scenario, member, seed)
        stats.calls_per_reconcile.append(calls)
        stats.latencies_ms.append(elapsed / 1e6)
    stats.cpu_s = server.cpu() - cpu_before
    return stats
