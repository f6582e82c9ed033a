"""The objects a CoreWeaveCluster composes, spelled out literally for COREWEAVE_XR in
harness/fixtures.py.

Names carry child_name's hash: they are part of the public contract, so a change here is a
change users would see as deleted and recreated infrastructure.
"""

from __future__ import annotations

import base64
import copy
from typing import Any

from harness.fixtures import ENDPOINT, NAMESPACE, ORG_TOKEN, READY_STATUS, secret_provider_config

CLOUD_NAME = "inference-east-c7d16"
VPC_NAME = "inference-east-vpc-99124"
CLUSTER_NAME = "inference-east-cks-cluster-6787a"
SECRET_NAME = "inference-east-kubeconfig-08981"
PROVIDER_CONFIG_NAME = "inference-east-kubernetes-providerconfig-a4985"
PROVIDER_CONFIG_REF = {"kind": "ClusterProviderConfig", "name": "coreweave"}
OBJECT_PC_REF = {"kind": "ProviderConfig", "name": PROVIDER_CONFIG_NAME}
NODEPOOL_READINESS = {
    "policy": "DeriveFromCelQuery",
    "celQuery": "has(object.status) && has(object.status.conditions) && "
    "object.status.conditions.exists(c, c.type == 'Validated' && c.status == 'True')",
}

VPC = {
    "apiVersion": "networking.coreweave.m.crossplane.io/v1alpha1",
    "kind": "VPC",
    "metadata": {"name": VPC_NAME},
    "spec": {
        "forProvider": {
            "name": CLOUD_NAME,
            "zone": "US-EAST-04A",
            "vpcPrefixes": [
                {"name": "pod", "value": "10.0.0.0/13"},
                {"name": "service", "value": "10.16.0.0/22"},
                {"name": "internal-lb", "value": "10.32.4.0/22"},
            ],
        },
        "providerConfigRef": PROVIDER_CONFIG_REF,
    },
}

CLUSTER: dict[str, Any] = {
    "apiVersion": "cks.coreweave.m.crossplane.io/v1alpha1",
    "kind": "Cluster",
    "metadata": {"name": CLUSTER_NAME},
    "spec": {
        "forProvider": {
            "name": CLOUD_NAME,
            "zone": "US-EAST-04A",
            "version": "v1.37",
            "public": True,
            "vpcIdRef": {"name": VPC_NAME},
            "podCidrName": "pod",
            "serviceCidrName": "service",
            "internalLbCidrNames": ["internal-lb"],
        },
        "providerConfigRef": PROVIDER_CONFIG_REF,
    },
}

KUBECONFIG_TEXT = f"""apiVersion: v1
kind: Config
clusters:
- name: "{CLOUD_NAME}"
  cluster:
    server: "https://{ENDPOINT}"
contexts:
- name: "{CLOUD_NAME}"
  context:
    cluster: "{CLOUD_NAME}"
    user: "{CLOUD_NAME}"
current-context: "{CLOUD_NAME}"
users:
- name: "{CLOUD_NAME}"
  user:
    token: "{ORG_TOKEN}"
"""


KUBECONFIG_SECRET = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {
        "name": SECRET_NAME,
        # The credentials Secret CLUSTER_PROVIDER_CONFIG names, remembered on the kubeconfig.
        "annotations": {
            "inference.fn.modelplane.ai/credentials-secret": "crossplane-system/coreweave-creds"
        },
    },
    "type": "Opaque",
    "data": {"kubeconfig": base64.b64encode(KUBECONFIG_TEXT.encode()).decode()},
}


def provider_config(api_version: str, name: str, secret: str) -> dict[str, Any]:
    """A ProviderConfig that reads the cluster's kubeconfig from the Secret `secret`."""
    ref = {"name": secret, "namespace": NAMESPACE, "key": "kubeconfig"}
    return secret_provider_config(api_version, "ProviderConfig", name, ref)


PROVIDER_CONFIG = provider_config(
    "kubernetes.m.crossplane.io/v1alpha1", PROVIDER_CONFIG_NAME, SECRET_NAME
)


def as_ready(body: dict[str, Any], **status: Any) -> dict[str, Any]:
    """body as observed once its provider reports it Ready, with status besides."""
    return {**copy.deepcopy(body), "status": {**READY_STATUS, **status}}


