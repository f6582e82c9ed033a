"""A CoreWeaveCluster and a CivoCluster converged side by side, and what they are made of by
identity: the scene of every test that changes the world around converged XRs (a package
upgrade, a fault) and must prove that nothing was re-created, changed or deleted on the way."""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import kinds
from .calls import read_calls
from .kube import Kind, Kube, WaitTimedOut, condition, wait_for
from .runtime import FUNCTION_PROCESS
from .stages import (
    CONVERGE_SECONDS,
    COREWEAVE_FIXED_IN_CLUSTER,
    QUIET_SECONDS,
    delete_coreweave_xr,
    wait_quiet,
)
from .workload import KUBE_SYSTEM, helm_revisions
from .xr import composed, example_xr, external_name

if TYPE_CHECKING:
    from .suite import Suite

NAMESPACE = "ml-team"
# What a test may find for one object: its UID (a re-created object has a new one) and what
# was composed into it (a change is a change the function made, or a provider's drift).
Snapshot = dict[str, tuple[str, Any]]


@dataclass
class Member:
    kind: Kind
    composed_kinds: tuple[Kind, ...]
    manifest: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.manifest["metadata"]["name"])

    @property
    def pools(self) -> list[dict[str, Any]]:
        return list(self.manifest["spec"]["nodePools"])


