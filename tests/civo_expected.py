"""The objects a CivoCluster composes, spelled out literally for CIVO_XR in support.py.

Names carry child_name's hash: they are part of the public contract.
"""

from __future__ import annotations

from typing import Any

CLOUD_NAME = "inference-lon-34d99"
NETWORK_NAME = "inference-lon-network-5c63f"
FIREWALL_NAME = "inference-lon-firewall-856e2"
CLUSTER_NAME = "inference-lon-civo-cluster-54768"
SECRET_NAME = "inference-lon-civo-kubeconfig-e024f"
HELM_PC_NAME = "inference-lon-helm-providerconfig-578d2"
PROVIDER_CONFIG_REF = {"kind": "ClusterProviderConfig", "name": "civo"}
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}

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


def cluster(pools: dict[str, Any] = INLINE_POOL) -> dict[str, Any]:
    return {
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
                "pools": pools,
                "writeKubeconfig": True,
            },
            "writeConnectionSecretToRef": {"name": SECRET_NAME},
            "providerConfigRef": PROVIDER_CONFIG_REF,
        },
    }


def _usage(name: str, kind: str, of_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "protection.crossplane.io/v1beta1",
        "kind": "Usage",
        "metadata": {"name": name},
        "spec": {
            "of": {
                "apiVersion": "vpc.civo.m.upbound.io/v1beta1",
                "kind": kind,
                "resourceRef": {"name": of_name},
            },
            "by": {
                "apiVersion": "kubernetes.civo.m.upbound.io/v1beta1",
                "kind": "Cluster",
                "resourceRef": {"name": CLUSTER_NAME},
            },
            "replayDeletion": True,
        },
    }


USAGE_NETWORK = _usage("inference-lon-usage-network-by-cluster-061b4", "Network", NETWORK_NAME)
USAGE_FIREWALL = _usage("inference-lon-usage-firewall-by-cluster-3ea69", "Firewall", FIREWALL_NAME)


def l40s_pool(*, autoscaled: bool = True) -> dict[str, Any]:
    for_provider: dict[str, Any] = {
        "clusterIdRef": {"name": CLUSTER_NAME},
        "label": "l40s",
        "region": "LON1",
        "size": "an.g1.l40s.kube.x1",
        "taint": [GPU_TAINT],
        "labels": {"modelplane.ai/pool": "l40s", "modelplane.ai/gpu": "nvidia-l40s"},
    }
    spec: dict[str, Any] = {"forProvider": for_provider}
    if autoscaled:
        spec["initProvider"] = {"nodeCount": 1}
        spec["managementPolicies"] = ["Observe", "Create", "Update", "Delete"]
    else:
        for_provider["nodeCount"] = 1
        spec["managementPolicies"] = ["*"]
    spec["providerConfigRef"] = PROVIDER_CONFIG_REF
    return {
        "apiVersion": "kubernetes.civo.m.upbound.io/v1beta1",
        "kind": "NodePool",
        "metadata": {"name": "inference-lon-nodepool-l40s-33090"},
        "spec": spec,
    }


A100_POOL = {
    "apiVersion": "kubernetes.civo.m.upbound.io/v1beta1",
    "kind": "NodePool",
    "metadata": {"name": "inference-lon-nodepool-a100-0193a"},
    "spec": {
        "forProvider": {
            "clusterIdRef": {"name": CLUSTER_NAME},
            "label": "a100",
            "region": "LON1",
            "size": "g4g.kube.small",
            "taint": [GPU_TAINT],
            "labels": {"modelplane.ai/pool": "a100", "modelplane.ai/gpu": "nvidia-a100"},
            "nodeCount": 1,
        },
        "managementPolicies": ["*"],
        "providerConfigRef": PROVIDER_CONFIG_REF,
    },
}

HELM_PROVIDER_CONFIG = {
    "apiVersion": "helm.m.crossplane.io/v1beta1",
    "kind": "ProviderConfig",
    "metadata": {"name": HELM_PC_NAME},
    "spec": {
        "credentials": {
            "source": "Secret",
            "secretRef": {"name": SECRET_NAME, "namespace": "ml-team", "key": "kubeconfig"},
        }
    },
}


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


L40S_GROUP = {"name": "a7c1e0f2-l40s", "minSize": 1, "maxSize": 4}


def base() -> dict[str, dict[str, Any]]:
    return {
        "network": NETWORK,
        "firewall": FIREWALL,
        "civo-cluster": cluster(),
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