def usage(name: str, of: dict[str, Any], by: dict[str, Any]) -> dict[str, Any]:
    """The Usage that keeps the expected object `of` while the expected object `by` exists."""

    def ref(obj: dict[str, Any]) -> dict[str, Any]:
        return {
            "apiVersion": obj["apiVersion"],
            "kind": obj["kind"],
            "resourceRef": {"name": obj["metadata"]["name"]},
        }

    return {
        "apiVersion": "protection.crossplane.io/v1beta1",
        "kind": "Usage",
        "metadata": {"name": name},
        "spec": {"of": ref(of), "by": ref(by), "replayDeletion": True},
    }


USAGE_VPC = usage("inference-east-usage-vpc-by-cluster-ee40c", VPC, CLUSTER)
USAGE_KUBECONFIG = usage(
    "inference-east-usage-kubeconfig-by-providerconfig-dc1bc", KUBECONFIG_SECRET, PROVIDER_CONFIG
)


# Every in-cluster Object but the observer: no Delete, so deleting the XR never needs the cluster.
IN_CLUSTER_POLICIES = ["Observe", "Create", "Update", "LateInitialize"]


def in_cluster_object(
    object_name: str, manifest: dict[str, Any], policies: list[str] = IN_CLUSTER_POLICIES
) -> dict[str, Any]:
    """An Object of provider-kubernetes that manages `manifest` in the CKS cluster."""
    return {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "metadata": {"name": object_name},
        "spec": {
            "forProvider": {"manifest": manifest},
            "providerConfigRef": OBJECT_PC_REF,
            "managementPolicies": policies,
        },
    }


def nodepool_object(
    object_name: str, pool: str, spec: dict[str, Any], policies: list[str] = IN_CLUSTER_POLICIES
) -> dict[str, Any]:
    manifest = {
        "apiVersion": "compute.coreweave.com/v1alpha1",
        "kind": "NodePool",
        "metadata": {"name": pool},
        "spec": spec,
    }
    body = in_cluster_object(object_name, manifest, policies)
    body["spec"]["readiness"] = NODEPOOL_READINESS
    return body


def running(
    pool_object: dict[str, Any], current: int | None = None, queued: int = 0
) -> dict[str, Any]:
    """status.atProvider of a pool's Object: the NodePool as CKS validated it, running `current`
    of its nodes (all of them unless given) with `queued` more waiting for capacity."""
    live = copy.deepcopy(pool_object["spec"]["forProvider"]["manifest"])
    live["metadata"]["uid"] = "uid-" + live["metadata"]["name"]
    target = live["spec"].get("targetNodes", 0)
    live["status"] = {
        "conditions": [{"type": "Validated", "status": "True", "reason": "Valid"}],
        "currentNodes": target if current is None else current,
        "queuedNodes": queued,
    }
    return {"manifest": live}


# What the user is told of a pool ("%s") no longer in spec.nodePools: its Object re-applied with
# Delete, then dropped; or, while the CKS cluster does not answer, kept and why (appended).
RETIRING = 'node pool "%s" is no longer in spec.nodePools: deleting it from the CKS cluster'
DELETING = 'deleting node pool "%s" from the CKS cluster: it is no longer in spec.nodePools'
WAITING = (
    'node pool "%s" is no longer in spec.nodePools, but the CKS cluster does not answer, so it '
    "is not deleted yet (it keeps billing until it is): "
)


# An autoscaled pool: one Object creates it (and never updates it), one updates all but its size.
CREATOR_POLICIES = ["Observe", "Create"]
SETTINGS_POLICIES = ["Observe", "Update"]


GPU_TAINT = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}
CPU_TAINT = {"key": "modelplane.ai/cpu", "value": "true", "effect": "NoSchedule"}

SYSTEM_POOL = nodepool_object(
    "inference-east-system-nodepool-941b0",
    "modelplane-system",
    {
        "instanceType": "cd-gp-i64-erapids",
        "targetNodes": 1,
        "autoscaling": False,
        "nodeLabels": {"modelplane.ai/pool": "modelplane-system", "modelplane.ai/system": "true"},
    },
)


