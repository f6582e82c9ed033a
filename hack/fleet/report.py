"""bench/fleet.md from a run's figures: pure arithmetic and rendering, no I/O."""

from __future__ import annotations

import dataclasses
import math
import textwrap
from collections.abc import Callable, Iterable, Sequence

from harness.e2e.operability import Counted

SECONDS_PER_HOUR = 3600.0
MIB = 1024 * 1024
# The repository's Markdown wraps prose at 100 columns; tables stay one row per line.
WIDTH = 100
# Crossplane core's own default for --max-reconcile-rate (v2.4.0, cmd/crossplane/core/core.go):
# what a control plane runs unless its operator sets the flag.
CROSSPLANE_RECONCILE_RATE = 100


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
    # Calls and memo hits in the idle window, from the function's metrics (scraped at the
    # window's start and end).
    memo: Counted | None = None
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

    @property
    def xrs(self) -> int:
        return sum(k.created for k in self.kinds)

    @property
    def function(self) -> Cost | None:
        return next((c for c in self.costs if c.role == "function"), None)

    @property
    def plane_cpu(self) -> float:
        """CPU seconds of the control plane's processes (the rows with a share) in the window."""
        return sum(c.cpu_seconds for c in self.costs if c.control_plane)

    def per_xr_hour(self, cpu_seconds: float) -> float:
        return per_xr_hour(cpu_seconds, self.xrs, self.window_seconds)


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile: the smallest value with at least q % of the values at or below
    it (NaN without values), so every figure is one an XR really took."""
    if not values:
        return math.nan
    return sorted(values)[max(1, math.ceil(q / 100 * len(values))) - 1]


def per_xr_hour(cpu_seconds: float, xrs: int, window_seconds: float) -> float:
    """CPU seconds per converged XR per hour: what the window cost, per XR, scaled to an hour."""
    if xrs <= 0 or window_seconds <= 0:
        return math.nan
    return cpu_seconds / (xrs * window_seconds / SECONDS_PER_HOUR)


def ratio(part: float, whole: float) -> float:
    return part / whole if whole else math.nan


def fmt(value: float, digits: int = 1) -> str:
    return "n/a" if math.isnan(value) else f"{value:.{digits}f}"


def percent(part: float, whole: float) -> str:
    return fmt(100 * ratio(part, whole))


def mib(size: int) -> str:
    return f"{size / MIB:.0f}"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), rule, *map(line, rows)])


def rows_table(rows: Iterable[dict[str, str]]) -> str:
    """A table of rows by column name; the columns are the first row's (hack/bench's tables)."""
    listed = list(rows)
    return table(list(listed[0]), [list(row.values()) for row in listed])


# The tables with a row per kind: each column's header, and its cell for one kind.
Columns = tuple[tuple[str, Callable[[KindFigures], str]], ...]
READY_COLUMNS: Columns = (
    ("kind", lambda k: k.kind),
    ("Ready / created", lambda k: f"{len(k.ready_seconds)} / {k.created}"),
    ("p50 s", lambda k: fmt(percentile(k.ready_seconds, 50))),
    ("p90 s", lambda k: fmt(percentile(k.ready_seconds, 90))),
    ("max s", lambda k: fmt(max(k.ready_seconds, default=math.nan))),
)
CALLS_COLUMNS: Columns = (
    ("kind", lambda k: k.kind),
    ("reconciles", lambda k: str(k.reconciles)),
    ("calls", lambda k: str(k.calls)),
    ("calls / reconcile", lambda k: fmt(ratio(k.calls, k.reconciles), 2)),
    ("engine's figure", lambda k: str(k.expected_calls)),
    ("XRs at the figure", lambda k: f"{k.as_expected} / {k.created}"),
    ("memoised", lambda k: f"{k.memoised} / {k.calls}"),
    ("changes", lambda k: str(k.real_changes)),
)


def kinds_table(columns: Columns, kinds: Sequence[KindFigures]) -> str:
    return table(
        [header for header, _ in columns], [[cell(k) for _, cell in columns] for k in kinds]
    )


COST_HEADER = (
    "process",
    "processes",
    "CPU s in window",
    "CPU s per XR-hour",
    "share of control plane",
    "RSS MiB (end)",
    "peak RSS MiB",
)


def summed(role: str, costs: Sequence[Cost], control_plane: bool = True) -> Cost:
    """One row for several: their processes, CPU and memory added up."""
    return Cost(
        role,
        sum(c.processes for c in costs),
        sum(c.cpu_seconds for c in costs),
        sum(c.rss_bytes for c in costs),
        sum(c.peak_rss_bytes for c in costs),
        control_plane,
    )


def cost_rows(costs: Sequence[Cost], xrs: int, window_seconds: float) -> list[list[str]]:
    """A row per role, then the control plane's: the rows with a share, added up."""
    plane = summed("control plane (rows with a share)", [c for c in costs if c.control_plane])
    rows = [
        [
            c.role,
            str(c.processes),
            fmt(c.cpu_seconds, 2),
            fmt(per_xr_hour(c.cpu_seconds, xrs, window_seconds), 2),
            percent(c.cpu_seconds, plane.cpu_seconds) + " %" if c.control_plane else "-",
            mib(c.rss_bytes),
            mib(c.peak_rss_bytes),
        ]
        for c in [*costs, plane]
    ]
    # The control plane is the whole of its share; its processes' peaks, each reached at a moment
    # of its own, do not add up.
    rows[-1][4], rows[-1][6] = "100.0 %", ""
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


def _bullets(lines: Sequence[str], empty: str = "") -> str:
    return "\n".join(wrap(line, bullet=True) for line in (lines or [empty]))


