"""What make fleet reads besides the processes (hack/fleet/window.py, hack/fleet/bench.py): the
function's counters from a scrape of its real series, and the bench's concurrent figure from a
results file as `make bench` writes it."""

from __future__ import annotations

from pathlib import Path

import pytest
from prometheus_client import generate_latest

from function import metrics
from hack.fleet import bench
from hack.fleet.report import BenchConcurrent, FunctionCounters
from hack.fleet.window import function_counters
from harness.e2e.operability import Counted
from tests.test_bench_docs import RESULTS


def _scrape_after_calls() -> str:
    """The function's series after three CoreWeave calls (two memo hits) and a Civo miss."""
    counted = metrics.Metrics()
    counted.called("CoreWeaveCluster", "normal", 0.004, "miss")
    counted.called("CoreWeaveCluster", "normal", 0.000_25, "hit")
    counted.called("CoreWeaveCluster", "normal", 0.000_5, "hit")
    counted.called("CivoCluster", "warning", 0.002, "miss")
    return generate_latest(counted.registry).decode()


@pytest.mark.parametrize(
    ("checked", "expected"),
    [
        # The scrape's own calls and hits, and every call's seconds summed over both kinds.
        (None, FunctionCounters(calls=4, memo_hits=2, call_seconds=0.006_75)),
        # Calls and hits checked against the function's log take their place; seconds stay.
        (
            Counted(5, 3),
            FunctionCounters(calls=5, memo_hits=3, call_seconds=0.006_75),
        ),
    ],
)
def test_function_counters_from_a_scrape(
    checked: Counted | None, expected: FunctionCounters
) -> None:
    counters = function_counters(_scrape_after_calls(), checked)
    # The counts exactly; the seconds as summed in floating point.
    assert (counters.calls, counters.memo_hits) == (expected.calls, expected.memo_hits)
    assert counters.call_seconds == pytest.approx(expected.call_seconds)


def test_the_bench_figure_is_the_heaviest_concurrent_loads(tmp_path: Path) -> None:
    results = tmp_path / "results.md"
    results.write_text(RESULTS)
    # The 1024 XRs x 32 callers rows of the function, with metadata noise.
    assert bench.concurrent(results) == BenchConcurrent(
        date="2026-12-03",
        callers=32,
        fleet=1024,
        cpu_us_per_call={"CoreWeaveCluster": 3200, "CivoCluster": 1500},
        # The serial rows of the largest fleet, with metadata noise.
        serial_cpu_us_per_call={"CoreWeaveCluster": 3818, "CivoCluster": 2529},
        serial_fleet=1024,
    )


@pytest.mark.parametrize(
    "text", [None, "# Benchmark results\n\n- Date: 2026-12-03 10:00 UTC\n\nNo tables yet.\n"]
)
def test_without_readable_bench_results_there_is_no_figure(
    tmp_path: Path, text: str | None
) -> None:
    results = tmp_path / "results.md"
    if text is not None:
        results.write_text(text)
    assert bench.concurrent(results) is None
