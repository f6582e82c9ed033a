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
from hack.bench.scenarios import check_response, next_n
from hack.bench.scrape import Scraper
from hack.bench.servers import Server
from harness.example_sets import ROOT
from harness.fixtures import desired

QUICK_ENV = "BENCH_QUICK"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    add = parser.add_argument
    add("--fleets", default="1,32,256,1024", help="fleet sizes: distinct XRs of each kind")
    add("--calls", type=int, default=800, help="serial calls per server per kind and fleet")
    add("--reconciles", type=int, default=300, help="whole reconciles per kind")
    add("--concurrency", default="8,32", help="concurrent callers, each number in turn")
    add("--concurrent-fleets", default="32,1024", help="fleets under concurrent load")
    add("--quick", action="store_true", help=f"short smoke run (also with {QUICK_ENV}=1)")
    add("--no-write", action="store_true", help="do not write bench/results.md and the docs")
    args = parser.parse_args(argv)
    args.quick = args.quick or os.environ.get(QUICK_ENV, "") not in ("", "0")
    # Warm-up calls per server, seconds of concurrent load per server per XR, in that many
    # alternating slices.
    args.warmup, args.duration, args.rounds = (20, 1.0, 1) if args.quick else (100, 3.0, 3)
    if args.quick:
        args.fleets, args.concurrent_fleets, args.calls, args.reconciles = "1,256", "256", 200, 50
    args.fleet_sizes = sorted({int(f) for f in args.fleets.split(",")})
    args.callers = sorted({int(c) for c in args.concurrency.split(",")})
    # Every member of a concurrent fleet is built: the serial phase's largest fleet bounds it.
    args.concurrent_fleet_sizes = sorted(
        {min(int(f), args.fleet_sizes[-1]) for f in args.concurrent_fleets.split(",")}
    )
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    began, load = time.perf_counter(), {"start": os.getloadavg()}
    # Before anything can change under function/: the servers run the code as it is now.
    result = report.Report(args, report.machine(), load)
    largest = args.fleet_sizes[-1]
    print(f"building converged requests, fleets of up to {largest} XRs ...", flush=True)
    result.scenarios = built = scenarios.build_scenarios(largest)
    for sc in built:
        print(
            f"  {sc.kind}: {sc.pools} pools, {sc.expected} desired, "
            f"request {len(sc.template.blob) / 1024:.1f} KiB"
        )
    servers: list[Server] = []
    scraper: Scraper | None = None
    with tempfile.TemporaryDirectory(prefix="fn-bench-") as tmp:
        try:
            function = Server("function", Path(tmp))
            servers.append(function)
            # The served function answers as the function does in-process.
            for sc in built:
                rsp = fnv1.RunFunctionResponse.FromString(function.invoke(sc.call(0, next_n())))
                check_response(sc, rsp, "function over gRPC")
                local = fnv1.RunFunctionRequest.FromString(sc.call(0, next_n()))
                if desired(rsp) != desired(scenarios.runner_response(local)):
                    raise SystemExit(f"bench: {sc.kind}: the served function composes otherwise")
            servers.append(Server("noop", Path(tmp)))
            # From the first measured call to the last, as Prometheus would scrape a pod.
            scraper = Scraper(function)
            for fleet in args.fleet_sizes:
                for sc in built:
                    calls, warmup = max(args.calls, fleet), max(args.warmup, fleet)
                    print(
                        f"serial: {sc.kind}, fleet of {fleet}, {calls} calls per server "
                        f"after {warmup} warm-up ...",
                        flush=True,
                    )
                    stats = measure.serial(servers, sc, fleet, calls, warmup)
                    result.cells.append(report.Cell(sc, fleet, stats))
                result.memory_by_fleet[fleet] = {s.name: s.memory() for s in servers}
            for sc in built:
                for loop in measure.LOOPS:
                    print(f"reconciles: {sc.kind}, {loop}, {args.reconciles} ...", flush=True)
                    result.reconciles[sc.kind, loop] = measure.reconciles(
                        function, sc, largest, args.reconciles, loop
                    )
            for fleet in args.concurrent_fleet_sizes:
                for sc in built:
                    print(
                        f"concurrent: {sc.kind}, fleet of {fleet}, "
                        f"{' then '.join(str(c) for c in args.callers)} callers, "
                        f"{args.duration:g} s per server, after one call per XR ...",
                        flush=True,
                    )
                    # One untimed call per XR; its failed calls counted with the first load's.
                    stats = measure.serial(servers, sc, fleet, 0, fleet)
                    for callers in args.callers:
                        measure.concurrent(
                            servers, sc, fleet, callers, args.duration, args.rounds, stats
                        )
                        result.concurrent.append(report.Cell(sc, fleet, stats, callers))
                        stats = {s.name: measure.Stats() for s in servers}
            # Apart from the fleet's: 32 callers hold 32 requests in flight in every server.
            result.memory_loaded = {s.name: s.memory() for s in servers}
            result.audit = scraper.finish()
        finally:
            if scraper is not None:
                scraper.stop()
            for server in servers:
                server.stop()
    load["end"] = os.getloadavg()
    result.duration_s = time.perf_counter() - began
    failures = [
        f"{cell.scenario.kind}, fleet {cell.fleet}"
        f"{f', {cell.callers} callers' if cell.callers else ''}: {record.errors} failed calls, "
        f"{record.bad} FATAL or wrong responses from {role}"
        for cell in result.cells + result.concurrent
        for role, record in cell.stats.items()
        if record.errors or record.bad
    ]
    # A miscount is a wrong answer too, from the metrics endpoint.
    failures.extend(f"the function's metrics: {problem}" for problem in result.audit.problems())
    print(f"\nMachine: {result.machine}\nLoad: {result.load_line()}\n")
    print(result.tables())
    print("\n### Goals\n")
    print(result.goals_text())
    if not args.no_write:
        docs.RESULTS.write_text(result.markdown())
        print(f"\nwrote {docs.RESULTS.relative_to(ROOT)} ({result.duration_s:.0f} s)")
        # The docs quote these results: their figures follow every run.
        docs.main()
        print("rewrote the bench figures in docs/performance.md and docs/operations.md")
    for failure in failures:
        print(f"bench: {failure}", file=sys.stderr)
    return 1 if failures else 0
