"""The objects a CivoCluster composes, spelled out literally for CIVO_XR in
harness/fixtures.py.

Names carry child_name's hash: they are part of the public contract.
"""

from __future__ import annotations

from typing import Any

from tests.coreweave_expected import GPU_TAINT, as_ready, provider_config, usage

CLOUD_NAME = "inference-lon-34d99"
NETWORK_NAME = "inference-lon-network-5c63f"
FIREWALL_NAME = "inference-lon-firewall-856e2"
CLUSTER_NAME = "inference-lon-civo-cluster-54768"
SECRET_NAME = "inference-lon-civo-kubeconfig-e024f"
HELM_PC_NAME = "inference-lon-helm-providerconfig-578d2"
PROVIDER_CONFIG_REF = {"kind": "ClusterProviderConfig", "name": "civo"}

NETWORK = {
    "apiVersion": "vpc.civo.m.upbound.io/v1beta1",
    "kind": "Network",
    "metadata": {"name": NETWORK_NAME},
    "spec": {
        "forProvider": {"label": CLOUD_NAME, "region": "LON1"},
        "providerConfigRef": PROVIDER_CONFIG_REF,
    },
}

FIREWALL = {
    "apiVersion": "vpc.civo.m.upbound.io/v1beta1",
    "kind": "Firewall",
    "metadata": {"name": FIREWALL_NAME},
    "spec": {
        "forProvider": {
            "name": CLOUD_NAME,
            "region": "LON1",
            "networkIdRef": {"name": NETWORK_NAME},
            "createDefaultRules": True,
        },
        "providerConfigRef": PROVIDER_CONFIG_REF,
    },
}

INLINE_POOL = {
    "label": "system",
    "size": "g4s.kube.medium",
    "nodeCount": 2,
    "labels": {"modelplane.ai/pool": "system"},
}


CLUSTER: dict[str, Any] = {
    "apiVersion": "kubernetes.civo.m.upbound.io/v1beta1",
    "kind": "Cluster",
    "metadata": {"name": CLUSTER_NAME},
    "spec": {
        "forProvider": {
            "name": CLOUD_NAME,
            "region": "LON1",
            "cni": "cilium",
            "applications": "-traefik2-nodeport",
            "kubernetesVersion": "1.34.1-k3s1",
            "networkIdRef": {"name": NETWORK_NAME},
            "firewallIdRef": {"name": FIREWALL_NAME},
            "pools": INLINE_POOL,
            "writeKubeconfig": True,
        },
        "writeConnectionSecretToRef": {"name": SECRET_NAME},
        "providerConfigRef": PROVIDER_CONFIG_REF,
    },
}


USAGE_NETWORK = usage("inference-lon-usage-network-by-cluster-061b4", NETWORK, CLUSTER)
USAGE_FIREWALL = usage("inference-lon-usage-firewall-by-cluster-3ea69", FIREWALL, CLUSTER)


def nodepool_spec(
    pool: str, size: str, accelerator: str | None, *, autoscaled: bool, count: int = 1
) -> dict[str, Any]:
    """A pool's NodePool spec, GPU-tainted if it has an accelerator: an autoscaled one leaves
    its size to the cluster-autoscaler."""
    labels = {"modelplane.ai/pool": pool}
    for_provider: dict[str, Any] = {
        "clusterIdRef": {"name": CLUSTER_NAME},
        "label": pool,
        "region": "LON1",
        "size": size,
        "labels": labels,
    }
    if accelerator is not None:
        for_provider["taint"] = [GPU_TAINT]
        labels["modelplane.ai/gpu"] = accelerator
    spec: dict[str, Any] = {"forProvider": for_provider, "providerConfigRef": PROVIDER_CONFIG_REF}
    if autoscaled:
        spec["initProvider"] = {"nodeCount": count}
        spec["managementPolicies"] = ["Observe", "Create", "Update", "Delete"]
    else:
        for_provider["nodeCount"] = count
        spec["managementPolicies"] = ["*"]
    return spec


def nodepool(
    pool: str, object_name: str, size: str, accelerator: str, *, autoscaled: bool
) -> dict[str, Any]:
    return {
        "apiVersion": "kubernetes.civo.m.upbound.io/v1beta1",
        "kind": "NodePool",
        "metadata": {"name": object_name},
        "spec": nodepool_spec(pool, size, accelerator, autoscaled=autoscaled),
    }


def l40s_pool(*, autoscaled: bool = True) -> dict[str, Any]:
    return nodepool(
        "l40s",
        "inference-lon-nodepool-l40s-33090",
        "an.g1.l40s.kube.x1",
        "nvidia-l40s",
        autoscaled=autoscaled,
    )


A100_POOL = nodepool(
    "a100", "inference-lon-nodepool-a100-0193a", "g4g.kube.small", "nvidia-a100", autoscaled=False
)

HELM_PROVIDER_CONFIG = provider_config("helm.m.crossplane.io/v1beta1", HELM_PC_NAME, SECRET_NAME)


def autoscaler(groups: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "helm.m.crossplane.io/v1beta1",
        "kind": "Release",
        "metadata": {
            "name": "inference-lon-cluster-autoscaler-5dfa4",
            "annotations": {
                "crossplane.io/external-name": "inference-lon-cluster-autoscaler-5dfa4"
            },
        },
        "spec": {
            "forProvider": {
                "chart": {
                    "name": "cluster-autoscaler",
                    "repository": "https://kubernetes.github.io/autoscaler",
                    "version": "9.59.0",
                },
                "namespace": "kube-system",
                "values": {
                    "cloudProvider": "civo",
                    "secretKeyRefNameOverride": "civo-api-access",
                    "autoscalingGroups": groups,
                    "extraArgs": {
                        "skip-nodes-with-local-storage": False,
                        "skip-nodes-with-system-pods": False,
                    },
                    # CIVO_XR runs Kubernetes 1.34.
                    "image": {"tag": "v1.34.5"},
                },
            },
            "managementPolicies": ["Observe", "Create", "Update", "LateInitialize"],
            "providerConfigRef": {"kind": "ProviderConfig", "name": HELM_PC_NAME},
        },
    }


L40S_POOL_ID = "a7c1e0f2-l40s"
L40S_GROUP = {"name": L40S_POOL_ID, "minSize": 1, "maxSize": 4}


def cluster_up(**at_provider: Any) -> dict[str, dict[str, Any]]:
    """The cluster as the provider reports it once Civo created it."""
    return {"civo-cluster": as_ready(CLUSTER, atProvider={"id": "5f0b-cluster", **at_provider})}


def autoscaled_pool_up(**at_provider: Any) -> dict[str, dict[str, Any]]:
    """The cluster up and the autoscaled pool's ID known: the cluster-autoscaler can install."""
    pool = as_ready(l40s_pool(), atProvider={"id": L40S_POOL_ID})
    pool["metadata"]["annotations"] = {"crossplane.io/external-name": L40S_POOL_ID}
    return {**cluster_up(**at_provider), "nodepool-l40s": pool}


def base() -> dict[str, dict[str, Any]]:
    return {
        "network": NETWORK,
        "firewall": FIREWALL,
        "civo-cluster": CLUSTER,
        "usage-network-by-cluster": USAGE_NETWORK,
        "usage-firewall-by-cluster": USAGE_FIREWALL,
    }


def converged() -> dict[str, dict[str, Any]]:
    return {
        **base(),
        "nodepool-l40s": l40s_pool(),
        "nodepool-a100": A100_POOL,
        "helm-providerconfig": HELM_PROVIDER_CONFIG,
        "cluster-autoscaler": autoscaler([L40S_GROUP]),
    }
