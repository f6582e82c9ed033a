"""The run: build the scenarios, start the servers, measure every phase, write the report.

    .venv/bin/python -m hack.bench              # full run (a few minutes), writes bench/results.md
    BENCH_QUICK=1 make bench                    # or --quick: a short smoke run

Exit code: 0 when every call succeeded and no response was FATAL or wrong, even if a goal is
missed (this is a report); 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from hack.bench import docs, measure, report, scenarios
from hack.bench.scenarios import Scenario, check_response, next_n
from hack.bench.scrape import Scraper, scrape
from hack.bench.servers import ROLES, Server, function_argv, noop_argv
from harness.fixtures import desired, free_port

QUICK_ENV = "BENCH_QUICK"
# The run's sizes: each flag's default (its type parses the flag) and help.
OPTIONS: dict[str, tuple[str | int | float, str]] = {
    "--fleets": ("1,32,256,1024", "fleet sizes: distinct XRs of each kind, called round-robin"),
    "--calls": (800, "serial calls per server per kind and fleet"),
    "--warmup": (100, "warm-up calls per server"),
    "--reconciles": (300, "whole reconciles per kind"),
    "--concurrency": (
        "8,32",
        "concurrent callers: each number is measured in turn, comma-separated",
    ),
    "--concurrent-fleets": (
        "32,1024",
        "fleet sizes the concurrent load runs over (at most the largest of --fleets)",
    ),
    "--duration": (3.0, "seconds of concurrent load per server per XR"),
    "--rounds": (3, "alternating slices of the concurrent load"),
}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    for flag, (default, help_text) in OPTIONS.items():
        parser.add_argument(flag, type=type(default), default=default, help=help_text)
    parser.add_argument(
        "--quick", action="store_true", help=f"short smoke run (also with {QUICK_ENV}=1)"
    )
    parser.add_argument("--no-write", action="store_true", help="do not write bench/results.md")
    args = parser.parse_args(argv)
    args.quick = args.quick or os.environ.get(QUICK_ENV, "") not in ("", "0")
    if args.quick:
        args.fleets, args.concurrent_fleets = "1,256", "256"
        args.calls, args.warmup, args.reconciles = 200, 20, 50
        args.duration, args.rounds = 1.0, 1
    args.fleet_sizes = sorted({int(f) for f in args.fleets.split(",")})
    args.callers = sorted({int(c) for c in args.concurrency.split(",")})
    # Every member of a concurrent fleet is built: the serial phase's largest fleet bounds it.
    args.concurrent_fleet_sizes = sorted(
        {min(int(f), args.fleet_sizes[-1]) for f in args.concurrent_fleets.split(",")}
    )
    return args


def check_served(function: Server, built: list[Scenario]) -> None:
    """The served function answers as the function does in-process."""
    for sc in built:
        rsp = fnv1.RunFunctionResponse.FromString(function.invoke(sc.template.make(0, next_n())))
        check_response(sc, rsp, "function over gRPC")
        local = scenarios.runner_response(
            fnv1.RunFunctionRequest.FromString(sc.template.make(0, next_n()))
        )
        if desired(rsp) != desired(local):
            raise SystemExit(f"bench: {sc.kind}: the served function composes something else")


def start_function(tmp: Path) -> tuple[Server, int]:
    """The function with metrics on, started, and the port it serves them on."""
    port, metrics_port = free_port(), free_port()
    while metrics_port == port:  # two free ports, not one twice
        metrics_port = free_port()
    server = Server("function", function_argv(port, metrics_port), port, tmp / "fn.log")
    server.start()
    return server, metrics_port


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    began = time.perf_counter()
    load = {"start": os.getloadavg()}
    # Before anything can change under function/: the servers run the code as it is now.
    machine = report.machine()
    largest = args.fleet_sizes[-1]
    print(f"building converged requests, fleets of up to {largest} XRs ...", flush=True)
    built = scenarios.build_scenarios(largest)
    for sc in built:
        print(
            f"  {sc.kind}: {sc.pools} pools, {sc.expected} desired, "
            f"request {len(sc.template.blob) / 1024:.1f} KiB"
        )
    cells: list[report.Cell] = []
    memory_by_fleet: dict[int, dict[str, tuple[float, float]]] = {}
    concurrent: list[report.Loaded] = []
    reconciles: dict[tuple[str, str], measure.Reconciles] = {}
    with tempfile.TemporaryDirectory(prefix="fn-bench-") as tmpdir:
        tmp = Path(tmpdir)
        started: dict[str, Server] = {}
        scraper: Scraper | None = None
        try:
            started["function"], metrics_port = start_function(tmp)
            check_served(started["function"], built)
            port = free_port()
            started["noop"] = Server("noop", noop_argv(port), port, tmp / "noop.log")
            started["noop"].start()
            servers = [started[r] for r in ROLES]
            # From the first measured call to the last, as Prometheus would scrape a pod.
            scraper = Scraper(started["function"], metrics_port)
            scraper.start()
            for fleet in args.fleet_sizes:
                for sc in built:
                    calls, warmup = max(args.calls, fleet), max(args.warmup, fleet)
                    print(
                        f"serial: {sc.kind}, fleet of {fleet}, {calls} calls per server "
                        f"after {warmup} warm-up ...",
                        flush=True,
                    )
                    stats = measure.serial(servers, sc, fleet, calls, warmup)
                    cells.append(report.Cell(sc, fleet, stats))
                memory_by_fleet[fleet] = {r: started[r].memory() for r in ROLES}
            for sc in built:
                for loop in measure.LOOPS:
                    print(f"reconciles: {sc.kind}, {loop}, {args.reconciles} ...", flush=True)
                    reconciles[sc.kind, loop] = measure.reconciles(
                        started["function"], sc, largest, args.reconciles, loop
                    )

            # The function says how many of its loaded calls its memo answered: a converged
            # fleet's calls all should be.
            def memo() -> tuple[float, float]:
                return scrape(started["function"], metrics_port).memo

            for fleet in args.concurrent_fleet_sizes:
                for sc in built:
                    print(
                        f"concurrent: {sc.kind}, fleet of {fleet}, "
                        f"{' then '.join(str(c) for c in args.callers)} callers, "
                        f"{args.duration:g} s per server, after one call per XR ...",
                        flush=True,
                    )
                    # The warm-up's failed calls are counted once, with the first load's.
                    stats = {s.name: measure.Stats() for s in servers}
                    measure.warm(servers, sc, fleet, stats)
                    for callers in args.callers:
                        measure.concurrent(
                            servers, sc, fleet, callers, args.duration, args.rounds, memo, stats
                        )
                        concurrent.append(report.Loaded(sc, fleet, callers, stats))
                        stats = {s.name: measure.Stats() for s in servers}
            # Apart from the fleet's: 32 callers hold 32 requests in flight in every server.
            memory_loaded = {r: started[r].memory() for r in ROLES}
            audit = scraper.finish()
        finally:
            if scraper is not None:
                scraper.stop()
            for server in started.values():
                server.stop()
    load["end"] = os.getloadavg()
    result = report.Report(
        args=args,
        machine=machine,
        load=load,
        scenarios=built,
        cells=cells,
        memory_by_fleet=memory_by_fleet,
        memory_loaded=memory_loaded,
        concurrent=concurrent,
        reconciles=reconciles,
        audit=audit,
        duration_s=time.perf_counter() - began,
    )
    failures = [
        f"{cell.scenario.kind}, fleet {cell.fleet}: {record.errors} failed calls, "
        f"{record.bad} FATAL or wrong responses from {role}"
        for cell in cells
        for role, record in cell.stats.items()
        if record.errors or record.bad
    ]
    failures.extend(
        f"{loaded.scenario.kind}, fleet {loaded.fleet}, {loaded.callers} callers: "
        f"{record.errors + record.bad} bad from {role}"
        for loaded in concurrent
        for role, record in loaded.stats.items()
        if record.errors or record.bad
    )
    # A miscount is a wrong answer too, from the metrics endpoint.
    failures.extend(f"the function's metrics: {problem}" for problem in audit.problems())
    print()
    print(f"Machine: {result.machine_line()}\nLoad: {result.load_line()}\n")
    print(result.tables())
    print("\n### Goals\n")
    print(result.goals_text())
    if not args.no_write:
        report.RESULTS.write_text(result.markdown())
        print(f"\nwrote {report.RESULTS.relative_to(report.ROOT)} ({result.duration_s:.0f} s)")
        # The docs quote these results: their figures follow every run.
        docs.main([])
        print("rewrote the bench figures in docs/performance.md and docs/operations.md")
    for failure in failures:
        print(f"bench: {failure}", file=sys.stderr)
    return 1 if failures else 0
