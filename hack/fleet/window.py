"""The idle window: what every process and the function's metrics say at its start and end, and
what the logs say about each fleet XR's reconciles inside it."""

from __future__ import annotations

import dataclasses
import datetime
import fnmatch
import time
from collections import Counter, defaultdict
from collections.abc import Mapping

import psutil

from hack.fleet.report import Cost, KindFigures, summed
from hack.fleet.xrs import Member
from harness.e2e.calls import Call, read_calls, read_reconciles, reconciles_of
from harness.e2e.engine import Engine
from harness.e2e.operability import Counted, counted, scrape
from harness.e2e.runtime import FUNCTION_PROCESS
from harness.e2e.suite import Suite
from harness.e2e.usage import Usage, snapshot
from harness.e2e.usage import usage as process_usage
from harness.e2e.watchlog import explain

# Crossplane logs this message as each reconcile begins (harness/e2e/calls.py); the
# reconciles are read from a copy of the log holding only these lines, once per XR.
RECONCILING = "\tReconciling\t"
HARNESS_ROLE = "harness: fake providers, watch log (this Python process)"
# Process names of ProcessGroup, grouped as a user would see them: the role, the names (a
# trailing "*" matches a prefix), and whether it is part of the control plane a user runs.
ROLES: tuple[tuple[str, str, bool], ...] = (
    ("function", FUNCTION_PROCESS, True),
    ("Crossplane", "crossplane", True),
    ("provider-kubernetes", "provider-kubernetes", True),
    ("provider-helm", "provider-helm", True),
    ("kube-apiserver", "kube-apiserver", True),
    ("etcd", "etcd", True),
    ("kube-controller-manager (GC, namespaces)", "kube-controller-manager", True),
    # The package registry a user's control plane pulls from is not on it.
    ("registry (package pulls)", "registry", False),
    # The fake Civo and CKS clusters' own API servers: the workload clusters, not the control
    # plane.
    ("kube-apiserver of each fake Civo cluster", "civo-cluster-*", False),
    ("kube-apiserver of each fake CKS cluster", "cks-cluster-*", False),
    # This process (the fake providers' loop and the watch log run in its threads), read under
    # this name as a process of its own.
    (HARNESS_ROLE, HARNESS_ROLE, False),
)


@dataclasses.dataclass(frozen=True)
class Sample:
    """Everything read at one edge of the window."""

    at: float  # monotonic
    utc: datetime.datetime
    # What every process has used so far, this one's under HARNESS_ROLE.
    usage: dict[str, Usage]
    # The function's metrics, as scraped.
    function_text: str


def take(suite: Suite) -> Sample:
    function_text = scrape(suite.runtime.side_ports[FUNCTION_PROCESS])
    usage = snapshot(suite.plane.processes.log_dir)
    at, utc = time.monotonic(), datetime.datetime.now(datetime.UTC)
    harness = process_usage(HARNESS_ROLE, psutil.Process())
    if harness is None:  # psutil could not read this very process
        raise RuntimeError("cannot read this process's own CPU time and memory")
    return Sample(at, utc, {**usage, HARNESS_ROLE: harness}, function_text)


def costs(start: Sample, end: Sample, errors: list[str]) -> list[Cost]:
    """CPU each role used between two readings, and its memory at the second. A process that is
    not the same one at both readings (it exited or was restarted) is an error in `errors`, not
    a cost."""
    per_role: dict[str, list[Cost]] = defaultdict(list)
    for name, used in end.usage.items():
        role = next((r for r, pattern, _ in ROLES if fnmatch.fnmatchcase(name, pattern)), None)
        if role is None:
            continue
        before = start.usage.get(name)
        if before is None or before.pid != used.pid:
            errors.append(f"process {name} was not the same process at the window's start")
            continue
        cpu = used.cpu_seconds - before.cpu_seconds
        per_role[role].append(Cost(role, 1, cpu, used.rss_bytes, used.peak_rss_bytes))
    for name in start.usage.keys() - end.usage.keys():
        errors.append(f"process {name} exited during the idle window")
    return [summed(role, per_role[role], cp) for role, _, cp in ROLES if role in per_role]


def memo(start: Sample, end: Sample) -> Counted:
    before, after = counted(start.function_text), counted(end.function_text)
    return Counted(after.calls - before.calls, after.memo_hits - before.memo_hits)


def per_kind(
    suite: Suite,
    members: list[Member],
    ready: dict[str, float],
    start: Sample,
    end: Sample,
    changes_seen: list[str],
    off_figure: list[str],
) -> list[KindFigures]:
    """Sums, per XR kind, of each fleet XR's reconciles, calls and watch events in the window;
    each real change (a converged fleet has none) is described into `changes_seen`, each XR
    whose reconciles did not all take the engine's figure into `off_figure`."""
    plane, log = suite.plane, suite.log
    calls: list[Call] = read_calls(suite.runtime.function_log)
    # A copy of Crossplane's log with only its `Reconciling` lines: the per-XR reads below then
    # read kilobytes, not the whole --debug log once per XR.
    reconciling = plane.processes.log_dir / "crossplane.reconciling.log"
    with plane.crossplane_log.open(errors="replace") as source, reconciling.open("w") as sink:
        sink.writelines(line for line in source if RECONCILING in line)
    totals: dict[str, Counter[str]] = defaultdict(Counter)
    for member in members:
        figure = suite.engine.calls_per_converged_reconcile(member.requires_resources)
        found = reconciles_of(
            calls,
            read_reconciles(reconciling, member.kind, member.namespace, member.name),
            member.described,
            start.utc,
            end.utc,
        )
        at_figure = found.reconciles > 0 and found.every_reconcile_took(figure)
        if not at_figure:
            off_figure.append(f"{member.described}: {found}")
        # The real changes of the XR and what it composed: not Crossplane's circuit-breaker
        # bookkeeping (the Responsive condition alone).
        history = log.of(member.name, member.kind.kind)
        real = explain([c for c in history if start.at <= c.at <= end.at], history)[0]
        changes_seen += [
            f"{c.type} {c.kind} {c.namespace}/{c.name} rv={c.resource_version} {c.conditions}"
            for c in real
        ]
        # Every field of KindFigures that sums over the window (as ints: the first update of a
        # Counter stores its values as given).
        totals[member.kind.kind].update(
            reconciles=found.reconciles,
            calls=found.calls,
            memoised=found.memoised,
            as_expected=int(at_figure),
            real_changes=len(real),
        )
    return kind_figures(members, ready, suite.engine, totals)


def kind_figures(
    members: list[Member],
    ready: dict[str, float],
    engine: Engine,
    window_sums: Mapping[str, Mapping[str, int]] | None = None,
) -> list[KindFigures]:
    """Per kind, in the fleet's order: its XRs' time to Ready, and the idle window's sums
    where the run reached it."""
    by_kind: dict[str, list[Member]] = defaultdict(list)
    for member in members:
        by_kind[member.kind.kind].append(member)
    return [
        KindFigures(
            kind=kind,
            created=len(mine),
            ready_seconds=tuple(ready[m.name] for m in mine if m.name in ready),
            expected_calls=engine.calls_per_converged_reconcile(mine[0].requires_resources),
            **(window_sums or {}).get(kind, {}),
        )
        for kind, mine in by_kind.items()
    ]
