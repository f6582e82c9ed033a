"""The step input (package/input CRD): operator choices that are not part of the XR API.

Every field has a default, so a Composition may omit the input entirely.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from function.shared.cache import ParseCache
from function.shared.validation import (
    Integer,
    SpecModel,
    SpecProblems,
    StrictBool,
    StrictStr,
    between,
    parse,
    text,
)

_CIDR = r"^([0-9]{1,3}\.){3}[0-9]{1,3}/[0-9]{1,2}$"
# A Civo pool label (^[a-zA-Z0-9-_.]+$) that is also a Kubernetes label value.
CIVO_POOL_NAME_PATTERN = r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
_DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"


class CoreWeaveSystemPool(SpecModel):
    # The smallest CPU type in the CKS autoscaler's scale-from-zero table.
    instanceType: Annotated[StrictStr, text(1, 63)] = "cd-gp-i64-erapids"
    nodeCount: Annotated[Integer, between(1, 10)] = 1


class CoreWeaveVPCPrefixes(SpecModel):
    # The provider's documented example ranges; they do not overlap each other.
    pod: Annotated[StrictStr, text(9, 18, _CIDR)] = "10.0.0.0/13"
    service: Annotated[StrictStr, text(9, 18, _CIDR)] = "10.16.0.0/22"
    internalLoadBalancer: Annotated[StrictStr, text(9, 18, _CIDR)] = "10.32.4.0/22"


class CoreWeaveInput(SpecModel):
    systemPool: CoreWeaveSystemPool = CoreWeaveSystemPool()
    vpcPrefixes: CoreWeaveVPCPrefixes = CoreWeaveVPCPrefixes()
    storageClassName: Annotated[StrictStr, text(1, 253, _DNS_SUBDOMAIN)] = "shared-vast-delete"


class ClusterAutoscalerChart(SpecModel):
    chartRepository: Annotated[StrictStr, text(1, 512, r"^(https|oci)://")] = (
        "https://kubernetes.github.io/autoscaler"
    )
    # Pinned: an unpinned chart would be late-initialised to whatever is newest at install.
    chartVersion: Annotated[StrictStr, text(5, 32, r"^[0-9]+\.[0-9]+\.[0-9]+$")] = "9.59.0"
    # Unset: the release matching the cluster's Kubernetes minor (function/civo/autoscaler.py).
    imageTag: Annotated[StrictStr, text(1, 128, r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")] | None = None
    # False as in Civo's own autoscaler, so nodes with emptyDir model caches can scale down.
    skipNodesWithLocalStorage: StrictBool = False
    skipNodesWithSystemPods: StrictBool = False


class CivoSystemPool(SpecModel):
    # What Modelplane's own Civo cluster function gives every cluster for its controllers:
    # Civo's Performance 4 vCPU / 16 GiB size, both nodes up front (the pool never autoscales).
    name: Annotated[StrictStr, text(1, 40, CIVO_POOL_NAME_PATTERN)] = "system"
    size: Annotated[StrictStr, text(1, 63)] = "g4p.kube.small"
    nodeCount: Annotated[Integer, between(1, 1000)] = 2


class CivoInput(SpecModel):
    # Civo is deprecating flannel; cilium also enforces NetworkPolicies.
    cni: Literal["flannel", "cilium"] = "cilium"
    # The serving stack brings its own gateway, so Civo's default Traefik is removed.
    applications: Annotated[StrictStr, text(0, 1024)] = "-traefik2-nodeport"
    clusterAutoscaler: ClusterAutoscalerChart = ClusterAutoscalerChart()
    # The inline pool of a cluster whose spec has no System pool.
    systemPool: CivoSystemPool = CivoSystemPool()


class StepInput(SpecModel):
    coreweave: CoreWeaveInput = CoreWeaveInput()
    civo: CivoInput = CivoInput()


DEFAULT_INPUT = StepInput()


def parse_input(data: dict[str, Any] | None) -> StepInput:
    """The step input with defaults applied; SpecProblems names each bad field as input.<path>."""
    if not data:
        return DEFAULT_INPUT
    fields = {k: v for k, v in data.items() if k not in ("apiVersion", "kind", "metadata")}
    return parse(StepInput, fields, root="input", subject="function input")


# A Composition's input is the same on every call; distinct inputs are few and small.
_PARSED: ParseCache[StepInput] = ParseCache(1024 * 1024, SpecProblems)


def cached_input(key: bytes, load: Callable[[], dict[str, Any] | None]) -> StepInput:
    """parse_input of the input whose serialized form is key, parsed once per distinct input."""
    return _PARSED.parse(key, load, parse_input)
