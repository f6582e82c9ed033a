"""The fleet: N CoreWeaveClusters and N CivoClusters made from the committed examples, each with
names of its own."""

from __future__ import annotations

import dataclasses

from harness.e2e import kinds, pair
from harness.e2e.xr import example_xr

# Short enough that every name derived from an XR (composed resources, the Helm release of the
# cluster-autoscaler) stays within its limit, as the examples' names do.
COREWEAVE_NAME = "fleet-east-{index:03d}"
CIVO_NAME = "fleet-lon-{index:03d}"


@dataclasses.dataclass
class Member(pair.Member):
    # Whether its step asks for required resources when converged (engine.py's figure).
    requires_resources: bool

    @property
    def namespace(self) -> str:
        return str(self.manifest["metadata"]["namespace"])

    @property
    def described(self) -> str:
        """How the function's log names the XR: kind/namespace/name."""
        return f"{self.kind.kind}/{self.namespace}/{self.name}"


def fleet(size: int, civo_autoscaled: int) -> list[Member]:
    """`size` XRs of each kind, interleaved (so both kinds wait in the same queues), each an
    example under a name of its own. A CoreWeaveCluster gets a CKS cluster of its own, so its
    pools keep the example's names. Past the first `civo_autoscaled` CivoClusters, the example's
    autoscaled pool is fixed at its initial size, so the XR composes no cluster-autoscaler Release
    (nothing for provider-helm to install in that cluster)."""
    members = []
    for index in range(size):
        coreweave = example_xr("coreweave", COREWEAVE_NAME.format(index=index))
        civo = example_xr("civo", CIVO_NAME.format(index=index))
        if index >= civo_autoscaled:
            for pool in civo["spec"]["nodePools"]:
                pool.pop("minNodeCount", None)
                pool.pop("maxNodeCount", None)
        members += [
            Member(kinds.COREWEAVE_CLUSTER_XR, kinds.COREWEAVE_COMPOSED, coreweave, True),
            Member(kinds.CIVO_CLUSTER_XR, kinds.CIVO_COMPOSED, civo, False),
        ]
    return members


def autoscaled(member: Member) -> bool:
    return any("maxNodeCount" in pool for pool in member.pools)
