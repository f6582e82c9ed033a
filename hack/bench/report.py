"""The report: bench/results.md, and the same tables on stdout."""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import hashlib
import os
import platform
import statistics
from collections.abc import Iterator

import grpc
import psutil
from google.protobuf import __version__ as protobuf_version

from hack import provenance
from hack.bench.measure import SEEDED_LOOP, UNSEEDED_LOOP, Stats, pct
from hack.bench.scenarios import Scenario
from hack.bench.scrape import SCRAPE_INTERVAL_S, Audit
from hack.bench.servers import LABELS, ROLES
from hack.fleet.report import ratio, rows_table, table
from harness.example_sets import ROOT

# Goals from issue 13 (and the earlier ones the fleet goals tighten).
GOAL_LATENCY_RATIO = 1.3  # function p50 / no-op floor p50, every kind and fleet size
GOAL_FLEET_GROWTH = 1.1  # ratio to the floor at the largest fleet / at one XR
GOAL_RSS_MB = 90.0  # peak RSS of the function after the largest fleet
# Issue 31: a converged call's server CPU under concurrent callers, at most this many times the
# function's own serial CPU per call.
GOAL_CONCURRENT_SERIAL_RATIO = 1.2
# What each requirements loop needs per converged reconcile. CoreWeave reads two objects (a
# ProviderConfig, then the Secret it names): before v2.4 one call asks and one gets what it
# asked for; from v2.4 the first call already carries them. Civo reads nothing once the
# kubeconfig key is known.
GOAL_CALLS = {
    ("CoreWeaveCluster", UNSEEDED_LOOP): 2,
    ("CoreWeaveCluster", SEEDED_LOOP): 1,
    ("CivoCluster", UNSEEDED_LOOP): 1,
    ("CivoCluster", SEEDED_LOOP): 1,
}


def machine() -> str:
    """The machine, the versions and the code measured, as the results' header gives them."""
    digest = hashlib.sha256()
    for path in sorted((ROOT / "function").rglob("*.py")):
        digest.update(path.relative_to(ROOT).as_posix().encode())
        digest.update(path.read_bytes())
    return (
        f"{provenance.cpu_model()}, {os.cpu_count()} cores, "
        f"{psutil.virtual_memory().total / 1024**3:.1f} GiB RAM; "
        f"Python {platform.python_version()}, grpcio {grpc.__version__}, "
        f"protobuf {protobuf_version}; commit {provenance.commit()}; "
        f"function/ sha256 {digest.hexdigest()[:12]}"
    )


def fmt(value: float, digits: int = 2) -> str:
    return "n/a" if value != value else f"{value:.{digits}f}"  # noqa: PLR0124 - NaN check


def times(ratios: list[float]) -> str:
    return " / ".join(f"{fmt(r)}x" for r in ratios)


@dataclasses.dataclass
class Cell:
    """One kind and fleet size, serial (callers 0) or under that many concurrent callers: every
    server's stats."""

    scenario: Scenario
    fleet: int
    stats: dict[str, Stats]
    callers: int = 0

    def p(self, role: str, q: float) -> float:
        return pct(self.stats[role].latencies_ms, q)

    def floor_ratio(self, q: float = 50) -> float:
        """The function's latency over the no-op floor's."""
        return self.p("function", q) / self.p("noop", q)

    def cpu_ratio(self, role: str = "function") -> float:
        """Server CPU per call, over the no-op floor's in the same load: NaN (n/a) where the floor
        took less CPU than the process clock's tick, so one such cell does not lose the report."""
        return ratio(self.stats[role].cpu_us, self.stats["noop"].cpu_us)


