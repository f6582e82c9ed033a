"""bench/fleet.md from a run's figures: pure arithmetic and rendering, no I/O."""

from __future__ import annotations

import dataclasses
import math
import textwrap
from collections.abc import Callable, Sequence

SECONDS_PER_HOUR = 3600.0
MIB = 1024 * 1024
# The repository's Markdown wraps prose at 100 columns; tables stay one row per line.
WIDTH = 100
MICROSECONDS_PER_SECOND = 1_000_000
# Crossplane core's own default for --max-reconcile-rate (v2.4.0, cmd/crossplane/core/core.go):
# what a control plane runs unless its operator sets the flag.
CROSSPLANE_RECONCILE_RATE = 100
# The docs' en dash (as an escape: ruff flags the character in code).
DASH = "\u2013"
# The phases PerCall rows are named by, as the report's tables and prose name them.
BRING_UP = "bring-up"
IDLE_WINDOW = "idle window"
# Each phase as the prose says when something happened in it.
# Before the first XR: the function process with no calls, what it costs to keep running.
UPKEEP = "no XRs yet (upkeep)"
IN_PHASE = {BRING_UP: "in bring-up", IDLE_WINDOW: "in the idle window", UPKEEP: "with no XRs"}


@dataclasses.dataclass(frozen=True)
class KindFigures:
    """One XR kind of the fleet: bring-up, and the idle window summed over its XRs."""

    kind: str
    created: int
    # Creation to Ready=True, of each XR that became Ready.
    ready_seconds: tuple[float, ...]
    # The engine's calls per converged reconcile for this kind (harness/e2e/engine.py).
    expected_calls: int
    # The idle window's sums below: none for a run that never reached it.
    reconciles: int = 0
    calls: int = 0
    memoised: int = 0
    # XRs whose every reconcile in the window took exactly expected_calls.
    as_expected: int = 0
    # XRs no reconcile of which began in the window.
    without_reconcile: int = 0
    # Watch events in the window that changed something (not only the Responsive condition).
    real_changes: int = 0


@dataclasses.dataclass(frozen=True)
class Cost:
    """What the processes of one role used: CPU over the idle window, memory at its end."""

    role: str
    processes: int
    cpu_seconds: float
    rss_bytes: int
    peak_rss_bytes: int
    # Part of the control plane a user runs (not a fake cloud's cluster, not the harness).
    control_plane: bool = True


@dataclasses.dataclass(frozen=True)
class Memo:
    """Calls and memo hits in the idle window, from the function's metrics (scraped at the
    window's start and end) and from its log over the same span."""

    metric_calls: int
    metric_hits: int
    log_calls: int
    log_hits: int

    @property
    def agrees(self) -> bool:
        return (self.metric_calls, self.metric_hits) == (self.log_calls, self.log_hits)


@dataclasses.dataclass(frozen=True)
class FunctionCounters:
    """The function's own counters at one instant (its metrics endpoint)."""

    calls: int
    memo_hits: int
    # inference_clusters_call_seconds_sum: the seconds every call so far spent in the function.
    call_seconds: float


@dataclasses.dataclass(frozen=True)
class PerCall:
    """The function's work in one phase of the run: calls and memo hits from its counters read
    at the phase's edges, CPU from /proc over the same span."""

    phase: str
    seconds: float
    calls: int
    memo_hits: int
    cpu_seconds: float
    # Seconds the phase's calls spent in the function, from the decoded request to the
    # serialized answer, summed. It runs them one at a time on its event loop, so over `seconds`
    # this is how busy composing kept it.
    call_seconds: float
    # CPU every process the cost tables list used over the phase, the function's included: what
    # its calls shared the machine's cores with.
    machine_cpu_seconds: float


def per_call(
    phase: str,
    seconds: float,
    start: FunctionCounters,
    end: FunctionCounters,
    costs: Sequence[Cost],
) -> PerCall:
    """The function's calls between two readings of its counters, beside the CPU its row of
    `costs` (taken over the same span) used, and all the rows together."""
    cpu = next((c.cpu_seconds for c in costs if c.role == "function"), math.nan)
    return PerCall(
        phase=phase,
        seconds=seconds,
        calls=end.calls - start.calls,
        memo_hits=end.memo_hits - start.memo_hits,
        cpu_seconds=cpu,
        call_seconds=end.call_seconds - start.call_seconds,
        machine_cpu_seconds=sum(c.cpu_seconds for c in costs),
    )


