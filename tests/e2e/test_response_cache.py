"""Crossplane's function response cache (`--enable-function-response-cache`, alpha) in front of a
converged CoreWeaveCluster: which calls still reach the function, and that nothing composed
changes.

Crossplane caches a response under its request's tag until the response's TTL (60 s here)
passes. A converged XR is requeued after that same TTL, with 10 % jitter, so a reconcile that
comes a little early finds the response cached and one that comes late calls the function. The
test counts both from Crossplane's own debug log and asserts that every reconcile was answered
exactly once, by the cache or by one call.
"""

from __future__ import annotations

import datetime
import json
import re
from collections import Counter

from harness.e2e import kinds
from harness.e2e.stages import delete_coreweave_xr, settle_and_measure_idle, wait_ready
from harness.e2e.suite import Suite
from harness.e2e.xr import example_xr

XR_KIND = kinds.COREWEAVE_CLUSTER_XR
NAME = "response-cache"
CACHE_FLAGS = ("--enable-function-response-cache",)
# Three polls of the XR: each may find its response cached or expired.
WINDOW_SECONDS = 3 * 66
# Crossplane's cached runner logs each lookup: a hit, or a miss with its reason.
_CACHE_LOOKUP = re.compile(
    r"^(?P<at>\S+)\tDEBUG\t\S+\tRunFunctionResponse cache (?P<outcome>hit|miss)\t(?P<fields>\{.*\})$"
)


def cache_lookups(log_text: str, start: datetime.datetime, end: datetime.datetime) -> Counter[str]:
    """Crossplane's response-cache lookups between start and end (every XR's): `hit`, or
    `miss <reason>` (NotCached: no response under this request's tag; DeadlineExpired: the
    response's TTL has passed)."""
    found: Counter[str] = Counter()
    for line in log_text.splitlines():
        match = _CACHE_LOOKUP.match(line)
        if match is None or not start <= datetime.datetime.fromisoformat(match["at"]) <= end:
            continue
        reason = json.loads(match["fields"]).get("reason", "")
        found["hit" if match["outcome"] == "hit" else f"miss {reason}"] += 1
    return found


def test_the_function_response_cache_changes_nothing_composed(suite: Suite) -> None:
    api, plane = suite.plane.api, suite.plane
    # Its own in-cluster pool name: NodePools are cluster-scoped.
    pool = {"name": "cpu-cache", "role": "CPU", "instanceType": "cd-gp-a192-genoa", "nodeCount": 1}
    xr = example_xr("coreweave", NAME, [pool])
    namespace = xr["metadata"]["namespace"]
    plane.restart_crossplane(*CACHE_FLAGS)
    try:
        api.apply(XR_KIND, xr)
        wait_ready(api, XR_KIND, NAME, namespace)
        window_start = datetime.datetime.now(datetime.UTC)
        changes, breaker_events, calls = settle_and_measure_idle(
            suite, XR_KIND, NAME, namespace, kinds.COREWEAVE_COMPOSED, WINDOW_SECONDS
        )
        window_end = datetime.datetime.now(datetime.UTC)
        lookups = cache_lookups(
            plane.crossplane_log.read_text(errors="replace"), window_start, window_end
        )
        answered_by_cache = calls.reconciles - calls.calls
        suite.notes.append(
            f"{NAME} on {suite.engine.label} with the function response cache: "
            f"{len(changes)} changes, {breaker_events} breaker events; {calls}; "
            f"{answered_by_cache} reconciles answered by Crossplane's cache; cache lookups "
            f"from Ready on: {dict(sorted(lookups.items()))}"
        )
        assert not changes, f"changes with the response cache on: {changes}"
        assert calls.reconciles >= 1, f"no reconcile of {NAME} in the idle window: {calls}"
        # One call (the seeded first call satisfies the step) or none (the cache answered it).
        assert all(took <= began for began, took in calls.groups), calls
        assert calls.memoised == calls.calls, f"a converged reconcile was composed afresh: {calls}"
        # Lookups are counted from Ready on, reconciles only in the idle window: a lookup may
        # precede the window, never fall short of the reconciles in it.
        assert lookups["hit"] >= answered_by_cache, (lookups, calls)
        assert sum(lookups.values()) >= calls.reconciles, (lookups, calls)
    finally:
        delete_coreweave_xr(suite, NAME, namespace)
        plane.restart_crossplane()