@dataclasses.dataclass
class Report:
    """A run's figures, filled in as it measures them."""

    args: argparse.Namespace
    machine: str  # machine()
    load: dict[str, tuple[float, float, float]]  # os.getloadavg() at the start and the end
    scenarios: list[Scenario] = dataclasses.field(default_factory=list)
    cells: list[Cell] = dataclasses.field(default_factory=list)  # serial
    memory_by_fleet: dict[int, dict[str, tuple[float, float]]] = dataclasses.field(
        default_factory=dict
    )
    # After the concurrent phase.
    memory_loaded: dict[str, tuple[float, float]] = dataclasses.field(default_factory=dict)
    concurrent: list[Cell] = dataclasses.field(default_factory=list)
    # By kind and loop.
    reconciles: dict[tuple[str, str], Stats] = dataclasses.field(default_factory=dict)
    audit: Audit = dataclasses.field(default_factory=Audit)  # the function's scrapes
    duration_s: float = 0.0

    def cell(self, scenario: Scenario, fleet: int) -> Cell:
        (cell,) = [c for c in self.cells if c.scenario is scenario and c.fleet == fleet]
        return cell

    def fleet_table(self) -> str:
        return rows_table(
            {
                "XR": cell.scenario.kind,
                "fleet": str(cell.fleet),
                "fn p50 ms": fmt(cell.p("function", 50), 3),
                "fn p99 ms": fmt(cell.p("function", 99), 3),
                "no-op p50": fmt(cell.p("noop", 50), 3),
                "no-op p99": fmt(cell.p("noop", 99), 3),
                "x no-op p50 / p99": f"{fmt(cell.floor_ratio())} / {fmt(cell.floor_ratio(q=99))}",
                "server CPU µs/call fn / no-op": " / ".join(
                    fmt(cell.stats[r].cpu_us, 0) for r in ROLES
                ),
                "errors": str(sum(cell.stats[r].errors + cell.stats[r].bad for r in ROLES)),
            }
            for cell in self.cells
        )

    def memory_table(self) -> str:
        after = [(str(f), m) for f, m in self.memory_by_fleet.items()]
        after.append((f"then {self.args.concurrency} concurrent callers", self.memory_loaded))
        return table(
            ["after fleet", *(f"{LABELS[r]} MB: peak / now" for r in ROLES)],
            [
                [label, *(f"{fmt(memory[r][0], 1)} / {fmt(memory[r][1], 1)}" for r in ROLES)]
                for label, memory in after
            ],
        )

    def serial_cpu_us(self, scenario: Scenario, fleet: int, role: str = "function") -> float:
        """A server's serial CPU per call for scenario at fleet (NaN: not measured)."""
        measured = fleet in self.args.fleet_sizes
        return self.cell(scenario, fleet).stats[role].cpu_us if measured else float("nan")

    def concurrent_table(self) -> str:
        return (
            rows_table(
                {
                    "XR": loaded.scenario.kind,
                    "fleet": str(loaded.fleet),
                    "callers": str(loaded.callers),
                    "server": LABELS[role],
                    "calls/s": fmt(ratio((st := loaded.stats[role]).calls, st.wall_s), 0),
                    "errors": str(st.errors + st.bad),
                    "p50 ms": fmt(loaded.p(role, 50)),
                    "p99 ms": fmt(loaded.p(role, 99)),
                    "server CPU µs/call": fmt(st.cpu_us, 0),
                    "x no-op CPU": fmt(loaded.cpu_ratio(role)),
                    "x serial CPU": fmt(
                        ratio(st.cpu_us, self.serial_cpu_us(loaded.scenario, loaded.fleet, role))
                    ),
                    "memo hits / calls": f"{st.memo[0]} / {sum(st.memo)}" if st.memo else "",
                    "calls": str(st.calls),
                }
                for loaded in self.concurrent
                for role in ROLES
            )
            + "\n\nx serial CPU: over the same server's serial CPU per call in this run, same "
            "kind and fleet. memo hits: of the function's timed calls, those its memo answered "
            "(read from its metrics before and after)."
        )

    def reconcile_table(self) -> str:
        return rows_table(
            {
                "XR": f"{kind}, {loop}",
                "calls per reconcile (mean)": fmt(statistics.mean(rec.calls_per_reconcile)),
                "most common": "/".join(map(str, statistics.multimode(rec.calls_per_reconcile))),
                "reconcile p50 ms (sum of its calls)": fmt(pct(rec.latencies_ms, 50), 3),
                "p99 ms": fmt(pct(rec.latencies_ms, 99), 3),
                "function CPU µs per reconcile": fmt(rec.cpu_us, 0),
                "reconciles": str(rec.calls),
            }
            for (kind, loop), rec in self.reconciles.items()
        )

    def tables(self) -> str:
        a = self.args
        sizes = "\n".join(
            f"- {sc.kind}: {sc.pools} pools, {sc.expected} desired resources, "
            f"request {len(sc.template.blob) / 1024:.1f} KiB"
            for sc in self.scenarios
        )
        return "\n\n".join(
            [
                "### Serial latency by fleet size (client-side, gRPC unary over loopback, "
                "round-robin over the servers and over the fleet's XRs; the function with "
                f"metrics on, scraped every {SCRAPE_INTERVAL_S:g} s)\n\n" + self.fleet_table(),
                "### Memory by fleet size (VmHWM / VmRSS, read after each fleet size)\n\n"
                + self.memory_table(),
                f"### Whole converged reconciles through the requirements loop "
                f"(fleet of {a.fleet_sizes[-1]}; each XR reconciled once before, untimed)\n\n"
                + self.reconcile_table(),
                f"### Concurrent callers ({a.concurrency} callers sharing one channel per "
                f"server; fleets of {', '.join(str(f) for f in a.concurrent_fleet_sizes)}; "
                f"{a.duration:g} s per server per XR, in {a.rounds} alternating slices, after "
                "one untimed call per XR)\n\n" + self.concurrent_table(),
                "### Requests (as Crossplane sends them, with metadata noise)\n\n" + sizes,
            ]
        )

    def goals(self) -> Iterator[tuple[str, str, bool]]:
        """Each goal: what it asks, what was measured, and whether that meets it."""
        fleets = self.args.fleet_sizes
        smallest, largest = fleets[0], fleets[-1]
        sizes = f" at {' / '.join(str(f) for f in fleets)} XRs"
        for sc in self.scenarios:
            ratios = [self.cell(sc, f).floor_ratio() for f in fleets]
            yield (
                f"{sc.kind}: p50 ≤ {GOAL_LATENCY_RATIO}x the no-op floor at every fleet size",
                times(ratios) + sizes,
                max(ratios) <= GOAL_LATENCY_RATIO,
            )
            if largest != smallest:
                growth = ratios[-1] / ratios[0]
                raw = [self.cell(sc, f).p("function", 50) for f in (smallest, largest)]
                yield (
                    f"{sc.kind}: growth from {smallest} to {largest} XRs ≤ "
                    f"{GOAL_FLEET_GROWTH}x (ratio to the floor)",
                    f"{fmt(growth)}x (function p50 alone: {fmt(raw[1] / raw[0])}x)",
                    growth <= GOAL_FLEET_GROWTH,
                )
        peak = self.memory_by_fleet[largest]["function"][0]
        yield (
            f"peak RSS ≤ {GOAL_RSS_MB:g} MB after {largest} XRs of each kind",
            f"{fmt(peak, 1)} MB",
            peak <= GOAL_RSS_MB,
        )
        errors = sum(c.stats["function"].errors + c.stats["function"].bad for c in self.concurrent)
        calls = sum(c.stats["function"].calls for c in self.concurrent)
        yield (
            f"{self.args.concurrency} concurrent callers with zero errors",
            f"{errors} errors in {calls} calls",
            errors == 0,
        )
        memo = [c.stats["function"].memo for c in self.concurrent]
        hits = sum(m[0] for m in memo if m is not None)
        answered = sum(sum(m) for m in memo if m is not None)
        yield (
            "concurrent calls are a converged fleet's: the function's memo answers every timed "
            "call (each XR was called once before)",
            f"{hits} of {answered} answered by the memo",
            bool(memo) and None not in memo and hits == answered,
        )
        for sc in self.scenarios:
            loads = [c for c in self.concurrent if c.scenario is sc]
            where = " at " + " / ".join(f"{c.fleet} XRs x {c.callers}" for c in loads) + " callers"
            serial = [
                ratio(c.stats["function"].cpu_us, self.serial_cpu_us(sc, c.fleet)) for c in loads
            ]
            yield (
                f"{sc.kind}: server CPU per call under concurrent callers ≤ "
                f"{GOAL_CONCURRENT_SERIAL_RATIO}x the function's serial CPU per call",
                times(serial) + where,
                all(r <= GOAL_CONCURRENT_SERIAL_RATIO for r in serial),
            )
        for (kind, loop), rec in self.reconciles.items():
            goal, most = GOAL_CALLS[kind, loop], max(rec.calls_per_reconcile)
            yield (
                f"{kind}, {loop}: calls per converged reconcile ≤ {goal}",
                f"{fmt(statistics.mean(rec.calls_per_reconcile))} (max {most})",
                most <= goal,
            )
        problems = self.audit.problems()
        final = self.audit.final
        yield (
            f"metrics: the scrape after the last call counts every call sent to the function "
            f"(scraped every {SCRAPE_INTERVAL_S:g} s while measured)",
            "; ".join(problems)
            if problems or final is None
            else f"{final.calls_counted:.0f} counted, {final.calls_sent} sent; the "
            f"{len(self.audit.periodic)} scrapes before it never ahead, never going back",
            not problems,
        )

    def load_line(self) -> str:
        return "; ".join(
            f"{when} {' / '.join(f'{v:.2f}' for v in avg)}" for when, avg in self.load.items()
        )

    def goals_text(self) -> str:
        return table(
            ["goal", "measured", "result"],
            [[g, v, "PASS" if ok else "FAIL"] for g, v, ok in self.goals()],
        )

    def markdown(self) -> str:
        a = self.args
        return (
            "# Benchmark results\n\n"
            "Generated by `make bench` (`hack/bench/`); see `bench/README.md` for the method.\n\n"
            f"- Date: {datetime.datetime.now(datetime.UTC).strftime('%Y-%m-%d %H:%M UTC')}\n"
            f"- Machine: {self.machine}\n"
            f"- Load average (1 / 5 / 15 min; other work shares these cores): {self.load_line()}\n"
            f"- Run: fleets of {', '.join(str(f) for f in a.fleet_sizes)} XRs per kind, "
            f"each {a.calls} serial calls per server (at least one per XR) after "
            f"{a.warmup} warm-up calls (at least one per XR); {a.reconciles} reconciles per kind; "
            f"{a.concurrency} callers x {a.duration:g} s per server per XR over fleets of "
            f"{', '.join(str(f) for f in a.concurrent_fleet_sizes)}{' (quick)' if a.quick else ''}; took "
            f"{self.duration_s:.0f} s\n\n"
            "## Goals\n\n" + self.goals_text() + "\n\n"
            "## Results\n\n" + self.tables() + "\n"
        )
