"""Everything the harness can see go wrong during a fleet run, as report lines: FATAL answers and
internal errors (the function's metrics), Warning events, Synced=False conditions (the watch
log), ERROR lines in the components' logs, processes that exited or were restarted, and the
fake cloud's own errors.

Each function returns its lines and how many of the problems it counted happened in the idle
window (a converged fleet has none there; bring-up has its ordering races).
"""

from __future__ import annotations

import contextlib
import datetime
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from hack.bench.scrape import sum_series
from hack.fleet.window import Sample
from harness.e2e import kinds
from harness.e2e.kube import Kube
from harness.e2e.operability import HARNESS_MARKER
from harness.e2e.suite import Suite
from harness.e2e.watchlog import WatchLog

# ProcessGroup.restart writes this into the log of each process it starts again.
RESTART_MARKER = f"{HARNESS_MARKER.strip()} restarted"
# Logs whose ERROR lines are worth counting: controller-runtime's development encoder writes the
# level as its second tab-separated field.
COMPONENT_LOGS = ("crossplane", "provider-kubernetes", "provider-helm", "kube-controller-manager")
ERROR_LEVEL = "\tERROR\t"
# One example per kind of problem is enough to start reading the logs from...
EXAMPLE_CHARS = 240
# ...and the most frequent few kinds of ERROR line per log.
ERROR_GROUPS = 5

# Report lines, and how many of the problems they count fell in the idle window.
Found = tuple[list[str], int]


def function_faults(start: Sample, end: Sample) -> Found:
    """FATAL answers and internal errors the function counted, over the run and in the window."""
    lines = []
    in_window = 0
    for series, labels, what in (
        ("inference_clusters_calls_total", {"result": "fatal"}, "FATAL answers"),
        ("inference_clusters_internal_errors_total", None, "internal errors"),
    ):
        whole = sum_series(end.function_text, series, labels)
        window = whole - sum_series(start.function_text, series, labels)
        in_window += int(window)
        if whole:
            lines.append(
                f"function {what}: {whole:g} in the whole run, {window:g} in the idle window"
            )
    return lines, in_window


def warning_events(api: Kube, window_start: datetime.datetime) -> Found:
    """Warning events in every namespace, by involved kind and reason, before and in the window."""
    # By kind and reason: [before the window, in it].
    counted: dict[tuple[str, str], list[int]] = {}
    example: dict[tuple[str, str], str] = {}
    for event in api.list(kinds.EVENT):
        if event.get("type") != "Warning":
            continue
        key = (event.get("involvedObject", {}).get("kind", ""), event.get("reason", ""))
        at = str(
            event.get("lastTimestamp")
            or event.get("eventTime")
            or event["metadata"].get("creationTimestamp", "")
        )
        in_window = bool(at) and datetime.datetime.fromisoformat(at) >= window_start
        counted.setdefault(key, [0, 0])[in_window] += int(event.get("count") or 1)
        example.setdefault(key, str(event.get("message", ""))[:EXAMPLE_CHARS])
    lines = [
        f"Warning events, {kind} {reason}: {before} before the window, {inside} in it; "
        f"e.g. `{example[kind, reason]}`"
        for (kind, reason), (before, inside) in sorted(counted.items())
    ]
    return lines, sum(inside for _, inside in counted.values())


def synced_false(log: WatchLog, names: set[str], window_start: float) -> Found:
    """Objects of the fleet (XRs and what they composed) the watch log saw Synced=False, by kind
    and reason, before and in the window."""
    # By kind and reason: (the objects before the window, those in it).
    objects: dict[tuple[str, str], tuple[set[str], set[str]]] = {}
    for change in list(log.changes):
        if change.composite not in names and change.name not in names:
            continue
        for kind, status, reason in change.conditions:
            if kind == "Synced" and status == "False":
                seen = objects.setdefault((change.kind, reason), (set(), set()))
                seen[change.at >= window_start].add(change.name)
    lines = [
        f"Synced=False on {kind} ({reason or 'no reason'}): {len(before)} objects before the "
        f"window, {len(inside)} in it"
        for (kind, reason), (before, inside) in sorted(objects.items())
    ]
    return lines, sum(len(inside) for _, inside in objects.values())


def log_errors(log_dir: Path, window_start: datetime.datetime) -> Found:
    """ERROR lines in each component's log over the run, by message and controller, with the
    first one's error."""
    lines = []
    in_window = 0
    for name in COMPONENT_LOGS:
        path = log_dir / f"{name}.log"
        if not path.exists():
            continue
        counted: Counter[tuple[str, str]] = Counter()
        first: dict[tuple[str, str], str] = {}
        with path.open(errors="replace") as log:
            for line in log:
                if ERROR_LEVEL not in line:
                    continue
                # Time, level, logger, message, then the fields as JSON.
                parts = line.rstrip("\n").split("\t")
                fields: dict[str, Any] = {}
                with contextlib.suppress(ValueError, IndexError):
                    fields = json.loads(parts[4])
                key = (parts[3] if len(parts) > 3 else line, str(fields.get("controller", "")))
                counted[key] += 1
                first.setdefault(key, str(fields.get("error", "")))
                with contextlib.suppress(ValueError):
                    in_window += datetime.datetime.fromisoformat(parts[0]) >= window_start
        for (message, controller), count in counted.most_common(ERROR_GROUPS):
            where = f" in {controller}" if controller else ""
            lines.append(
                f'{name}.log: {count} ERROR lines "{message}"{where}; the first: '
                f"`{first[message, controller][:EXAMPLE_CHARS]}`"
            )
        if len(counted) > ERROR_GROUPS:
            lines.append(f"{name}.log: {len(counted) - ERROR_GROUPS} more kinds of ERROR line")
    if in_window:
        lines.append(f"ERROR lines logged in the idle window: {in_window}")
    return lines, in_window


def restarts(log_dir: Path) -> Found:
    """Processes the harness started again (ProcessGroup.restart marks their logs): none is
    expected, so each counts as a problem of the window."""
    lines = []
    total = 0
    for path in sorted(log_dir.glob("*.log")):
        count = path.read_text(errors="replace").count(RESTART_MARKER)
        if count:
            total += count
            lines.append(f"{path.stem}: restarted {count} times")
    return lines, total


def observed(
    suite: Suite, names: set[str], first: Sample | None = None, last: Sample | None = None
) -> Found:
    """All of the above, and processes that exited and the fake cloud's errors, split at the
    window's start where there was one (`first` and `last`, its edges)."""
    start_utc = first.utc if first else datetime.datetime.now(datetime.UTC)
    start_at = first.at if first else time.monotonic()
    log_dir = suite.plane.processes.log_dir
    found = [
        function_faults(first, last) if first and last else ([], 0),
        warning_events(suite.plane.api, start_utc),
        synced_false(suite.log, names, start_at),
        log_errors(log_dir, start_utc),
        restarts(log_dir),
    ]
    if cloud := suite.cloud.errors:
        found.append(
            ([f"fake cloud errors: {len(cloud)}; the last: `{cloud[-1][-EXAMPLE_CHARS:]}`"], 0)
        )
    try:
        suite.plane.processes.check_alive()
    except RuntimeError as exited:
        found.append(([f"a process exited: {str(exited).splitlines()[0]}"], 1))
    return [line for lines, _ in found for line in lines], sum(count for _, count in found)