H100_SETTINGS_SPEC: dict[str, Any] = {
    "instanceType": "gd-8xh100ib-i128",
    "autoscaling": True,
    "minNodes": 1,
    "maxNodes": 8,
    "nodeLabels": {"modelplane.ai/pool": "h100", "modelplane.ai/gpu": "nvidia-h100"},
    "nodeTaints": [GPU_TAINT],
}
# The creator carries the starting size on every reconcile: it is what a re-create uses, and
# the creator never updates the live pool, so it never competes with the autoscaler.
H100_POOL = nodepool_object(
    "inference-east-nodepool-h100-0be1f",
    "h100",
    {**H100_SETTINGS_SPEC, "targetNodes": 2},
    CREATOR_POLICIES,
)
H100_SETTINGS = nodepool_object(
    "inference-east-autoscaled-nodepool-h100-94ead", "h100", H100_SETTINGS_SPEC, SETTINGS_POLICIES
)


L40S_POOL = nodepool_object(
    "inference-east-nodepool-l40s-335c6",
    "l40s",
    {
        "instanceType": "gd-8xl40s-i128",
        "targetNodes": 1,
        "autoscaling": False,
        "nodeLabels": {"modelplane.ai/pool": "l40s", "modelplane.ai/gpu": "nvidia-l40s"},
        "nodeTaints": [GPU_TAINT],
    },
)


CPU_POOL = nodepool_object(
    "inference-east-nodepool-cpu-e60f3",
    "cpu",
    {
        "instanceType": "cd-gp-a192-genoa",
        "targetNodes": 2,
        "autoscaling": False,
        "nodeLabels": {"modelplane.ai/pool": "cpu", "modelplane.ai/cpu": "true"},
        "nodeTaints": [CPU_TAINT],
    },
)

SHARED_VAST_OBSERVER = in_cluster_object(
    "inference-east-shared-vast-observer-f4a99",
    {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "shared-vast"},
    },
    ["Observe"],
)

VAST_PARAMETERS = {"vip_pool_name": "main", "view_policy": "default", "root_export": "/k8s"}
# What the observer reports of CKS's own class (status.atProvider.manifest).
SHARED_VAST_LIVE = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "StorageClass",
    "metadata": {"name": "shared-vast", "uid": "0c1d"},
    "provisioner": "csi.vastdata.com",
    "parameters": VAST_PARAMETERS,
    "mountOptions": ["nconnect=16", "vers=3"],
    "reclaimPolicy": "Retain",
    "volumeBindingMode": "Immediate",
    "allowVolumeExpansion": True,
}

RWX_STORAGE_CLASS = in_cluster_object(
    "inference-east-rwx-storageclass-1a4ee",
    {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "shared-vast-delete"},
        "provisioner": "csi.vastdata.com",
        "reclaimPolicy": "Delete",
        "parameters": VAST_PARAMETERS,
        "mountOptions": ["nconnect=16", "vers=3"],
        "volumeBindingMode": "Immediate",
        "allowVolumeExpansion": True,
    },
)


def converged() -> dict[str, dict[str, Any]]:
    """Every composed resource of the converged XR, by composition resource name."""
    return {
        "vpc": VPC,
        "cks-cluster": CLUSTER,
        "usage-vpc-by-cluster": USAGE_VPC,
        "kubeconfig": KUBECONFIG_SECRET,
        "kubernetes-providerconfig": PROVIDER_CONFIG,
        "usage-kubeconfig-by-providerconfig": USAGE_KUBECONFIG,
        # usage-cluster-by-providerconfig, composed until 0.1.0, is retired on purpose: a Usage,
        # not infrastructure, and it kept the CKS cluster billing when its Objects could not
        # reach it (docs/design.md, "Deletion order").
        "system-nodepool": SYSTEM_POOL,
        "nodepool-h100": H100_POOL,
        "autoscaled-nodepool-h100": H100_SETTINGS,
        "nodepool-l40s": L40S_POOL,
        "nodepool-cpu": CPU_POOL,
        "shared-vast-observer": SHARED_VAST_OBSERVER,
        "rwx-storageclass": RWX_STORAGE_CLASS,
    }