@dataclasses.dataclass(frozen=True)
class BenchConcurrent:
    """The bench's heaviest concurrent load, whose CPU per call docs/operations.md sizes
    replicas with (bench/results.md, read as hack/bench/docs.py reads it)."""

    date: str
    callers: int
    fleet: int
    # The function's server CPU µs per call, by XR kind, for requests with metadata noise.
    cpu_us_per_call: dict[str, int]
    # The same, called one at a time (the serial phase) over its largest fleet, serial_fleet: a
    # converged fleet's calls at rest come about that way.
    serial_cpu_us_per_call: dict[str, int] = dataclasses.field(default_factory=dict)
    serial_fleet: int = 0


@dataclasses.dataclass
class Run:
    command: str
    date: str
    machine: dict[str, str]
    versions: dict[str, str]
    size: int
    civo_autoscaled: int
    # Crossplane core's --max-reconcile-rate: each controller's reconcile workers.
    reconcile_rate: int
    window_seconds: float
    work_dir: str
    # What the run measured and saw, filled in as it goes.
    kinds: list[KindFigures] = dataclasses.field(default_factory=list)
    costs: list[Cost] = dataclasses.field(default_factory=list)
    memo: Memo | None = None
    errors: list[str] = dataclasses.field(default_factory=list)
    deletion: list[str] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)
    # From the first XR sent to the whole fleet Ready (or the converge timeout).
    bring_up_seconds: float = math.nan
    # Problems counted in the idle window (changes, Warning events, Synced=False, ERROR lines,
    # FATAL answers, exits): a converged fleet has none. None: the run had no window.
    problems_in_window: int | None = None
    # Each XR whose reconciles in the window did not all take the engine's figure, and how.
    off_figure: list[str] = dataclasses.field(default_factory=list)
    # The function's calls and CPU in bring-up and in the idle window, as far as the run got.
    per_call: list[PerCall] = dataclasses.field(default_factory=list)
    # What bench/results.md measured under concurrent callers; None when it could not be read.
    bench: BenchConcurrent | None = None


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile: the smallest value with at least q % of the values at or below
    it (NaN without values), so every figure is one an XR really took."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def per_xr_hour(cpu_seconds: float, xrs: int, window_seconds: float) -> float:
    """CPU seconds per converged XR per hour: what the window cost, per XR, scaled to an hour."""
    if xrs <= 0 or window_seconds <= 0:
        return math.nan
    return cpu_seconds / (xrs * window_seconds / SECONDS_PER_HOUR)


def ratio(part: float, whole: float) -> float:
    return part / whole if whole else math.nan


def fmt(value: float, digits: int = 1) -> str:
    return "n/a" if math.isnan(value) else f"{value:.{digits}f}"


def mib(size: int) -> str:
    return f"{size / MIB:.0f}"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)
    ]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |"
    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    body = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in rows
    ]
    return "\n".join([line, rule, *body])


# The tables with a row per kind: each column's header, and its cell for one kind.
READY_COLUMNS: tuple[tuple[str, Callable[[KindFigures], str]], ...] = (
    ("kind", lambda k: k.kind),
    ("Ready / created", lambda k: f"{len(k.ready_seconds)} / {k.created}"),
    ("p50 s", lambda k: fmt(percentile(k.ready_seconds, 50))),
    ("p90 s", lambda k: fmt(percentile(k.ready_seconds, 90))),
    ("max s", lambda k: fmt(max(k.ready_seconds, default=math.nan))),
)
CALLS_COLUMNS: tuple[tuple[str, Callable[[KindFigures], str]], ...] = (
    ("kind", lambda k: k.kind),
    ("reconciles", lambda k: str(k.reconciles)),
    ("calls", lambda k: str(k.calls)),
    ("calls / reconcile", lambda k: fmt(ratio(k.calls, k.reconciles), 2)),
    ("engine's figure", lambda k: str(k.expected_calls)),
    ("XRs at the figure", lambda k: f"{k.as_expected} / {k.created}"),
    ("memoised", lambda k: f"{k.memoised} / {k.calls}"),
    ("changes", lambda k: str(k.real_changes)),
)


def kinds_table(
    columns: Sequence[tuple[str, Callable[[KindFigures], str]]], kinds: Sequence[KindFigures]
) -> str:
    return table(
        [header for header, _ in columns], [[cell(k) for _, cell in columns] for k in kinds]
    )