def sizing(run: Run) -> str:
    """How to read the CPU figures when sizing a control plane, with this run's numbers."""
    function = run.function
    if function is None or not run.xrs:
        return wrap("(no CPU figures: the run did not reach the idle window)", bullet=True)
    per_hour = run.per_xr_hour(function.cpu_seconds)
    plane_per_hour = run.per_xr_hour(run.plane_cpu)
    return _bullets(
        [
            f"**CPU seconds per converged XR-hour** is what one converged XR costs a process in "
            f"an hour of doing nothing but staying converged (Crossplane polls each XR about "
            f"once a minute). Divide by 3600 for cores per XR: the function's "
            f"{fmt(per_hour, 2)} s per XR-hour is {fmt(per_hour * 1000 / SECONDS_PER_HOUR, 3)} "
            f"cores per 1 000 converged XRs; the whole control plane's {fmt(plane_per_hour, 2)} "
            f"s is {fmt(plane_per_hour * 1000 / SECONDS_PER_HOUR, 3)} cores per 1 000.",
            f"**Share** is each process's part of the control plane's CPU in the window: the "
            f"function's {percent(function.cpu_seconds, run.plane_cpu)} % is what composing "
            f"with this function costs beside Crossplane, the providers and the API server.",
        ]
    )


def headline(run: Run) -> list[str]:
    """The figures a reader wants first, one line each."""
    ready = sum(len(k.ready_seconds) for k in run.kinds)
    lines = [
        f"{ready} of {run.xrs} XRs Ready in {fmt(run.bring_up_seconds, 0)} s; time to Ready p90 "
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
            + f"; memo answered {percent(run.memo.memo_hits, run.memo.calls)} "
            f"% of calls; {sum(k.real_changes for k in run.kinds)} changes."
        )
    if (function := run.function) is not None:
        lines.append(
            f"Function: {fmt(run.per_xr_hour(function.cpu_seconds), 2)} CPU s per converged "
            f"XR-hour, {percent(function.cpu_seconds, run.plane_cpu)} % of the control plane's "
            f"CPU, {mib(function.rss_bytes)} MiB RSS."
        )
    in_window = "no idle window" if run.problems_in_window is None else run.problems_in_window
    lines.append(
        f"Problems in the idle window: {in_window}; {len(run.errors)} kinds listed under Errors "
        "for the whole run (bring-up has its ordering races). Deletion: "
        + (run.deletion or ["not done"])[0]
    )
    return lines


def render(run: Run) -> str:
    function, memo = run.function, run.memo
    off_default = run.reconcile_rate != CROSSPLANE_RECONCILE_RATE
    rate_default = f" is {CROSSPLANE_RECONCILE_RATE}" if off_default else ""
    blocks = [
        "# Fleet on a real control plane",
        wrap(
            f"Generated by `{run.command}` (`hack/fleet/`), {run.date}. How the figures are "
            "measured, and what they are not, is in bench/README.md (*The fleet*) and the notes "
            "at the end."
        ),
        _bullets(
            [
                f"Fleet: **N = {run.size}** CoreWeaveClusters and N CivoClusters ({run.xrs} XRs), "
                f"{run.civo_autoscaled} of the CivoClusters with the example's autoscaled pool "
                "(a cluster-autoscaler Release that provider-helm installs in that cluster).",
                "Machine: " + ", ".join(f"{k} {v}" for k, v in run.machine.items()),
                "Versions: " + ", ".join(f"{k} {v}" for k, v in run.versions.items()),
                f"Crossplane core: `--max-reconcile-rate={run.reconcile_rate}` (each controller's "
                f"reconcile workers; Crossplane's default{rate_default}; $FLEET_RECONCILE_RATE or "
                "--reconcile-rate sets it)",
                f"Idle window: {run.window_seconds:.0f} s",
                f"Work folder (logs, watch-events.tsv; removed after a run that succeeds, "
                f"unless FLEET_KEEP=1): `{run.work_dir}`",
            ]
        ),
        "## Headline",
        _bullets(headline(run)),
        "## Time to Ready (creation to Ready=True, per XR)",
        kinds_table(READY_COLUMNS, run.kinds),
        "## Idle window: calls per converged reconcile",
        kinds_table(CALLS_COLUMNS, run.kinds),
        "XRs not at the figure, with their calls per reconcile:",
        _bullets(run.off_figure, "none"),
        "## Memo hit ratio in the idle window",
        wrap(
            "(no idle window: the fleet did not converge)"
            if memo is None
            else f"From the function's metrics "
            f'(`inference_clusters_memo_answers_total{{outcome="hit"}}` over '
            f"`inference_clusters_calls_total`, scraped at the window's start and end): "
            f"**{memo.memo_hits} of {memo.calls} calls** answered by the memo "
            f"({percent(memo.memo_hits, memo.calls)} %).",
            bullet=True,
        ),
        "## Errors",
        _bullets(run.errors, "none seen"),
        "## CPU per converged XR-hour, and memory",
        table(COST_HEADER, cost_rows(run.costs, run.xrs, run.window_seconds)),
        wrap(
            f"Function RSS at the window's end: **{mib(function.rss_bytes)} MiB** "
            f"(peak {mib(function.peak_rss_bytes)} MiB) for {run.xrs} XRs."
            if function is not None
            else "Function RSS: not measured (no idle window)."
        ),
        "## Deletion",
        _bullets(run.deletion, "not attempted"),
        "## How to read these figures when sizing a control plane",
        sizing(run),
        "## Notes: how it is measured, and what the harness adds",
        _bullets(run.notes, "none"),
    ]
    # A blank line between blocks, and one newline at the end.
    return "\n\n".join(blocks) + "\n"
