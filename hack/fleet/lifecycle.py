"""The fleet's life on the control plane: created all at once, waited on until Ready (each XR's
time to Ready from the watch log), settled, and deleted again."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

from hack.fleet.xrs import Member
from harness.e2e.kube import ApiError, Kube, condition, is_true
from harness.e2e.suite import Suite
from harness.e2e.usage import group_processes
from harness.e2e.watchlog import WatchLog
from harness.e2e.xr import COMPOSITE_LABEL

# Listing both XR kinds is two requests; every 2 s costs the API server nothing measurable.
POLL_SECONDS = 2
# A line of progress this often, so a long bring-up shows where it is.
PROGRESS_SECONDS = 30


def create(api: Kube, members: list[Member]) -> dict[str, float]:
    """Applies every XR at once; returns when each was sent (monotonic), by XR name."""
    sent = {}
    for member in members:
        sent[member.name] = time.monotonic()
        api.apply(member.kind, member.manifest)
    return sent


def _listed(api: Kube, members: list[Member]) -> dict[str, dict[str, Any]]:
    """Every XR of the fleet's kinds in the fleet's namespaces, by name."""
    places = dict.fromkeys((m.kind, m.namespace) for m in members)
    return {xr["metadata"]["name"]: xr for kind, ns in places for xr in api.list(kind, ns)}


def wait_ready(api: Kube, members: list[Member], timeout: float) -> set[str]:
    """Waits until every XR is Ready (or the timeout passes); the names of those that are."""
    deadline = time.monotonic() + timeout
    next_progress = time.monotonic() + PROGRESS_SECONDS
    names = {m.name for m in members}
    ready: set[str] = set()
    while True:
        try:
            listed = _listed(api, members)
            ready = {n for n, xr in listed.items() if n in names and is_true(xr, "Ready")}
        except (ApiError, OSError) as error:
            # A loaded API server may time a list out; the next poll asks again.
            print(f"fleet: listing the fleet: {error}", flush=True)
        now = time.monotonic()
        if ready == names or now > deadline:
            return ready
        if now > next_progress:
            by_kind = Counter(m.kind.kind for m in members if m.name in ready)
            print(f"fleet: Ready so far: {dict(by_kind)} of {len(members)}", flush=True)
            next_progress = now + PROGRESS_SECONDS
        time.sleep(POLL_SECONDS)


def not_ready(api: Kube, members: list[Member]) -> list[str]:
    """Each XR that is not Ready, with what its Synced and Ready conditions say."""
    listed = _listed(api, members)
    lines = []
    for member in members:
        xr = listed.get(member.name)
        if xr is None:
            lines.append(f"{member.kind.kind} {member.name}: not found")
            continue
        if is_true(xr, "Ready"):
            continue
        said = [
            f"{kind}={found.get('status')} {found.get('reason', '')} "
            + str(found.get("message", ""))[:300]
            for kind in ("Synced", "Ready", "Responsive")
            if (found := condition(xr, kind))
        ]
        lines.append(f"{member.kind.kind} {member.name}: " + "; ".join(said))
    return lines


def ready_seconds(log: WatchLog, members: list[Member], sent: dict[str, float]) -> dict[str, float]:
    """Seconds from sending each XR to the first watch event that shows it Ready=True."""
    pending = {m.name: m.kind.kind for m in members}
    took: dict[str, float] = {}
    for change in list(log.changes):
        if pending.get(change.name) == change.kind and ("Ready", "True") in (
            c[:2] for c in change.conditions
        ):
            took[change.name] = change.at - sent[change.name]
            del pending[change.name]
    return took


def last_fleet_change(log: WatchLog, names: set[str]) -> float:
    """When the watch log last saw a fleet XR, or anything one composed, change."""
    for change in reversed(list(log.changes)):
        if change.composite in names or change.name in names:
            return change.at
    return 0.0


def wait_quiet(log: WatchLog, members: list[Member], quiet: float, timeout: float) -> bool:
    """Waits until nothing of the fleet has changed for `quiet` seconds; False on timeout."""
    names = {m.name for m in members}
    deadline = time.monotonic() + timeout
    while time.monotonic() - last_fleet_change(log, names) < quiet:
        if time.monotonic() > deadline:
            return False
        time.sleep(1)
    return True


def _remaining(api: Kube, members: list[Member]) -> tuple[int, int]:
    """(fleet XRs, objects composed for them) still in the API server."""
    names = {m.name for m in members}
    xrs = len(names & _listed(api, members).keys())
    namespaces = {m.namespace for m in members}
    left = sum(
        (obj["metadata"].get("labels") or {}).get(COMPOSITE_LABEL) in names
        for kind in dict.fromkeys(k for m in members for k in m.composed_kinds)
        for namespace in namespaces
        for obj in api.list(kind, namespace)
    )
    return xrs, left


def delete(suite: Suite, members: list[Member], timeout: float) -> list[str]:
    """Deletes every XR at once and waits until they and everything they composed are gone;
    what was seen, as report lines."""
    api = suite.plane.api
    started = time.monotonic()
    for member in members:
        try:
            api.delete(member.kind, member.name, member.namespace)
        except ApiError as error:
            print(f"fleet: deleting {member.name}: {error}", flush=True)
    deadline = started + timeout
    xrs, composed = _remaining(api, members)
    while (xrs or composed) and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)
        xrs, composed = _remaining(api, members)
    took = time.monotonic() - started
    said = (
        f"**Incomplete** after {took:.0f} s: {xrs} XRs and {composed} composed objects still in "
        "the API server."
        if xrs or composed
        else f"Complete: every XR and everything it composed gone in {took:.0f} s."
    )
    # What deleting the fleet should have removed outside the composed objects: each CKS and
    # Civo cluster (its own API server, with everything in it).
    running = group_processes(suite.plane.processes.log_dir)
    cks = sum(name.startswith("cks-cluster-") for name in running)
    civo = sum(name.startswith("civo-cluster-") for name in running)
    return [
        said,
        f"CKS clusters still running: {cks}.",
        f"Civo cluster API servers still running: {civo}.",
    ]
