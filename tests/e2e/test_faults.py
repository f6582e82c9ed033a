"""Faults of the control plane lose nothing, and a burst of edits drops no capacity.

One CoreWeaveCluster and one CivoCluster are brought to Ready once and live through every test
of this module. Each fault test inflicts its fault twice: while both XRs are converged, and
again right after a pool was added to each (the change in flight when the fault hits). Either
way, once the fault is lifted both XRs must be Ready with every composed resource and every
live in-cluster object keeping its UID and content, the new pools made, and no watch event of
the API server may show anything they composed deleted, or its deletion begun, on the way.
Each round prints how long the XRs took to settle after the fault was lifted.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Iterator
from typing import Any

import pytest

from harness.e2e import kinds
from harness.e2e.faults import (
    CredentialsDeleted,
    Fault,
    FunctionKilled,
    FunctionUnreachable,
    Killed,
    ProviderKubernetesKilled,
)
from harness.e2e.kube import ApiError
from harness.e2e.pair import NAMESPACE, Pair, differences, live_key
from harness.e2e.stages import warning_events
from harness.e2e.suite import Suite
from harness.e2e.xr import composed
from harness.fixtures import civo_pool, coreweave_pool

COREWEAVE_POOL = coreweave_pool("cpu-fault", "cd-gp-a192-genoa", 1)
# The example's System pool and its autoscaled L40S pool (so the autoscaler Release is composed):
# two of the eight pools an XR may have, leaving one for each fault's mid-change round.
CIVO_POOLS = ["system", "l40s"]
# A change made during an outage is given this long to be stuck in it before the fault lifts.
CHANGE_IN_OUTAGE_SECONDS = 10


@pytest.fixture(scope="module")
def pair(suite: Suite) -> Iterator[Pair]:
    scene = Pair.of(suite, "fault", coreweave_pools=[COREWEAVE_POOL])
    scene.civo.manifest["spec"]["nodePools"] = [
        p for p in scene.civo.pools if p["name"] in CIVO_POOLS
    ]
    scene.apply()
    try:
        scene.settled()
        yield scene
    finally:
        scene.delete()


def add_pools(pair: Pair, name: str) -> set[str]:
    """A pool named `name` added to each XR; returns the snapshot keys it must make."""
    made = pair.add_pool(pair.coreweave, {**COREWEAVE_POOL, "name": name})
    civo = civo_pool(name, "g4g.kube.small", 1, "nvidia-a100")
    return made | pair.add_pool(pair.civo, civo)


def one_round(pair: Pair, fault: Fault, changing: str) -> None:
    """One outage. `changing`: "" (both XRs converged), "before" (a pool added to each just
    before the fault: the change in flight when it hits) or "during" (added once the XRs have
    reported the fault, which then holds a while longer)."""
    before = pair.settled()
    start = time.monotonic()
    new = add_pools(pair, fault.name) if changing == "before" else set()
    fault.inflict(pair)
    try:
        seen = fault.hold(pair, pair.coreweave if changing == "before" else None)
        if changing == "during":
            new = add_pools(pair, fault.name)
            time.sleep(CHANGE_IN_OUTAGE_SECONDS)
            seen += f"; then pools added, held {CHANGE_IN_OUTAGE_SECONDS} s more"
    finally:
        # Lifted whatever the hold saw: the next test, and the teardown, need the world back.
        lifted = time.monotonic()
        fault.recover(pair)
    after = pair.settled()
    took = pair.last_change_at() - lifted
    state = {"": "converged", "before": "mid-change", "during": "converged, then mid-change"}
    pair.suite.notes.append(
        f"fault {fault.name} ({state[changing]}): {seen}; "
        + (f"settled {took:.1f} s after it was lifted" if took > 0 else "no change after it")
        + f"; {len(before)} objects kept"
    )
    problems = differences(before, after, frozenset(new))
    assert not problems, f"{fault.name} ({state[changing]}): {problems}"
    deletions = pair.deletions_since(start)
    assert not deletions, f"{fault.name} ({state[changing]}): deleted on the way: {deletions}"


def ride_out(pair: Pair, fault: Fault) -> None:
    """The fault while converged, and while a pool is being added to each XR."""
    if fault.one_outage:
        one_round(pair, fault, "during")
    else:
        one_round(pair, fault, "")
        one_round(pair, fault, "before")


def test_function_killed_and_restarted_loses_nothing(pair: Pair) -> None:
    ride_out(pair, FunctionKilled())


def test_function_unreachable_past_a_reconcile_reports_and_loses_nothing(pair: Pair) -> None:
    ride_out(pair, FunctionUnreachable())


def test_crossplane_killed_and_restarted_loses_nothing(pair: Pair) -> None:
    ride_out(pair, Killed("crossplane"))


def test_provider_kubernetes_killed_and_restarted_loses_nothing(pair: Pair) -> None:
    ride_out(pair, ProviderKubernetesKilled())


def test_kube_apiserver_killed_and_restarted_on_the_same_etcd_loses_nothing(pair: Pair) -> None:
    ride_out(pair, Killed("kube-apiserver"))


def test_credentials_deleted_and_restored_keeps_the_kubeconfig(pair: Pair) -> None:
    ride_out(pair, CredentialsDeleted())


# --- an edit burst -------------------------------------------------------------------------------

# The burst's edits of the CoreWeaveCluster's first pool, one a second, each made on the last
# valid spec as a user's edits are: a node count (valid), a count the API server rejects (over
# the XRD's maximum of 1000: never stored), or a spec it stores and the function refuses (a pool
# named as the reserved system pool: a FATAL, nothing applied). Crossplane may coalesce edits
# that come faster than it reconciles, so a valid count may never be applied; an invalid one
# never may, and the last edit's (6) must be.
BURST = (2, "rejected", 3, "refused", 4, "refused", 5, "rejected", "refused", 6)
BURST_INTERVAL_SECONDS = 1.0
RESERVED_POOL = {"name": "modelplane-system", "role": "CPU", "instanceType": "cd-gp-i64-erapids"}


def burst_pools(valid: list[dict[str, Any]], edit: int | str) -> list[dict[str, Any]]:
    """The pools an edit writes, made on the last valid ones."""
    edited = copy.deepcopy(valid)
    if edit == "refused":
        return [*edited, dict(RESERVED_POOL)]
    edited[0]["nodeCount"] = 1001 if edit == "rejected" else edit
    return edited


def applied_target_nodes(pair: Pair, pool: str) -> list[int]:
    """Every targetNodes the API server held for the pool's Object, in order, from the watch
    log (repeats folded)."""
    values: list[int] = []
    member = pair.coreweave
    objects = composed(pair.suite.plane.api, member.name, NAMESPACE, (kinds.KUBERNETES_OBJECT,))
    name = objects[f"nodepool-{pool}"].name
    for change in pair.suite.log.of(member.name, member.kind.kind):
        if change.kind != "Object" or change.name != name:
            continue
        spec = (change.content or {}).get("spec") or {}
        target = spec.get("forProvider", {}).get("manifest", {}).get("spec", {}).get("targetNodes")
        if isinstance(target, int) and (not values or values[-1] != target):
            values.append(target)
    return values


def test_an_edit_burst_applies_the_last_valid_spec_and_deletes_nothing(pair: Pair) -> None:
    api, member = pair.suite.plane.api, pair.coreweave
    pool = str(member.pools[0]["name"])
    valid = [edit for edit in BURST if isinstance(edit, int)]
    assert BURST[-1] == valid[-1], "the burst ends on a valid edit"
    before = pair.settled()
    start = time.monotonic()
    applied_before = applied_target_nodes(pair, pool)
    pools = member.pools
    rejected = []
    for edit in BURST:
        written = burst_pools(pools, edit)
        try:
            api.merge_patch(member.kind, member.name, {"spec": {"nodePools": written}}, NAMESPACE)
        except ApiError as error:
            assert edit == "rejected" and error.status == 422, f"edit {edit}: {error}"
            rejected.append(error.body)
        else:
            assert edit != "rejected", f"the API server stored nodeCount 1001: {written}"
            if isinstance(edit, int):
                pools = written
        time.sleep(BURST_INTERVAL_SECONDS)
    burst_seconds = time.monotonic() - start
    member.manifest["spec"]["nodePools"] = pools
    assert len(rejected) == BURST.count("rejected")
    assert all("spec.nodePools[0].nodeCount" in body for body in rejected), rejected[0]

    after = pair.settled()
    live = pair.cks.get(kinds.CKS_NODEPOOL, pool)
    assert live is not None and live["spec"]["targetNodes"] == valid[-1], live
    seen = applied_target_nodes(pair, pool)[len(applied_before) :]
    assert seen and seen[-1] == valid[-1], f"applied node counts {seen}, last valid {valid[-1]}"
    assert all(value in valid for value in seen), f"an invalid edit was applied: {seen}"
    assert seen == sorted(seen), f"applied out of order: {seen}"
    refused = warning_events(api, NAMESPACE, member.name, "reserved")

    changed = {f"{member.name}/nodepool-{pool}", live_key(kinds.CKS_NODEPOOL, pool)}
    problems = differences(
        {k: v for k, v in before.items() if k not in changed},
        {k: v for k, v in after.items() if k not in changed},
    )
    assert not problems, f"the burst changed more than its pool: {problems}"
    for key in changed:
        assert after[key][0] == before[key][0], f"{key} re-created"
    deletions = pair.deletions_since(start)
    assert not deletions, f"deleted during the burst: {deletions}"
    pair.suite.notes.append(
        f"edit burst: {len(BURST)} edits in {burst_seconds:.1f} s ({len(rejected)} rejected by "
        f"the API server, {BURST.count('refused')} refused by the function: "
        f"{len(refused)} Warning events seen); node counts applied in order: {seen}; nothing "
        "deleted"
    )
