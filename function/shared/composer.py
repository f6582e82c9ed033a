"""What both clouds' composers share: the XR, what was observed, and the Outcome being built."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from function.shared.naming import cloud_name, composed_name
from function.shared.observed import Observed
from function.shared.outcome import Composite, Outcome
from function.shared.readiness import (
    PoolCapacity,
    ready_when_exists,
    report_pools,
    xr_ready,
)
from function.shared.resources import resource_ref, usage
from function.shared.validation import Credentials

# (apiVersion, kind, composition resource name) of a resource this XR composes.
ComposedRef = tuple[str, str, str]
# The condition that says whether the kubeconfig in status.secrets can be used.
CONDITION_ACCESS = "ClusterAccess"


@dataclasses.dataclass(frozen=True, slots=True)
class ClusterProblem:
    """Why a cluster whose kubeconfig exists cannot be used: the ClusterAccess condition."""

    reason: str
    message: str


class Composer:
    # The cloud API's limit on cluster and network names.
    cloud_name_limit: ClassVar[int]
    # The cloud as messages name it, the key of its cluster's managed resource, and the
    # statuses it reports of a cluster that cannot be used.
    cloud: ClassVar[str]
    cluster_key: ClassVar[str]
    not_serving: ClassVar[tuple[str, ...]]

    def __init__(self, xr: Composite, credentials: Credentials, observed: Observed) -> None:
        self.xr = xr
        self.observed = observed
        self.out = Outcome()
        self.cloud_name = cloud_name(xr.namespace, xr.name, self.cloud_name_limit)
        self.provider_config_ref = {"kind": credentials.type, "name": credentials.name}
        # Every pool's nodes once the pools are composed; None before.
        self.pools: list[PoolCapacity] | None = None

    def compose(self) -> Outcome:
        """The cloud's composition; what composed() returns, before the shared rules."""
        raise NotImplementedError

    def composed(self) -> Outcome:
        """The cloud's composition with the rules both clouds share applied.

        The kubeconfig cannot be used while the cloud reports the cluster failed or gone:
        ClusterAccess then says why, with a Warning; nothing composed changes. The XR is Ready
        only with cluster access (consumers wait for Ready and then read the Secret
        status.secrets names), and see readiness.xr_ready for the rest.
        """
        out = self.compose()
        access = next((c for c in out.conditions if c.typ == CONDITION_ACCESS), None)
        serves = access is not None and access.status == "True"
        problem = self._cluster_problem() if serves else None
        if access is not None and problem is not None:
            out.conditions.remove(access)
            out.condition(CONDITION_ACCESS, False, problem.reason, problem.message)
            out.warning(problem.message)
        report_pools(out, self.pools or [])
        out.ready = xr_ready(
            out,
            serves=serves and problem is None,
            was_ready=self._was_ready,
            pools_at_target=self.pools is not None and all(p.at_target for p in self.pools),
        )
        return out

    def _was_ready(self) -> bool:
        """Whether the XR is Ready now, as Crossplane last wrote it."""
        return self.xr.status.condition_status("Ready", at=("conditions",)) == "True"

    def _cluster_problem(self) -> ClusterProblem | None:
        """Why the kubeconfig cannot be used though it exists: the cluster's managed resource is
        gone, or its cloud reports one of `not_serving` in status.atProvider.status. None while
        it serves or updates in place (any other status, or none reported)."""
        cluster = self.observed[self.cluster_key]
        if not cluster.exists:
            return ClusterProblem(
                reason="ClusterGone",
                message=f'{self.cloud} cluster "{self.cloud_name}" is gone from the control '
                "plane; it is created again, and the kubeconfig follows once it is Ready",
            )
        status = cluster.string("status", "atProvider", "status")
        if status not in self.not_serving:
            return None
        return ClusterProblem(
            reason="ClusterNotServing",
            message=f'{self.cloud} reports cluster "{self.cloud_name}" as {status}: it cannot '
            "be used",
        )

    def name(self, *parts: str) -> str:
        return composed_name(self.xr.name, *parts)

    def compose_usage(self, key: str, *, of: ComposedRef, by: ComposedRef) -> None:
        """Block deleting `of` until `by` is gone; both are resources this XR composes."""
        self.out.compose(
            key,
            usage(
                self.name(key),
                of=resource_ref(of[0], of[1], self.name(of[2])),
                by=resource_ref(by[0], by[1], self.name(by[2])),
            ),
            ready=ready_when_exists(self.observed[key]),
        )
