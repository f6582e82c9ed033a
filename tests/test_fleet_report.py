"""The arithmetic and rendering of bench/fleet.md (hack/fleet/report.py), without a control plane:
nearest-rank percentiles, CPU per converged XR-hour, and the report's rows."""

from __future__ import annotations

import math

import pytest

from hack.fleet.report import (
    Cost,
    KindFigures,
    Memo,
    Run,
    bring_up_rows,
    bring_up_shares,
    cost_rows,
    per_process,
    per_xr_hour,
    percentile,
    ready_row,
    render,
    table,
)

MIB = 1024 * 1024


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        ([5.0], 50, 5.0),
        ([5.0], 90, 5.0),
        ([3.0, 1.0, 2.0], 50, 2.0),
        ([1.0, 2.0, 3.0, 4.0], 50, 2.0),
        ([1.0, 2.0, 3.0, 4.0], 90, 4.0),
        ([float(i) for i in range(1, 33)], 50, 16.0),
        ([float(i) for i in range(1, 33)], 90, 29.0),
        ([float(i) for i in range(1, 33)], 100, 32.0),
        ([2.0, 1.0], 0, 1.0),
    ],
)
def test_percentile_is_nearest_rank(values: list[float], q: float, expected: float) -> None:
    assert percentile(values, q) == expected


def test_percentile_of_nothing_is_nan() -> None:
    assert math.isnan(percentile([], 50))


@pytest.mark.parametrize(
    ("cpu_seconds", "xrs", "window_seconds", "expected"),
    [
        # 64 XRs for 150 s is 64 * 150 / 3600 = 2.666... XR-hours.
        (8.0, 64, 150.0, 3.0),
        (36.0, 1, 3600.0, 36.0),
        (0.0, 10, 60.0, 0.0),
        (1.0, 2, 1800.0, 1.0),
    ],
)
def test_cpu_per_converged_xr_hour(
    cpu_seconds: float, xrs: int, window_seconds: float, expected: float
) -> None:
    assert per_xr_hour(cpu_seconds, xrs, window_seconds) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(("xrs", "window_seconds"), [(0, 150.0), (64, 0.0)])
def test_cpu_per_xr_hour_without_xrs_or_time_is_nan(xrs: int, window_seconds: float) -> None:
    assert math.isnan(per_xr_hour(1.0, xrs, window_seconds))


def test_table_pads_every_column_to_its_widest_cell() -> None:
    assert table(["a", "bb"], [["ccc", "d"], ["e", "f"]]) == (
        "| a   | bb |\n|-----|----|\n| ccc | d  |\n| e   | f  |"
    )


def _kind(ready: tuple[float, ...], created: int = 4) -> KindFigures:
    return KindFigures(
        kind="CivoCluster",
        created=created,
        ready_seconds=ready,
        expected_calls=1,
        reconciles=8,
        calls=8,
        memoised=8,
        as_expected=4,
        without_reconcile=0,
        real_changes=0,
        breaker_events=2,
        breaker_opened=3,
    )


@pytest.mark.parametrize(
    ("ready", "expected"),
    [
        ((40.0, 10.0, 30.0, 20.0), ["CivoCluster", "4 / 4", "20.0", "40.0", "40.0"]),
        ((12.5,), ["CivoCluster", "1 / 4", "12.5", "12.5", "12.5"]),
        ((), ["CivoCluster", "0 / 4", "n/a", "n/a", "n/a"]),
    ],
)
def test_ready_row(ready: tuple[float, ...], expected: list[str]) -> None:
    assert ready_row(_kind(ready)) == expected


def test_cost_rows_share_only_the_control_plane() -> None:
    costs = [
        Cost("function", 1, 1.0, 60 * MIB, 70 * MIB),
        Cost("Crossplane", 1, 3.0, 100 * MIB, 120 * MIB),
        Cost("kube-apiserver of each fake Civo cluster", 2, 5.0, 400 * MIB, 500 * MIB, False),
    ]
    # 4 XRs over 1800 s: 2 XR-hours.
    assert cost_rows(costs, 4, 1800.0) == [
        ["function", "1", "1.00", "0.50", "25.0 %", "60", "70"],
        ["Crossplane", "1", "3.00", "1.50", "75.0 %", "100", "120"],
        ["kube-apiserver of each fake Civo cluster", "2", "5.00", "2.50", "-", "400", "500"],
        ["control plane (rows with a share)", "2", "4.00", "2.00", "100.0 %", "160", ""],
    ]


def test_per_process_lines_average_rows_of_several_processes() -> None:
    costs = [
        Cost("function", 1, 1.0, 60 * MIB, 70 * MIB),
        Cost("kube-apiserver of each fake Civo cluster", 4, 8.0, 800 * MIB, 1000 * MIB, False),
    ]
    # 8 CPU s over 4 processes in 1800 s: 2 s each per half hour, 4 s per hour.
    assert per_process(costs, 1800.0) == [
        "kube-apiserver of each fake Civo cluster: 4 processes, each 200 MiB RSS (peak 250 MiB) "
        "and 4.0 CPU s per hour on average."
    ]


def test_bring_up_rows_give_cpu_per_xr_and_cores_busy() -> None:
    costs = [Cost("Crossplane", 1, 120.0, 100 * MIB, 150 * MIB)]
    # 120 CPU s for 64 XRs over 300 s: 1.88 s per XR, 0.40 cores busy on average.
    assert bring_up_rows(costs, 64, 300.0) == [["Crossplane", "1", "120.0", "1.88", "0.40", "150"]]


