"""The CivoCluster spec as the XRD defines it, and its validation."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from function.input import CIVO_POOL_NAME_PATTERN
from function.shared.validation import (
    GPU,
    Credentials,
    Integer,
    SpecModel,
    SpecParser,
    StrictStr,
    between,
    text,
)

API_VERSION = "infrastructure.modelplane.ai/v1alpha1"
KIND = "CivoCluster"


class NodePool(SpecModel):
    name: Annotated[StrictStr, text(1, 40, CIVO_POOL_NAME_PATTERN)]
    role: Literal["System", "GPU"]
    size: Annotated[StrictStr, text(1, 63)]
    nodeCount: Annotated[Integer, between(1, 1000)] = 1
    minNodeCount: Annotated[Integer, between(1, 1000)] | None = None
    maxNodeCount: Annotated[Integer, between(1, 1000)] | None = None
    gpu: GPU | None = None

    @property
    def min_nodes(self) -> int:
        return self.minNodeCount if self.minNodeCount is not None else self.nodeCount


class CivoClusterSpec(SpecModel):
    region: Annotated[StrictStr, text(1, 32)]
    kubernetesVersion: Annotated[StrictStr, text(1, 32)] | None = None
    credentials: Credentials = Credentials()
    nodePools: Annotated[list[NodePool], Field(min_length=1, max_length=8)]

    @property
    def first_system_pool(self) -> NodePool | None:
        """The pool Civo creates with the cluster as its inline pool, if the spec names one;
        without it the cluster gets the step input's default System pool."""
        return next((p for p in self.nodePools if p.role == "System"), None)


# The Civo cloud provider of cluster-autoscaler applies a node group of this name to every pool.
AUTOSCALER_DEFAULT_GROUP = "workers"


def _pool_rules(pools: Any) -> list[str]:
    """Civo's own rules on spec.nodePools, checked on the raw values like the shared ones."""
    if not isinstance(pools, list) or not pools:
        return []
    problems = [
        f"spec.nodePools[{i}].name: an autoscaled pool cannot be named "
        f'"{AUTOSCALER_DEFAULT_GROUP}": its Civo pool ID would be "{AUTOSCALER_DEFAULT_GROUP}", '
        "which the cluster-autoscaler treats as the node group of every pool, so its bounds "
        "would apply to all pools; rename the pool or remove maxNodeCount"
        for i, p in enumerate(pools)
        if isinstance(p, dict)
        and p.get("name") == AUTOSCALER_DEFAULT_GROUP
        and p.get("maxNodeCount") is not None
    ]
    first_system = next(
        (i for i, p in enumerate(pools) if isinstance(p, dict) and p.get("role") == "System"), None
    )
    if first_system is not None and pools[first_system].get("maxNodeCount") is not None:
        problems.append(
            f"spec.nodePools[{first_system}].maxNodeCount: the first System pool is the "
            "cluster's inline pool and cannot autoscale; remove maxNodeCount (and minNodeCount)"
        )
    return problems


_SPEC = SpecParser(CivoClusterSpec, KIND, _pool_rules)
parse_spec = _SPEC.parse
validated_spec = _SPEC.validated