def ready_row(figures: KindFigures) -> list[str]:
    return [cell(figures) for _, cell in READY_COLUMNS]


COST_HEADER = (
    "process",
    "processes",
    "CPU s in window",
    "CPU s per XR-hour",
    "share of control plane",
    "RSS MiB (end)",
    "peak RSS MiB",
)


def cost_rows(costs: Sequence[Cost], xrs: int, window_seconds: float) -> list[list[str]]:
    plane = sum(c.cpu_seconds for c in costs if c.control_plane)
    rows = []
    for cost in costs:
        share = fmt(100 * ratio(cost.cpu_seconds, plane)) + " %" if cost.control_plane else "-"
        rows.append(
            [
                cost.role,
                str(cost.processes),
                fmt(cost.cpu_seconds, 2),
                fmt(per_xr_hour(cost.cpu_seconds, xrs, window_seconds), 2),
                share,
                mib(cost.rss_bytes),
                mib(cost.peak_rss_bytes),
            ]
        )
    rows.append(
        [
            "control plane (rows with a share)",
            str(sum(c.processes for c in costs if c.control_plane)),
            fmt(plane, 2),
            fmt(per_xr_hour(plane, xrs, window_seconds), 2),
            "100.0 %",
            mib(sum(c.rss_bytes for c in costs if c.control_plane)),
            "",
        ]
    )
    return rows


def wrap(text: str, bullet: bool = False) -> str:
    """Prose at WIDTH columns; a bullet's continuation lines indented under its text."""
    return textwrap.fill(
        f"- {text}" if bullet else text,
        width=WIDTH,
        subsequent_indent="  " if bullet else "",
        break_long_words=False,
        break_on_hyphens=False,
    )


def _bullets(lines: Sequence[str], empty: str) -> str:
    return "\n".join(wrap(line, bullet=True) for line in (lines or [empty]))


def _function_cost(run: Run) -> Cost | None:
    return next((c for c in run.costs if c.role == "function"), None)


def sizing(run: Run) -> str:
    """How to read the CPU figures when sizing a control plane, with this run's numbers."""
    xrs = sum(k.created for k in run.kinds)
    function = _function_cost(run)
    plane = sum(c.cpu_seconds for c in run.costs if c.control_plane)
    if function is None or not xrs:
        return _bullets([], "(no CPU figures: the run did not reach the idle window)")
    per_hour = per_xr_hour(function.cpu_seconds, xrs, run.window_seconds)
    plane_per_hour = per_xr_hour(plane, xrs, run.window_seconds)
    cores_per_thousand = per_hour * 1000 / SECONDS_PER_HOUR
    plane_cores_per_thousand = plane_per_hour * 1000 / SECONDS_PER_HOUR
    return _bullets(
        [
            f"**CPU seconds per converged XR-hour** is what one converged XR costs a process in "
            f"an hour of doing nothing but staying converged (Crossplane polls each XR about "
            f"once a minute). Divide by 3600 for cores per XR: the function's "
            f"{fmt(per_hour, 2)} s per XR-hour is {fmt(cores_per_thousand, 3)} cores per 1 000 "
            f"converged XRs; the whole control plane's {fmt(plane_per_hour, 2)} s is "
            f"{fmt(plane_cores_per_thousand, 3)} cores per 1 000.",
            f"**Share** is each process's part of the control plane's CPU in the window: the "
            f"function's {fmt(100 * ratio(function.cpu_seconds, plane))} % is what composing "
            f"with this function costs beside Crossplane, the providers and the API server.",
        ],
        "",
    )


def _memo_lines(memo: Memo | None) -> list[str]:
    if memo is None:
        return ["(no idle window: the fleet did not converge)"]
    return [
        f'From the function\'s metrics (`inference_clusters_memo_answers_total{{outcome="hit"}}` '
        f"over `inference_clusters_calls_total`, scraped at the window's start and end): "
        f"**{memo.metric_hits} of {memo.metric_calls} calls** answered by the memo "
        f"({fmt(100 * ratio(memo.metric_hits, memo.metric_calls))} %).",
        f"The function's log over the same span: {memo.log_hits} of {memo.log_calls} calls "
        f"memoised: {'the same' if memo.agrees else 'DIFFERENT from the metrics'}.",
    ]


def _percent(part: float, whole: float, digits: int = 1) -> str:
    share = 100 * ratio(part, whole)
    return "n/a" if math.isnan(share) else f"{share:.{digits}f} %"


