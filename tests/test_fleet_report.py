"""The arithmetic and rendering of bench/fleet.md (hack/fleet/report.py), without a control plane:
nearest-rank percentiles, CPU per converged XR-hour, the function's CPU per call in each phase,
and the report's rows."""

from __future__ import annotations

import math

import pytest

from hack.fleet.report import (
    BRING_UP,
    IDLE_WINDOW,
    UPKEEP,
    BenchConcurrent,
    Cost,
    FunctionCounters,
    KindFigures,
    Memo,
    PerCall,
    Run,
    cost_rows,
    per_call,
    per_call_comparison,
    per_call_method,
    per_call_row,
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


def test_per_call_is_the_counters_difference_beside_the_function_row() -> None:
    costs = [Cost("Crossplane", 1, 30.0, MIB, MIB), Cost("function", 1, 4.5, MIB, MIB)]
    assert per_call(
        BRING_UP, 200.0, FunctionCounters(12, 2, 0.25), FunctionCounters(1512, 302, 30.25), costs
    ) == PerCall(BRING_UP, 200.0, 1500, 300, 4.5, 30.0, machine_cpu_seconds=34.5)


def test_per_call_without_a_function_row_has_no_cpu() -> None:
    found = per_call(
        IDLE_WINDOW, 150.0, FunctionCounters(0, 0, 0.0), FunctionCounters(5, 5, 0.01), []
    )
    assert math.isnan(found.cpu_seconds)


# Bring-up: 1 500 calls, 300 of them hits, 4.5 CPU s in 200 s, the calls 1.5 s in the function,
# every process measured 380 CPU s (1.9 cores).
BRING_UP_CALLS = PerCall(BRING_UP, 200.0, 1500, 300, 4.5, 1.5, 380.0)
# The idle window: 150 calls, every one a hit, 0.9 CPU s in 150 s, the calls 15 ms in it, every
# process measured 225 CPU s (1.5 cores).
IDLE_CALLS = PerCall(IDLE_WINDOW, 150.0, 150, 150, 0.9, 0.015, 225.0)
# Before the first XR: no call, 0.03 CPU s in 30 s (1 ms a second), every process 15 CPU s.
UPKEEP_CALLS = PerCall(UPKEEP, 30.0, 0, 0, 0.03, 0.0, 15.0)
BENCH = BenchConcurrent(
    date="2026-12-03",
    callers=32,
    fleet=1024,
    cpu_us_per_call={"CoreWeaveCluster": 2000, "CivoCluster": 1200},
    serial_cpu_us_per_call={"CoreWeaveCluster": 2500, "CivoCluster": 1500},
    serial_fleet=1024,
)
# 1 500 calls in 200 s, 150 in 150 s.
AT_RATES = (
    "Bring-up here averaged 7.50 calls a second and the idle window 1.00, one call at a time as "
    "in the bench's serial phase, where a call cost 2500 µs (CoreWeaveCluster) and 1500 µs "
    "(CivoCluster) over 1024 XRs: the idle window "
)


@pytest.mark.parametrize(
    ("figures", "expected"),
    [
        # 4.5 s / 1 500 calls = 3 000 µs of CPU; 7.5 calls a second; 1.5 s in calls is 1 000
        # µs per call and 0.75 % of 200 s.
        (
            BRING_UP_CALLS,
            [
                "bring-up",
                "200",
                "1500",
                "300",
                "20.0 %",
                "4.50",
                "3000",
                "n/a",
                "7.50",
                "1000",
                "0.75 %",
            ],
        ),
        # 0.015 s in 150 calls is 100 µs each, 0.01 % of 150 s.
        (
            IDLE_CALLS,
            [
                "idle window",
                "150",
                "150",
                "150",
                "100.0 %",
                "0.90",
                "6000",
                "n/a",
                "1.00",
                "100",
                "0.01 %",
            ],
        ),
        (
            PerCall(IDLE_WINDOW, 150.0, 0, 0, 0.2, 0.0, 30.0),
            ["idle window", "150", "0", "0", "n/a", "0.20", "n/a", "n/a", "0.00", "n/a", "0.00 %"],
        ),
    ],
)
def test_per_call_row(figures: PerCall, expected: list[str]) -> None:
    assert per_call_row(figures) == expected


def test_per_call_row_beyond_the_upkeep() -> None:
    # (0.9 CPU s - 1 ms a second x 150 s) / 150 calls = 5 000 µs; the upkeep row itself has none.
    assert per_call_row(IDLE_CALLS, 0.001)[6:8] == ["6000", "5000"]
    assert per_call_row(UPKEEP_CALLS, 0.001)[6:8] == ["n/a", "n/a"]


def _prose(text: str) -> str:
    """Text as one line: the report wraps its prose at 100 columns."""
    return " ".join(text.split())


METHOD = "How many calls Crossplane had in flight at once is not measured. Crossplane ran with "
AT_ONCE = "every XR of a kind can reconcile, and call the function, at the same time."


@pytest.mark.parametrize(
    ("rate", "size", "expected"),
    [
        (100, 32, f"`--max-reconcile-rate=100`: with 32 XRs of each kind, {AT_ONCE}"),
        (32, 32, f"`--max-reconcile-rate=32`: with 32 XRs of each kind, {AT_ONCE}"),
        (
            10,
            32,
            "`--max-reconcile-rate=10`: with 32 XRs of each kind, at most 10 of the 32 XRs of a "
            "kind reconcile at the same time.",
        ),
    ],
)
def test_per_call_method_says_how_many_xrs_reconcile_at_once(
    rate: int, size: int, expected: str
) -> None:
    assert per_call_method(rate, size) == METHOD + expected


BESIDE_THE_WINDOW = (
    "Bring-up cost the function 3000 µs of CPU per call (20.0 % memo hits), 0.5 times the idle "
    "window's 6000 µs (100.0 % memo hits). A hit replays the XR's previous answer where a miss "
    "composes afresh, and the window's figure also carries what the process spends between "
    "calls (its gRPC server, its metrics) spread over 1.00 calls a second."
)
BESIDE_THE_BENCH = (
    "The bench's heaviest concurrent load (32 callers over a fleet of 1024 XRs, requests with "
    "metadata noise, every call a memo hit; [`bench/results.md`](results.md) of 2026-12-03), the "
    "figure docs/operations.md sizes replicas with, cost the function 2000 µs (CoreWeaveCluster) "
    "and 1200 µs (CivoCluster) per call: "
)
NOT_THE_BENCH = (
    "The function here also runs at --debug, logging a line per call (the calls per reconcile "
    "above are counted from them), which the bench's does not, and shares the machine's 2 cores "
    "with every process the CPU tables list: together they kept "
)


@pytest.mark.parametrize(
    ("phases", "bench", "expected"),
    [
        (
            [BRING_UP_CALLS, IDLE_CALLS],
            BENCH,
            # 3 000 / 2 000 = 1.5 and 3 000 / 1 200 = 2.5; 6 000 / 2 000 = 3.0 and / 1 200 = 5.0.
            f"{BESIDE_THE_WINDOW} {BESIDE_THE_BENCH}bring-up here cost 1.5\u20132.5 times that, "
            f"the idle window 3.0\u20135.0 times. {AT_RATES}cost 2.4\u20134.0 times that. "
            f"{NOT_THE_BENCH}1.9 of them busy on average in bring-up and 1.5 in the idle window.",
        ),
        (
            [BRING_UP_CALLS],
            BenchConcurrent("2026-12-03", 32, 1024, {"CoreWeaveCluster": 3000}),
            "Bring-up cost the function 3000 µs of CPU per call (20.0 % memo hits); the run had no "
            "idle window to set it beside. The bench's heaviest concurrent load (32 callers over a "
            "fleet of 1024 XRs, requests with metadata noise, every call a memo hit; "
            "[`bench/results.md`](results.md) of 2026-12-03), the figure docs/operations.md sizes "
            "replicas with, cost the function 3000 µs (CoreWeaveCluster) per call: bring-up here "
            f"cost 1.0 times that. {NOT_THE_BENCH}1.9 of them busy on average in bring-up.",
        ),
        (
            [BRING_UP_CALLS, IDLE_CALLS],
            None,
            f"{BESIDE_THE_WINDOW} bench/results.md could not be read, so there is no bench figure "
            f"beside these (`make bench` writes it). {NOT_THE_BENCH}1.9 of them busy on average "
            "in bring-up and 1.5 in the idle window.",
        ),
        (
            [UPKEEP_CALLS, BRING_UP_CALLS, IDLE_CALLS],
            BENCH,
            # Beyond 1 ms a second: (4.5 - 0.2) / 1 500 = 2 867 µs and (0.9 - 0.15) / 150 = 5 000
            # µs; over the bench, 1.4-2.4 and 2.5-4.2 times.
            f"{BESIDE_THE_WINDOW} With no XR the process used 1.00 ms of CPU a second (measured "
            "for 30 s before the first XR: its gRPC server, its metrics and health endpoints, the "
            "interpreter); beyond that upkeep a call cost 2867 µs in bring-up and 5000 µs in the "
            f"idle window. {BESIDE_THE_BENCH}bring-up here cost 1.5\u20132.5 times that, the idle "
            "window 3.0\u20135.0 times, and beyond the upkeep 1.4\u20132.4 times in bring-up, "
            f"2.5\u20134.2 times in the idle window. {AT_RATES}beyond its upkeep cost "
            f"2.0\u20133.3 times that. {NOT_THE_BENCH}0.5 of them busy on average "
            "with no XRs and 1.9 in bring-up and 1.5 in the idle window.",
        ),
        ([], BENCH, "No per-call figures: the run stopped before the fleet was created."),
    ],
)
def test_per_call_comparison(
    phases: list[PerCall], bench: BenchConcurrent | None, expected: str
) -> None:
    assert per_call_comparison(phases, bench, "2") == expected


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
        kinds=[_kind((10.0, 20.0), created=2), _kind((30.0, 40.0), created=2)],
        costs=[Cost("function", 1, 2.0, 64 * MIB, 65 * MIB), Cost("etcd", 1, 6.0, MIB, MIB)],
        memo=Memo(metric_calls=8, metric_hits=8, log_calls=8, log_hits=8),
        deletion=["Complete: every XR and everything it composed gone in 42 s."],
        notes=["a note"],
        work_dir="fic-fleet-x",
        bring_up_seconds=300.0,
        problems_in_window=0,
        per_call=[UPKEEP_CALLS, BRING_UP_CALLS, IDLE_CALLS],
        bench=BENCH,
    )


