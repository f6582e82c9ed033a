"""Steps every lifecycle test takes: wait for the XR to be Ready, prove that nothing composed
was dropped or re-created, and measure churn once everything has settled."""

from __future__ import annotations

import contextlib
import datetime
import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from . import kinds
from .calls import Reconciles, read_calls, read_reconciles, reconciles_of
from .kube import ApiError, Kind, Kube, condition, is_true, wait_for
from .runtime import package_version
from .watchlog import WatchLog, explain
from .xr import Composed, composed, external_name

if TYPE_CHECKING:
    from .suite import Suite

# Crossplane's watch circuit breaker holds an XR's reconciles for up to 5 minutes once open.
CONVERGE_SECONDS = 600
# No watch event for this long on the XR or anything it composed counts as settled...
QUIET_SECONDS = 15
# ...and then nothing may change for this long: longer than the function's 60 s TTL, so at
# least one full reconcile runs inside the window and must write nothing.
IDLE_WINDOW_SECONDS = 75
# After the window, time for the last reconcile's calls to reach the logs (they take
# milliseconds; this is for a loaded 2-core machine).
LOG_SETTLE_SECONDS = 3


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


def stays_ready_through(suite: Suite, kind: Kind, name: str, namespace: str, since: float) -> None:
    """The XR stayed Ready through a change to what it composes that began at `since`
    (time.monotonic()): the function composed it afresh after then (so it read the change), and
    no write of the XR the API server sent a watch event for since then had Ready=False."""
    described = f"{kind.kind}/{namespace}/{name}"
    ago = datetime.timedelta(seconds=time.monotonic() - since)
    began = datetime.datetime.now(datetime.UTC) - ago

    def composed_afresh() -> bool:
        calls = read_calls(suite.runtime.function_log)
        return any(c.xr == described and not c.memoised and c.at >= began for c in calls)

    wait_for(f"{described} composed afresh", composed_afresh, CONVERGE_SECONDS)
    # Crossplane writes the status of the call's answer after it.
    time.sleep(LOG_SETTLE_SECONDS)
    assert is_true(get_xr(suite.plane.api, kind, name, namespace), "Ready")
    dropped = [
        c
        for c in suite.log.of(name, kind.kind)
        if c.at >= since
        and c.kind == kind.kind
        and ("Ready", "False") in {t[:2] for t in c.conditions}
    ]
    assert not dropped, f"{described} lost Ready at resourceVersion " + ", ".join(
        c.resource_version for c in dropped
    )


def not_synced(xr: dict[str, Any] | None, saying: str = "") -> str:
    """The XR's Synced=False message when it says `saying`, else ''."""
    synced = condition(xr, "Synced")
    message = str(synced.get("message", ""))
    return message if synced.get("status") == "False" and saying in message else ""


def warning_events(api: Kube, namespace: str, name: str, text: str) -> list[dict[str, Any]]:
    """The Warning events about the object of this name whose message says `text`."""
    return [
        e
        for e in api.list(kinds.EVENT, namespace)
        if e["involvedObject"].get("name") == name
        and e.get("type") == "Warning"
        and text in e.get("message", "")
    ]


def same_objects(before: dict[str, Composed], after: dict[str, Composed]) -> None:
    """Nothing dropped, nothing re-created (same UIDs), nothing being deleted."""
    assert sorted(after) == sorted(before), (
        f"composed set changed: {sorted(before)} -> {sorted(after)}"
    )
    changed = [k for k in before if before[k].uid != after[k].uid or after[k].deleting]
    assert not changed, f"re-created or deleting: {changed}"


@contextlib.contextmanager
def cleaned_up(
    suite: Suite, kind: Kind, name: str, namespace: str, churn: bool = False
) -> Iterator[None]:
    """Whatever happens in the block: the XR's last stage ended, its churn reported (`churn`)
    and the XR deleted (not waited for), so that the next test starts clean."""
    try:
        yield
    finally:
        suite.log.end(name)
        if churn:
            suite.churn_reports.append(suite.log.churn(name, kind.kind))
        with contextlib.suppress(ApiError):
            suite.plane.api.delete(kind, name, namespace)


def wait_quiet(log: WatchLog, kind: Kind, name: str, seconds: float) -> None:
    wait_for(
        f"{name} and its composed resources to stop changing for {seconds:g} s",
        lambda: time.monotonic() - log.last_change_at(name, kind.kind) > seconds,
        CONVERGE_SECONDS,
        interval=1,
    )