def _us_per_call(figures: PerCall) -> float:
    return MICROSECONDS_PER_SECOND * ratio(figures.cpu_seconds, figures.calls)


def upkeep_per_second(phases: Sequence[PerCall]) -> float:
    """The function's CPU seconds per second with no calls (NaN: not measured)."""
    found = next((p for p in phases if p.phase == UPKEEP), None)
    return ratio(found.cpu_seconds, found.seconds) if found is not None else math.nan


def _above_upkeep(figures: PerCall, upkeep: float) -> float:
    """CPU µs per call beyond what the process spends anyway over the phase's seconds."""
    return MICROSECONDS_PER_SECOND * ratio(
        figures.cpu_seconds - upkeep * figures.seconds, figures.calls
    )


# The per-call table: each column's header, and its cell for one phase given the upkeep (the
# function's CPU seconds per second with no calls).
PER_CALL_COLUMNS: tuple[tuple[str, Callable[[PerCall, float], str]], ...] = (
    ("phase", lambda p, _: p.phase),
    ("seconds", lambda p, _: fmt(p.seconds, 0)),
    ("calls", lambda p, _: str(p.calls)),
    ("memo hits", lambda p, _: str(p.memo_hits)),
    ("hit share", lambda p, _: _percent(p.memo_hits, p.calls)),
    ("function CPU s", lambda p, _: fmt(p.cpu_seconds, 2)),
    ("CPU µs per call", lambda p, _: fmt(_us_per_call(p), 0)),
    ("beyond upkeep, µs per call", lambda p, upkeep: fmt(_above_upkeep(p, upkeep), 0)),
    ("calls per second", lambda p, _: fmt(ratio(p.calls, p.seconds), 2)),
    (
        "in calls, µs per call",
        lambda p, _: fmt(MICROSECONDS_PER_SECOND * ratio(p.call_seconds, p.calls), 0),
    ),
    # A converged call spends about 50 µs in the function: its share of a quiet window is
    # hundredths of a percent.
    ("in calls, share of the phase", lambda p, _: _percent(p.call_seconds, p.seconds, 2)),
)


def per_call_row(figures: PerCall, upkeep: float = math.nan) -> list[str]:
    return [cell(figures, upkeep) for _, cell in PER_CALL_COLUMNS]


def per_call_method(reconcile_rate: int, size: int) -> str:
    """How many XRs of a kind Crossplane could reconcile, and so call the function, at once."""
    at_once = (
        "every XR of a kind can reconcile, and call the function, at the same time"
        if reconcile_rate >= size
        else f"at most {reconcile_rate} of the {size} XRs of a kind reconcile at the same time"
    )
    return (
        "How many calls Crossplane had in flight at once is not measured. Crossplane ran with "
        f"`--max-reconcile-rate={reconcile_rate}`: with {size} XRs of each kind, {at_once}."
    )


def _times(us_per_call: float, by_kind: dict[str, int]) -> str:
    """A figure over the bench's CPU per call by kind, as one ratio or the range over kinds."""
    ratios = sorted(ratio(us_per_call, us) for us in by_kind.values())
    if not ratios:
        return "n/a"
    low, high = fmt(ratios[0], 1), fmt(ratios[-1], 1)
    return f"{low} times" if low == high else f"{low}{DASH}{high} times"