@dataclass
class Pair:
    suite: Suite
    coreweave: Member
    civo: Member
    # The snapshot keys the pools added so far must make: settled() waits for them all.
    promised: set[str] = field(default_factory=set)
    _cks: Kube | None = None

    @classmethod
    def of(
        cls,
        suite: Suite,
        name: str,
        coreweave_pools: list[dict[str, Any]] | None = None,
        civo_pools: list[dict[str, Any]] | None = None,
    ) -> Pair:
        """`<name>-east` (a CoreWeaveCluster) and `<name>-lon` (a CivoCluster), from the
        committed examples with these pools (None: the example's)."""
        coreweave = example_xr("coreweave", f"{name}-east", coreweave_pools)
        civo = example_xr("civo", f"{name}-lon", civo_pools)
        return cls(
            suite,
            Member(kinds.COREWEAVE_CLUSTER_XR, kinds.COREWEAVE_COMPOSED, coreweave),
            Member(kinds.CIVO_CLUSTER_XR, kinds.CIVO_COMPOSED, civo),
        )

    @property
    def members(self) -> tuple[Member, Member]:
        return (self.coreweave, self.civo)

    def apply(self) -> None:
        for member in self.members:
            self.suite.plane.api.apply(member.kind, member.manifest)

    def add_pool(self, member: Member, pool: dict[str, Any]) -> set[str]:
        """Appends a pool to the XR's spec (a merge patch of the whole list, as `kubectl edit`);
        returns the snapshot keys it must make: its composed pool, and for a CoreWeaveCluster
        the NodePool that Object applies in the cluster."""
        pools = [*member.pools, copy.deepcopy(pool)]
        edit = {"spec": {"nodePools": pools}}
        self.suite.plane.api.merge_patch(member.kind, member.name, edit, NAMESPACE)
        member.manifest["spec"]["nodePools"] = pools
        name = str(pool["name"])
        makes = {f"{member.name}/nodepool-{name}"}
        if member is self.coreweave:
            makes.add(live_key(kinds.CKS_NODEPOOL, name))
        self.promised |= makes
        return makes

    @property
    def cks(self) -> Kube:
        """The API of the CoreWeaveCluster's CKS cluster (looked up once: a cluster keeps its
        ID, and the management API server may be down when it is next needed)."""
        if self._cks is None:
            self._cks = self.suite.cks_cluster(NAMESPACE, self.coreweave.name).api
        return self._cks

    def live_civo(self) -> Snapshot:
        """What Helm installed in the CivoCluster's own cluster: each Deployment of kube-system
        (UID and spec: nothing runs it, so only Helm writes it) and each Helm release's newest
        revision (an upgrade, even to the same values, is a new one)."""
        cluster_id = external_name(
            self.suite.plane.api, self.civo.name, NAMESPACE, kinds.CIVO_CLUSTER, "civo-cluster"
        )
        inside = self.suite.clusters.get(cluster_id)
        # An exited API server fails here with its exit code and log, not as a refused request.
        self.suite.plane.processes.ready_now(inside.process)
        found: Snapshot = {}
        live = f"live {self.civo.name}"
        for deployment in inside.api.list(kinds.DEPLOYMENT, KUBE_SYSTEM):
            meta = deployment["metadata"]
            found[f"{live} Deployment/{meta['name']}"] = (meta["uid"], deployment["spec"])
        for name, (revision, status) in helm_revisions(inside.api).items():
            found[f"{live} Helm release/{name}"] = (name, {"revision": revision, "status": status})
        return found

    def snapshot(self) -> Snapshot:
        """UID and content of everything both XRs composed (by XR and key), and of the live
        in-cluster objects (all but metadata and status: their own controllers write those)."""
        found = self._composed()
        for key, (kind, name, live) in self._live_objects().items():
            assert live is not None, f"{kind.kind} {name} is not in the cluster"
            content = {k: v for k, v in live.items() if k not in ("metadata", "status")}
            found[key] = (live["metadata"]["uid"], content)
        return {**found, **self.live_civo()}

    def _composed(self) -> Snapshot:
        api = self.suite.plane.api
        return {
            f"{member.name}/{key}": (ref.uid, ref.content)
            for member in self.members
            for key, ref in composed(api, member.name, NAMESPACE, member.composed_kinds).items()
        }

    def _live_objects(self) -> dict[str, tuple[Kind, str, dict[str, Any] | None]]:
        """The CoreWeaveCluster's objects inside its cluster by snapshot key, None where it is
        not in the cluster: one NodePool per pool (named as the pool), the system pool and the
        StorageClass clone."""
        pools = [(kinds.CKS_NODEPOOL, str(p["name"])) for p in self.coreweave.pools]
        return {
            live_key(kind, name): (kind, name, self.cks.get(kind, name))
            for kind, name in [*pools, *COREWEAVE_FIXED_IN_CLUSTER]
        }

    def settled(self) -> Snapshot:
        """Waits until both XRs are Synced and Ready on their latest generation (a reconcile
        has succeeded since their last edit: a condition left from before a fault proves
        nothing), everything they must make exists (the live in-cluster objects and what the
        added pools make), and nothing of theirs has changed for a while.

        The generation alone does not prove the latest spec was composed. Crossplane's status
        patch after composing reads the XR back, edits made meanwhile included (v2.4.0
        composition_functions.go: "relying on the status patch ... to load the latest version"),
        and Synced and Ready then take that object's generation (crossplane-runtime's
        ObservedGenerationPropagationManager): a reconcile that composed the spec from before an
        edit reports the edit's generation. If the XR's watch circuit breaker dropped the edit's
        event, the pool is composed only at the next poll.

        Nor does a quiet, Ready XR prove the function serving now composed it: just after an
        upgrade or a rollback everything is still what the last revision made, and stays so
        until Crossplane's next reconcile calls the new one (a poll, up to a minute later).
        """
        self._wait_composed_by_serving_function()
        self._wait_reconciled()
        unmade: list[str] = []

        def all_made() -> bool:
            self._check_function_running()
            live = self._live_objects()
            # Every live in-cluster object too, not only the added pools': under load
            # provider-kubernetes may apply one (the StorageClass clone, seen in the upgrade
            # test) after both XRs already report Ready.
            expected = self.promised | set(live)
            made = {key for key, (_, _, obj) in live.items() if obj is not None}
            unmade[:] = sorted(expected - made - set(self._composed()))
            return not unmade

        try:
            wait_for("what the XRs make, in the cluster too", all_made, CONVERGE_SECONDS)
        except WaitTimedOut as error:
            raise WaitTimedOut(f"{error}; never made: {unmade}") from error
        for member in self.members:
            wait_quiet(self.suite.log, member.kind, member.name, QUIET_SECONDS)
        # Still so once quiet: a pool just made was not Ready when it appeared.
        self._wait_reconciled()
        return self.snapshot()

    def _wait_composed_by_serving_function(self) -> None:
        runtime = self.suite.runtime

        def all_called() -> bool:
            self._check_function_running()
            called = {
                c.xr for c in read_calls(runtime.function_log) if c.at >= runtime.serving_since
            }
            return all(f"{m.kind.kind}/{NAMESPACE}/{m.name}" in called for m in self.members)

        wait_for(
            "each XR composed by the function process serving now",
            all_called,
            CONVERGE_SECONDS,
            interval=1,
        )

    def _wait_reconciled(self) -> None:
        for member in self.members:
            wait_for(
                f"{member.name} Synced and Ready on its latest generation",
                functools.partial(self._reconciled, member),
                CONVERGE_SECONDS,
            )

    def _reconciled(self, member: Member) -> bool:
        self._check_function_running()
        xr = self.suite.plane.api.get(member.kind, member.name, NAMESPACE) or {}
        generation = xr.get("metadata", {}).get("generation")
        return all(
            condition(xr, kind).get("status") == "True"
            and condition(xr, kind).get("observedGeneration") == generation
            for kind in ("Synced", "Ready")
        )

    def _check_function_running(self) -> None:
        """Fails the wait at once, with the function's log, if its process has exited: nothing
        the XRs wait for can happen then (a port taken at its start once cost a 600 s wait)."""
        self.suite.plane.processes.check_running(FUNCTION_PROCESS)

    def last_change_at(self) -> float:
        """When the watch log last saw either XR or anything they composed change."""
        return max(self.suite.log.last_change_at(m.name, m.kind.kind) for m in self.members)

    def deletions_since(self, start: float) -> list[str]:
        """Every DELETED watch event, or deletion begun, of anything either XR composed since
        `start`."""
        found = []
        for member in self.members:
            for change in self.suite.log.of(member.name, member.kind.kind):
                if change.at >= start and change.kind != member.kind.kind and change.deleting:
                    found.append(f"{change.type} {change.kind}/{change.name} at {change.at:.1f}")
        return found

    def delete(self) -> None:
        self.suite.plane.api.delete(self.civo.kind, self.civo.name, NAMESPACE)
        delete_coreweave_xr(self.suite, self.coreweave.name, NAMESPACE)


def live_key(kind: Kind, name: str) -> str:
    """The snapshot key of an object in the CoreWeaveCluster's cluster."""
    return f"live {kind.kind}/{name}"


def differences(before: Snapshot, after: Snapshot, new: frozenset[str] = frozenset()) -> list[str]:
    """What changed between two snapshots, but for the `new` keys, which must have appeared."""
    found = [f"gone: {key}" for key in before if key not in after]
    found += [f"new: {key}" for key in after if key not in before and key not in new]
    found += [f"never made: {key}" for key in new if key not in after]
    for key in before.keys() & after.keys():
        if before[key][0] != after[key][0]:
            found.append(f"re-created (new UID): {key}")
        elif before[key][1] != after[key][1]:
            found.append(f"changed: {key}")
    return sorted(found)
