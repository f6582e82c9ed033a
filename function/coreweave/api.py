"""The CoreWeaveCluster spec as the XRD defines it, and its validation."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from function.shared.validation import (
    GPU,
    Credentials,
    Integer,
    SpecModel,
    SpecParser,
    StrictStr,
    between,
    quote,
    text,
)

API_VERSION = "infrastructure.modelplane.ai/v1alpha1"
KIND = "CoreWeaveCluster"

POOL_NAME_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
# The in-cluster name of the CPU pool the function adds; a user pool may not take it.
SYSTEM_POOL_NAME = "modelplane-system"


class NodePool(SpecModel):
    name: Annotated[StrictStr, text(1, 40, POOL_NAME_PATTERN)]
    role: Literal["GPU", "CPU"]
    instanceType: Annotated[StrictStr, text(1, 63)]
    nodeCount: Annotated[Integer, between(0, 1000)] = 1
    minNodeCount: Annotated[Integer, between(0, 1000)] | None = None
    maxNodeCount: Annotated[Integer, between(1, 1000)] | None = None
    gpu: GPU | None = None

    @property
    def is_gpu(self) -> bool:
        return self.role == "GPU"

    @property
    def autoscaled(self) -> bool:
        return self.maxNodeCount is not None

    @property
    def min_nodes(self) -> int:
        """The autoscaler's lower bound: minNodeCount, else nodeCount, else 1 (API reference)."""
        if self.minNodeCount is not None:
            return self.minNodeCount
        return self.nodeCount or 1


class CoreWeaveClusterSpec(SpecModel):
    zone: Annotated[StrictStr, text(1, 32)]
    kubernetesVersion: Annotated[StrictStr, StringConstraints(pattern=r"^[0-9]+\.[0-9]+$")] = "1.37"
    credentials: Credentials = Credentials()
    nodePools: Annotated[list[NodePool], Field(min_length=1, max_length=8)]


def _reserved_names(pools: Any) -> list[str]:
    if not isinstance(pools, list):
        return []
    return [
        f"spec.nodePools[{i}].name: {quote(SYSTEM_POOL_NAME)} is reserved for the system pool "
        "the function adds; choose another name"
        for i, pool in enumerate(pools)
        if isinstance(pool, dict) and pool.get("name") == SYSTEM_POOL_NAME
    ]


_SPEC = SpecParser(CoreWeaveClusterSpec, KIND, _reserved_names)
parse_spec = _SPEC.parse
validated_spec = _SPEC.validated