def per_call_comparison(
    phases: Sequence[PerCall], bench: BenchConcurrent | None, cores: str
) -> str:
    """Bring-up's CPU per call beside the idle window's and the bench's concurrent figure, and
    what the function did here that the bench's does not."""
    by_phase = {p.phase: p for p in phases}
    bring_up, idle = by_phase.get(BRING_UP), by_phase.get(IDLE_WINDOW)
    if bring_up is None:
        return "No per-call figures: the run stopped before the fleet was created."
    during = _us_per_call(bring_up)
    said = f"Bring-up cost the function {fmt(during, 0)} µs of CPU per call " + (
        f"({_percent(bring_up.memo_hits, bring_up.calls)} memo hits)"
    )
    if idle is None:
        sentences = [f"{said}; the run had no idle window to set it beside."]
    else:
        resting = _us_per_call(idle)
        sentences = [
            f"{said}, {fmt(ratio(during, resting), 1)} times the idle window's "
            f"{fmt(resting, 0)} µs ({_percent(idle.memo_hits, idle.calls)} memo hits). A hit "
            "replays the XR's previous answer where a miss composes afresh, and the window's "
            "figure also carries what the process spends between calls (its gRPC server, its "
            f"metrics) spread over {fmt(ratio(idle.calls, idle.seconds), 2)} calls a second."
        ]
    upkeep = upkeep_per_second(phases)
    beyond = [p for p in (bring_up, idle) if p is not None]
    if not math.isnan(upkeep):
        measured = by_phase[UPKEEP]
        above = " and ".join(
            f"{fmt(_above_upkeep(p, upkeep), 0)} µs {IN_PHASE[p.phase]}" for p in beyond
        )
        sentences.append(
            f"With no XR the process used {fmt(upkeep * 1000, 2)} ms of CPU a second (measured "
            f"for {fmt(measured.seconds, 0)} s before the first XR: its gRPC server, its "
            "metrics and health endpoints, the interpreter); beyond that upkeep a call cost "
            f"{above}."
        )
    if bench is None:
        sentences.append(
            "bench/results.md could not be read, so there is no bench figure beside these "
            "(`make bench` writes it)."
        )
    else:
        cited = " and ".join(f"{us} µs ({kind})" for kind, us in bench.cpu_us_per_call.items())
        compared = f"bring-up here cost {_times(during, bench.cpu_us_per_call)} that"
        if idle is not None:
            compared += f", the idle window {_times(_us_per_call(idle), bench.cpu_us_per_call)}"
        if not math.isnan(upkeep):
            compared += ", and beyond the upkeep " + ", ".join(
                f"{_times(_above_upkeep(p, upkeep), bench.cpu_us_per_call)} {IN_PHASE[p.phase]}"
                for p in beyond
            )
        sentences.append(
            f"The bench's heaviest concurrent load ({bench.callers} callers over a fleet of "
            f"{bench.fleet} XRs, requests with metadata noise, every call a memo hit; "
            f"[`bench/results.md`](results.md) of {bench.date}), the figure docs/operations.md "
            f"sizes replicas with, cost the function {cited} per call: {compared}."
        )
        if idle is not None and bench.serial_cpu_us_per_call:
            serial = " and ".join(
                f"{us} µs ({kind})" for kind, us in bench.serial_cpu_us_per_call.items()
            )
            at_rest = _us_per_call(idle) if math.isnan(upkeep) else _above_upkeep(idle, upkeep)
            sentences.append(
                f"Bring-up here averaged {fmt(ratio(bring_up.calls, bring_up.seconds), 2)} calls "
                f"a second and the idle window {fmt(ratio(idle.calls, idle.seconds), 2)}, one "
                "call at a time as in the bench's serial phase, where a call cost "
                f"{serial} over {bench.serial_fleet} XRs: the idle window "
                + ("" if math.isnan(upkeep) else "beyond its upkeep ")
                + f"cost {_times(at_rest, bench.serial_cpu_us_per_call)} that."
            )
    first, *rest = (
        (fmt(ratio(p.machine_cpu_seconds, p.seconds), 1), IN_PHASE.get(p.phase, p.phase))
        for p in phases
    )
    busy = f"{first[0]} of them busy on average {first[1]}" + "".join(
        f" and {cores_busy} {when}" for cores_busy, when in rest
    )
    sentences.append(
        "The function here also runs at --debug, logging a line per call (the calls per "
        "reconcile above are counted from them), which the bench's does not, and shares the "
        "machine's "
        f"{cores} cores with every process the CPU tables list: together they kept {busy}."
    )
    return " ".join(sentences)