@pytest.mark.parametrize(
    "row",
    [
        "| function                          | 1         | 2.00            | 1.00              "
        "| 25.0 %                 | 64            | 65           |",
        "| phase               | seconds | calls | memo hits | hit share | function CPU s "
        "| CPU µs per call | beyond upkeep, µs per call | calls per second | in calls, µs per call "
        "| in calls, share of the phase |",
        # (4.5 CPU s - 1 ms a second x 200 s) / 1 500 calls = 2 867 µs beyond the upkeep.
        "| bring-up            | 200     | 1500  | 300       | 20.0 %    | 4.50           "
        "| 3000            | 2867                       | 7.50             | 1000                  "
        "| 0.75 %                       |",
        "| no XRs yet (upkeep) | 30      | 0     | 0         | n/a       | 0.03           "
        "| n/a             | n/a                        | 0.00             | n/a                   "
        "| 0.00 %                       |",
    ],
)
def test_render_tables(row: str) -> None:
    assert row in render(_run()).splitlines()


@pytest.mark.parametrize(
    "said",
    [
        "Generated by `FLEET_SIZE=2 make fleet` (`hack/fleet/`), 2026-12-02 08:30 UTC. How the "
        "figures are measured, and what they are not, is in bench/README.md (*The fleet*) and "
        "the notes at the end.",
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
        "- Function CPU per call: bring-up 3000 µs (20.0 % memo hits, 7.50 calls a second); idle "
        "window 6000 µs (100.0 % memo hits, 1.00 calls a second).",
        "## The function per call: bring-up beside the idle window",
        METHOD + "`--max-reconcile-rate=100`: with 2 XRs of each kind",
        BESIDE_THE_WINDOW,
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