@pytest.mark.parametrize(
    ("costs", "expected"),
    [
        (
            [
                Cost("function", 1, 5.0, MIB, MIB),
                Cost("kube-apiserver", 1, 150.0, MIB, MIB),
                Cost("Crossplane", 1, 45.0, MIB, MIB),
            ],
            "Of the 200 CPU s every process above spent in bring-up, the function spent 2.5 %; "
            "the largest parts were kube-apiserver (75.0 %) and Crossplane (22.5 %).",
        ),
        ([], "No CPU measured during bring-up."),
    ],
)
def test_bring_up_shares(costs: list[Cost], expected: str) -> None:
    assert bring_up_shares(costs) == expected


def _run() -> Run:
    return Run(
        command="FLEET_SIZE=2 make fleet",
        date="2026-12-02 08:30 UTC",
        machine={"cores": "2"},
        versions={"Crossplane": "v2.4.0"},
        size=2,
        civo_autoscaled=2,
        reconcile_rate=100,
        window_seconds=1800.0,
        phases=[("control plane up", 60.0), ("idle window", 1800.0)],
        kinds=[_kind((10.0, 20.0), created=2), _kind((30.0, 40.0), created=2)],
        costs=[Cost("function", 1, 2.0, 64 * MIB, 65 * MIB), Cost("etcd", 1, 6.0, MIB, MIB)],
        memo=Memo(metric_calls=8, metric_hits=8, log_calls=8, log_hits=8),
        crossplane_metrics=[("circuit_breaker_opens_total", 3.0, 0.0)],
        errors=[],
        deletion=["Complete: every XR and everything it composed gone in 42 s."],
        notes=["a note"],
        work_dir="fic-fleet-x",
        elapsed_seconds=1900.0,
        bring_up_seconds=300.0,
        problems_in_window=0,
    )


@pytest.mark.parametrize(
    "row",
    [
        "| total, from the start to this report | 1900.0  |",
        "| circuit_breaker_opens_total | 3                                 | 0           |",
        "| function                          | 1         | 2.00            | 1.00              "
        "| 25.0 %                 | 64            | 65           |",
    ],
)
def test_render_tables(row: str) -> None:
    assert row in render(_run()).splitlines()


def _prose(text: str) -> str:
    """Text as one line: the report wraps its prose at 100 columns."""
    return " ".join(text.split())


@pytest.mark.parametrize(
    "said",
    [
        "Generated by `FLEET_SIZE=2 make fleet` (`hack/fleet/`), 2026-12-02 08:30 UTC. How the "
        "figures are measured, and what they are not, is in the notes at the end.",
        '- From the function\'s metrics (`inference_clusters_memo_answers_total{outcome="hit"}` '
        "over `inference_clusters_calls_total`, scraped at the window's start and end): **8 of 8 "
        "calls** answered by the memo (100.0 %).",
        "- The function's log over the same span: 8 of 8 calls memoised: the same.",
        "## Errors - none seen ##",
        "Function RSS at the window's end: **64 MiB** (peak 65 MiB) for 4 XRs.",
        "- Complete: every XR and everything it composed gone in 42 s.",
        # 2 CPU s over 4 XRs x 0.5 h = 1.00 s per XR-hour = 0.278 cores per 1 000 XRs.
        "- **CPU seconds per converged XR-hour** is what one converged XR costs a process in an "
        "hour of doing nothing but staying converged (Crossplane polls each XR about once a "
        "minute). Divide by 3600 for cores per XR: the function's 1.00 s per XR-hour is 0.278 "
        "cores per 1 000 converged XRs; the whole control plane's 4.00 s is 1.111 cores per "
        "1 000.",
        "- **Share** is each process's part of the control plane's CPU in the window: the "
        "function's 25.0 % is what",
        "- a note",
        "- Crossplane core: `--max-reconcile-rate=100` (each controller's reconcile workers; "
        "Crossplane's default; $FLEET_RECONCILE_RATE or --reconcile-rate sets it)",
        "- 4 of 4 XRs Ready in 300 s; time to Ready p90 CivoCluster 20 s, CivoCluster 40 s.",
        "- Idle window: CivoCluster 1.00 calls per reconcile, CivoCluster 1.00 calls per "
        "reconcile; memo answered 100.0 % of calls; 0 changes.",
        "- Function: 1.00 CPU s per converged XR-hour, 25.0 % of the control plane's CPU, 64 MiB "
        "RSS.",
        "- Problems in the idle window: 0; 0 kinds listed under Errors for the whole run "
        "(bring-up has its ordering races). Deletion: Complete: every XR and everything it "
        "composed gone in 42 s.",
    ],
)
def test_render_says(said: str) -> None:
    assert said in _prose(render(_run()))


def test_render_says_when_crossplane_ran_off_its_default_rate() -> None:
    run = _run()
    run.reconcile_rate = 10
    assert (
        "- Crossplane core: `--max-reconcile-rate=10` (each controller's reconcile workers; "
        "Crossplane's default is 100; $FLEET_RECONCILE_RATE or --reconcile-rate sets it)"
    ) in _prose(render(run))


def test_render_says_when_the_log_disagrees_with_the_metrics() -> None:
    run = _run()
    run.memo = Memo(metric_calls=9, metric_hits=8, log_calls=8, log_hits=8)
    assert "8 of 8 calls memoised: DIFFERENT from the metrics." in _prose(render(run))


def test_every_prose_line_fits_in_100_columns() -> None:
    rendered = render(_run()).splitlines()
    assert [line for line in rendered if len(line) > 100 and not line.startswith("|")] == []