def headline(run: Run) -> list[str]:
    """The figures a reader wants first, one line each."""
    xrs = sum(k.created for k in run.kinds)
    ready = sum(len(k.ready_seconds) for k in run.kinds)
    lines = [
        f"{ready} of {xrs} XRs Ready in {fmt(run.bring_up_seconds, 0)} s; time to Ready p90 "
        + ", ".join(f"{k.kind} {fmt(percentile(k.ready_seconds, 90), 0)} s" for k in run.kinds)
        + "."
    ]
    if run.memo is not None:
        lines.append(
            "Idle window: "
            + ", ".join(
                f"{k.kind} {fmt(ratio(k.calls, k.reconciles), 2)} calls per reconcile"
                for k in run.kinds
            )
            + f"; memo answered {fmt(100 * ratio(run.memo.metric_hits, run.memo.metric_calls))} "
            f"% of calls; {sum(k.real_changes for k in run.kinds)} changes."
        )
    if run.per_call:
        lines.append(
            "Function CPU per call: "
            + "; ".join(
                f"{p.phase} {fmt(_us_per_call(p), 0)} µs ({_percent(p.memo_hits, p.calls)} memo "
                f"hits, {fmt(ratio(p.calls, p.seconds), 2)} calls a second)"
                for p in run.per_call
                if p.calls
            )
            + "."
        )
    function = _function_cost(run)
    plane = sum(c.cpu_seconds for c in run.costs if c.control_plane)
    if function is not None:
        lines.append(
            f"Function: {fmt(per_xr_hour(function.cpu_seconds, xrs, run.window_seconds), 2)} CPU "
            f"s per converged XR-hour, {fmt(100 * ratio(function.cpu_seconds, plane))} % of the "
            f"control plane's CPU, {mib(function.rss_bytes)} MiB RSS."
        )
    in_window = "no idle window" if run.problems_in_window is None else run.problems_in_window
    lines.append(
        f"Problems in the idle window: {in_window}; {len(run.errors)} kinds listed under Errors "
        "for the whole run (bring-up has its ordering races). Deletion: "
        + (run.deletion or ["not done"])[0]
    )
    return lines


def render(run: Run) -> str:
    xrs = sum(k.created for k in run.kinds)
    upkeep = upkeep_per_second(run.per_call)
    function = _function_cost(run)
    function_memory = (
        f"Function RSS at the window's end: **{mib(function.rss_bytes)} MiB** "
        f"(peak {mib(function.peak_rss_bytes)} MiB) for {xrs} XRs."
        if function is not None
        else "Function RSS: not measured (no idle window)."
    )
    blocks = [
        "# Fleet on a real control plane",
        wrap(
            f"Generated by `{run.command}` (`hack/fleet/`), {run.date}. How the figures are "
            "measured, and what they are not, is in bench/README.md (*The fleet*) and the notes "
            "at the end."
        ),
        _bullets(
            [
                f"Fleet: **N = {run.size}** CoreWeaveClusters and N CivoClusters ({xrs} XRs), "
                f"{run.civo_autoscaled} of the CivoClusters with the example's autoscaled pool "
                "(a cluster-autoscaler Release that provider-helm installs in that cluster).",
                "Machine: " + ", ".join(f"{k} {v}" for k, v in run.machine.items()),
                "Versions: " + ", ".join(f"{k} {v}" for k, v in run.versions.items()),
                f"Crossplane core: `--max-reconcile-rate={run.reconcile_rate}` (each "
                "controller's reconcile workers; "
                + (
                    "Crossplane's default"
                    if run.reconcile_rate == CROSSPLANE_RECONCILE_RATE
                    else f"Crossplane's default is {CROSSPLANE_RECONCILE_RATE}"
                )
                + "; $FLEET_RECONCILE_RATE or --reconcile-rate sets it)",
                f"Idle window: {run.window_seconds:.0f} s",
                f"Work folder (logs, watch-events.tsv; removed after a run that succeeds, "
                f"unless FLEET_KEEP=1): `{run.work_dir}`",
            ],
            "",
        ),
        "## Headline",
        _bullets(headline(run), ""),
        "## Time to Ready (creation to Ready=True, per XR)",
        kinds_table(READY_COLUMNS, run.kinds),
        "## Idle window: calls per converged reconcile",
        kinds_table(CALLS_COLUMNS, run.kinds),
        "XRs not at the figure, with their calls per reconcile:",
        _bullets(run.off_figure, "none"),
        "## Memo hit ratio in the idle window",
        _bullets(_memo_lines(run.memo), ""),
        "## Errors",
        _bullets(run.errors, "none seen"),
        "## CPU per converged XR-hour, and memory",
        table(COST_HEADER, cost_rows(run.costs, xrs, run.window_seconds)),
        wrap(function_memory),
        "## The function per call: bring-up beside the idle window",
        table(
            [header for header, _ in PER_CALL_COLUMNS],
            [per_call_row(p, upkeep) for p in run.per_call],
        ),
        wrap(per_call_method(run.reconcile_rate, run.size)),
        wrap(per_call_comparison(run.per_call, run.bench, run.machine.get("cores", "?"))),
        "## Deletion",
        _bullets(run.deletion, "not attempted"),
        "## How to read these figures when sizing a control plane",
        sizing(run),
        "## Notes: how it is measured, and what the harness adds",
        _bullets(run.notes, "none"),
    ]
    # A blank line between blocks, and one newline at the end.
    return "\n\n".join(blocks) + "\n"