def settle_and_measure_idle(
    suite: Suite,
    kind: Kind,
    name: str,
    namespace: str,
    composed_kinds: tuple[Kind, ...],
    window_seconds: float = IDLE_WINDOW_SECONDS,
) -> tuple[list[str], int, Reconciles]:
    """Waits until the XR and its composed resources stop changing, then watches them for
    window_seconds (at least a full reconcile period). Returns the real changes seen in it
    (none = no churn), described, how many events were only Crossplane's circuit breaker
    closing (Responsive=True), and the function calls of the XR's reconciles that began in the
    window."""
    api, log = suite.plane.api, suite.log
    wait_quiet(log, kind, name, QUIET_SECONDS)
    before = composed(api, name, namespace, composed_kinds)
    start = time.monotonic()
    window_start = datetime.datetime.now(datetime.UTC)
    # A measurement window, not a wait for a condition: it must last a whole reconcile period.
    time.sleep(window_seconds)
    window_end = datetime.datetime.now(datetime.UTC)
    history = log.of(name, kind.kind)
    real, breaker = explain([c for c in history if c.at >= start], history)
    same_objects(before, composed(api, name, namespace, composed_kinds))
    assert is_true(get_xr(api, kind, name, namespace), "Ready")
    described = [f"{c.type} {c.kind}/{c.name} rv={c.resource_version} {c.conditions}" for c in real]
    time.sleep(LOG_SETTLE_SECONDS)
    calls = reconciles_of(
        read_calls(suite.runtime.function_log),
        read_reconciles(suite.plane.crossplane_log, kind, namespace, name),
        f"{kind.kind}/{namespace}/{name}",
        window_start,
        window_end,
    )
    return described, len(breaker), calls


def converged_idle_window(
    suite: Suite,
    kind: Kind,
    name: str,
    namespace: str,
    composed_kinds: tuple[Kind, ...],
    requires_resources: bool,
) -> None:
    """The converged stage every lifecycle test has: once settled, a whole reconcile period in
    which nothing changes, every reconcile takes exactly the calls this engine's requirements
    loop needs for the XR (requires_resources: whether its step asks for required resources
    when converged), and the memo answers every call."""
    suite.log.begin(name, "converged (idle window)")
    changes, breaker_events, calls = settle_and_measure_idle(
        suite, kind, name, namespace, composed_kinds
    )
    expected = suite.engine.calls_per_converged_reconcile(requires_resources)
    suite.notes.append(
        f"{name} on {suite.engine.label}: idle window: {len(changes)} changes, "
        f"{breaker_events} breaker events; {calls}"
    )
    assert not changes, f"changes after convergence (hot loop?): {changes}"
    assert calls.reconciles >= 1, f"no reconcile of {name} began in the idle window: {calls}"
    assert calls.every_reconcile_took(expected), (
        f"{suite.engine.label}: expected {expected} calls per converged reconcile of {name}: {calls}"
    )
    assert calls.memoised == calls.calls, f"a converged reconcile was composed afresh: {calls}"
    if suite.runtime.reference.endswith(f":v{package_version()}"):
        # The release under test (an older one, as the upgrade test serves, has no side ports).
        metered = suite.runtime.assert_operable()
        suite.notes.append(f"{name} on {suite.engine.label}: metrics counted {metered}, as logged")


def wait_pool_gone(api: Kube, namespace: str, objects: list[str], inside: Kube, pool: str) -> None:
    """Waits until a removed CKS pool's Objects are deleted (gone, not only deleting) and its
    NodePool is gone from the cluster."""
    wait_for(
        f"pool {pool}'s Objects gone (deleted, not only deleting) and its NodePool too",
        lambda: (
            all(api.get(kinds.KUBERNETES_OBJECT, name, namespace) is None for name in objects)
            and inside.get(kinds.CKS_NODEPOOL, pool) is None
        ),
        CONVERGE_SECONDS,
    )


# In-cluster objects every CoreWeaveCluster composes under fixed names: the system pool and the
# StorageClass clone, in its own CKS cluster.
COREWEAVE_FIXED_IN_CLUSTER = (
    (kinds.CKS_NODEPOOL, "modelplane-system"),
    (kinds.STORAGE_CLASS, "shared-vast-delete"),
)


def delete_xr(
    suite: Suite,
    kind: Kind,
    composed_kinds: Iterable[Kind],
    name: str,
    namespace: str,
    cluster_id: str | None = None,
) -> float:
    """Deletes an XR and waits until it and everything it composed are gone, and the fake cloud
    has deleted its workload cluster (`cluster_id`, when it has one) with everything in it.
    Returns the seconds that took, from the delete."""
    api = suite.plane.api
    deleted_at = time.monotonic()
    with contextlib.suppress(ApiError):
        api.delete(kind, name, namespace)
    wait_for(
        f"{kind.kind} {name}, everything it composed"
        + (" and its cluster" if cluster_id else "")
        + " gone",
        lambda: (
            api.get(kind, name, namespace) is None
            and not composed(api, name, namespace, tuple(composed_kinds))
            and cluster_id not in suite.clusters.running()
        ),
        CONVERGE_SECONDS,
    )
    return time.monotonic() - deleted_at


def delete_coreweave_xr(suite: Suite, name: str, namespace: str) -> None:
    """Deletes a CoreWeaveCluster and waits until it, what it composed and its CKS cluster (with
    everything in it) are gone: what a test leaves behind for the next."""
    try:
        cluster_id: str | None = external_name(
            suite.plane.api, name, namespace, kinds.CKS_CLUSTER, "cks-cluster"
        )
    except (KeyError, AssertionError):
        cluster_id = None  # never composed, or already gone
    delete_xr(
        suite, kinds.COREWEAVE_CLUSTER_XR, kinds.COREWEAVE_COMPOSED, name, namespace, cluster_id
    )
