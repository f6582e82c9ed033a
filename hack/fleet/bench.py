"""The bench's figure the fleet's CPU per call is set beside: the function's server CPU per call
under the heaviest concurrent load bench/results.md holds, read as hack/bench/docs.py reads it
for the sizing in docs/operations.md."""

from __future__ import annotations

from pathlib import Path

from hack.bench.docs import RESULTS, parse
from hack.fleet.report import BenchConcurrent


def concurrent(results: Path = RESULTS) -> BenchConcurrent | None:
    """The heaviest concurrent load's figures, or None when the results are missing or lack the
    tables the docs read (a bench run that stopped early, an older format)."""
    try:
        figures = parse(results.read_text())
    except (OSError, ValueError, KeyError):
        return None
    return BenchConcurrent(
        date=figures.date,
        callers=figures.callers,
        fleet=figures.concurrent_fleet,
        cpu_us_per_call={
            kind: int(servers["function"]["server CPU µs/call"])
            for kind, servers in figures.concurrent.items()
        },
        serial_cpu_us_per_call=figures.serial_cpu,
        serial_fleet=max(max(by_fleet) for by_fleet in figures.serial_ratio.values()),
    )
