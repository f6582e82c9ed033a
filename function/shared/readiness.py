"""When a composed resource counts as ready, when the XR is Ready, and the NodePools condition
that shows each pool's nodes against its target.

The XR's Ready means "the cluster serves" (docs/design.md, "Ready means serving"): a consumer
such as Modelplane's InferenceCluster drops the ProviderConfig its workloads run through
whenever Ready drops, so Ready waits for every pool's nodes once, at creation, and from then on
drops only when the cluster cannot be used.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from function.shared.observed import View, condition_of
from function.shared.outcome import Outcome

CONDITION_POOLS = "NodePools"


def ready_when_ready(observed: View) -> bool:
    """Managed resources and Objects: ready only when their own Ready condition says so."""
    return observed.ready


def ready_when_exists(observed: View) -> bool:
    """Secrets, ProviderConfigs and Usages have no runtime signal: ready once they exist."""
    return observed.exists


@dataclasses.dataclass(frozen=True, slots=True)
class PoolCapacity:
    """One pool's nodes as the cloud reports them."""

    name: str
    at_target: bool
    # What the user reads after the pool's name: "2 of 3 nodes, 1 queued", "not created yet".
    detail: str


def nodes(current: int, target: int, queued: int = 0) -> str:
    noun = "node" if target == 1 else "nodes"
    return f"{current} of {target} {noun}" + (f", {queued} queued" if queued else "")


def condition_message(observed: View, condition_type: str) -> str | None:
    """The message (else the reason) of an object's condition of that type, if it has one."""
    condition = condition_of(observed, condition_type) or {}
    text = condition.get("message") or condition.get("reason")
    return str(text) if text else None


def report_pools(out: Outcome, pools: Sequence[PoolCapacity]) -> None:
    """The NodePools condition: which pools wait and for what, and every pool's nodes."""
    if not pools:
        return
    waiting = [p for p in pools if not p.at_target]
    at_target = ", ".join(f"{p.name} ({p.detail})" for p in pools if p.at_target)
    if not waiting:
        out.condition(CONDITION_POOLS, True, "AtTarget", f"node pools at target: {at_target}")
        return
    noun = "pool" if len(waiting) == 1 else "pools"
    message = f"waiting for node {noun} " + ", ".join(f"{p.name} ({p.detail})" for p in waiting)
    out.condition(
        CONDITION_POOLS,
        False,
        "WaitingForNodes",
        message + (f"; at target: {at_target}" if at_target else ""),
    )


def xr_ready(
    out: Outcome, *, serves: bool, was_ready: Callable[[], bool], pools_at_target: bool
) -> bool | None:
    """The XR's Ready, or None where Crossplane's own verdict (every composed resource ready,
    which names the unready ones in its message) already says the same.

    Before its first Ready the XR waits for every composed resource and every pool's nodes;
    after it, it stays Ready while the cluster serves, whatever a pool or the cloud's in-place
    update is doing. `was_ready` is asked only where the answer depends on it: a converged
    XR's answer then does not depend on its own Ready condition, which Crossplane sets after
    the reconcile that made it Ready, so the memo answers the next one."""
    every_resource_ready = all(d.ready for d in out.resources.values())
    complete = every_resource_ready and pools_at_target
    ready = serves and (complete or was_ready())
    return None if ready == every_resource_ready else ready
