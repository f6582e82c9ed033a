"""Steps every lifecycle test takes: wait for the XR to be Ready, prove that nothing composed
was dropped or re-created, and measure churn once everything has settled."""

from __future__ import annotations

import datetime
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .calls import Reconciles, read_calls, reconciles_of
from .kube import Kind, Kube, condition, is_true, wait_for
from .watchlog import WatchLog, explain
from .xr import Composed, composed

if TYPE_CHECKING:
    from .suite import Suite

# Crossplane's watch circuit breaker holds an XR's reconciles for up to 5 minutes once open.
CONVERGE_SECONDS = 600
# No watch event for this long on the XR or anything it composed counts as settled...
QUIET_SECONDS = 15
# ...and then nothing may change for this long: longer than the function's 60 s TTL, so at
# least one full reconcile runs inside the window and must write nothing.
IDLE_WINDOW_SECONDS = 75


def get_xr(api: Kube, kind: Kind, name: str, namespace: str) -> dict[str, Any]:
    xr = api.get(kind, name, namespace)
    assert xr is not None, f"{kind.kind} {namespace}/{name} is gone"
    return xr


def wait_ready(
    api: Kube, kind: Kind, name: str, namespace: str, ready: bool = True
) -> dict[str, Any]:
    want = "True" if ready else "False"

    def probe() -> dict[str, Any] | None:
        xr = get_xr(api, kind, name, namespace)
        return xr if condition(xr, "Ready").get("status") == want else None

    return wait_for(f"{kind.kind} {name} Ready={want}", probe, CONVERGE_SECONDS)


def same_objects(before: dict[str, Composed], after: dict[str, Composed]) -> None:
    """Nothing dropped, nothing re-created (same UIDs), nothing being deleted."""
    assert sorted(after) == sorted(before), (
        f"composed set changed: {sorted(before)} -> {sorted(after)}"
    )
    changed = [k for k in before if before[k].uid != after[k].uid or after[k].deleting]
    assert not changed, f"re-created or deleting: {changed}"


def settle_and_measure_idle(
    api: Kube,
    log: WatchLog,
    kind: Kind,
    name: str,
    namespace: str,
    composed_kinds: tuple[Kind, ...],
    function_log: Path,
) -> tuple[list[str], int, Reconciles]:
    """Waits until the XR and its composed resources stop changing, then watches them for a
    full reconcile period. Returns the real changes seen in it (none = no churn), described,
    how many events were only Crossplane's circuit breaker closing (Responsive=True), and the
    function calls Crossplane made for the XR in the window."""
    wait_for(
        f"{name} and its composed resources to stop changing",
        lambda: time.monotonic() - log.last_change_at(name, kind.kind) > QUIET_SECONDS,
        CONVERGE_SECONDS,
        interval=1,
    )
    before = composed(api, name, namespace, composed_kinds)
    start = time.monotonic()
    window_start = datetime.datetime.now(datetime.UTC)
    # A measurement window, not a wait for a condition: it must last a whole reconcile period.
    while time.monotonic() - start < IDLE_WINDOW_SECONDS:
        time.sleep(1)
    window_end = datetime.datetime.now(datetime.UTC)
    history = log.of(name, kind.kind)
    real, breaker = explain([c for c in history if c.at >= start], history)
    same_objects(before, composed(api, name, namespace, composed_kinds))
    assert is_true(get_xr(api, kind, name, namespace), "Ready")
    described = [f"{c.type} {c.kind}/{c.name} rv={c.resource_version} {c.conditions}" for c in real]
    calls = reconciles_of(
        read_calls(function_log), f"{kind.kind}/{namespace}/{name}", window_start, window_end
    )
    return described, len(breaker), calls


def converged_idle_window(
    suite: Suite,
    kind: Kind,
    name: str,
    namespace: str,
    composed_kinds: tuple[Kind, ...],
    calls_per_reconcile: int,
) -> None:
    """The converged stage every lifecycle test has: once settled, a whole reconcile period in
    which nothing changes, every reconcile takes at most calls_per_reconcile calls (what the
    XR's requirements need), and the memo answers every call."""
    suite.log.begin(name, "converged (idle window)")
    changes, breaker_events, calls = settle_and_measure_idle(
        suite.plane.api,
        suite.log,
        kind,
        name,
        namespace,
        composed_kinds,
        suite.runtime.function_log,
    )
    suite.notes.append(
        f"{name}: idle window: {len(changes)} changes, {breaker_events} breaker events; {calls}"
    )
    assert not changes, f"changes after convergence (hot loop?): {changes}"
    assert calls.reconciles >= 1, f"no reconcile of {name} in the idle window: {calls}"
    # One more reconcile's calls than began in the window: one may have begun before it.
    assert calls.calls <= calls_per_reconcile * (calls.reconciles + 1), calls
    assert calls.memoised == calls.calls, f"a converged reconcile was composed afresh: {calls}"
