"""The two converged 8-pool XRs, reached the way the lifecycle tests reach them.

harness.fixtures.World drives the reconciles and the providers report what they report once the
XR has converged: every composed resource Ready, provider atProvider fields, the live in-cluster
objects provider-kubernetes shows in an Object's status, Civo pool IDs. Nothing here is metadata
noise (uid, managedFields ...): `noise.py` adds that to every bench request.
"""

from __future__ import annotations

import copy
import hashlib
import uuid
from typing import Any

import yaml
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from harness import fixtures
from harness.example_sets import ROOT
from harness.fixtures import (
    CLUSTER_PROVIDER_CONFIG,
    ENDPOINT,
    World,
    civo_connection_secret,
    civo_pool,
    civo_xr,
    coreweave_pool,
    coreweave_xr,
    credentials_secret,
)

# When the providers last reported, and when the resources were created: fixed, so the
# requests are the same on every run.
CREATED = "2026-11-30T00:00:00Z"
SYNCED_AT = "2026-11-30T00:04:12Z"

# 3 autoscaled GPU pools, 3 fixed GPU pools, one fixed and one autoscaled CPU pool.
COREWEAVE_POOLS: list[dict[str, Any]] = [
    coreweave_pool(
        "h100-serve", "gd-8xh100ib-i128", 2, "nvidia-h100", minNodeCount=1, maxNodeCount=16
    ),
    coreweave_pool(
        "h200-serve", "gd-8xh200ib-i128", 1, "nvidia-h200", minNodeCount=1, maxNodeCount=8
    ),
    coreweave_pool("b200-train", "gd-8xb200ib-i128", 1, "nvidia-b200", maxNodeCount=4),
    coreweave_pool("l40s", "gd-8xl40s-i128", 2, "nvidia-l40s"),
    coreweave_pool("a100", "gd-8xa100-i128", 1, "nvidia-a100"),
    coreweave_pool("gh200", "gd-1xgh200", 4, "nvidia-gh200"),
    coreweave_pool("cpu-general", "cd-gp-a192-genoa", 3),
    coreweave_pool("cpu-batch", "cd-hp-a96-genoa", 1, minNodeCount=1, maxNodeCount=10),
]

# The inline System pool plus 7 NodePools, 4 of them autoscaled.
CIVO_POOLS: list[dict[str, Any]] = [
    civo_pool("system", "g4s.kube.medium", 2),
    civo_pool("system-burst", "g4s.kube.large", 1, minNodeCount=1, maxNodeCount=3),
    civo_pool("l40s", "an.g1.l40s.kube.x1", 1, "nvidia-l40s", minNodeCount=1, maxNodeCount=6),
    civo_pool("h100", "an.g1.h100.kube.x1", 1, "nvidia-h100", minNodeCount=1, maxNodeCount=4),
    civo_pool("a100", "an.g1.a100.kube.x1", 2, "nvidia-a100"),
    civo_pool("l40s-x4", "an.g1.l40s.kube.x4", 1, "nvidia-l40s"),
    civo_pool("general", "g4s.kube.xlarge", 2, minNodeCount=2, maxNodeCount=10),
    civo_pool("batch", "g4s.kube.large", 3),
]

# What a converged reconcile composes: CoreWeave: vpc, cks-cluster, 2 Usages, kubeconfig,
# kubernetes-providerconfig, system-nodepool, shared-vast-observer, rwx-storageclass + a pool
# each + a settings Object per autoscaled pool. Civo: network, firewall, civo-cluster, 2 Usages, helm-providerconfig,
# cluster-autoscaler + a NodePool per pool but the inline one.
COREWEAVE_DESIRED = (
    9 + len(COREWEAVE_POOLS) + sum(1 for p in COREWEAVE_POOLS if "maxNodeCount" in p)
)
CIVO_DESIRED = 7 + len(CIVO_POOLS) - 1


def condition(
    type_: str, status: str = "True", reason: str = "Available", **extra: Any
) -> dict[str, Any]:
    return {**fixtures.condition(type_, status, reason, SYNCED_AT), **extra}


def live_nodepool(applied: dict[str, Any], *, target_nodes: int) -> dict[str, Any]:
    """A CKS NodePool as its controller reports it in the Object's status.atProvider.manifest:
    defaults filled in, at its target size (bare: `noise.py` adds the API server's metadata)."""
    spec = {
        **applied["spec"],
        "targetNodes": target_nodes,
        "lifecycle": {"disableUnhealthyNodeEviction": False, "scaleDownStrategy": "IdleOnly"},
        "computeClass": "default",
    }
    status = {
        "conditions": [
            condition("Validated", reason="Valid", message="instance type is valid"),
            condition("Accepted", reason="Accepted", message="capacity reserved"),
            condition("AtTarget", reason="TargetMet", message="currentNodes matches targetNodes"),
        ],
        "currentNodes": target_nodes,
        "inProgress": 0,
        "queuedNodes": 0,
        "nodeProfile": spec["instanceType"],
    }
    return {**applied, "spec": spec, "status": status}


def _provided(world: World, key: str, **at_provider: Any) -> None:
    """key Ready, its provider reporting at_provider after forProvider, echoed without the
    *Ref/*Selector helpers (World.report copies what it reports)."""
    for_provider = world.observed[key]["spec"]["forProvider"]
    echo = {k: v for k, v in for_provider.items() if not k.endswith(("Ref", "Selector"))}
    world.ready(key, atProvider={**echo, **at_provider})


def _world(xr: dict[str, Any], cloud: str, *cluster_objects: dict[str, Any]) -> World:
    """xr's World, with its Composition's step input and the cluster's objects, reconciled once."""
    composition = yaml.safe_load((ROOT / "apis" / cloud / "composition.yaml").read_text())
    started = World(xr, step_input=dict(composition["spec"]["pipeline"][0]["input"]))
    started.cluster_objects = list(cluster_objects)
    started.reconcile()
    return started


def converged_coreweave() -> tuple[World, fnv1.RunFunctionResponse]:
    xr = coreweave_xr(nodePools=copy.deepcopy(COREWEAVE_POOLS))
    world = _world(xr, "coreweaveclusters", CLUSTER_PROVIDER_CONFIG, credentials_secret())
    _provided(
        world,
        "vpc",
        id="6a0d2c7e-9b1f-4e3a-8c5d-2f7e9a1b3c4d",
        hostPrefix="10.176.0.0/18",
        hostPrefixes=[{"name": "primary", "prefixes": ["10.176.0.0/18"], "type": "PRIMARY"}],
        dhcp={"dns": {"servers": ["10.16.0.10"]}},
        ingress={"disablePublicServices": False},
        egress={"disablePublicAccess": False},
    )
    _provided(
        world,
        "cks-cluster",
        id="c5b1f0e2-7d3a-4b9c-a1e8-3f6d2c9b0a17",
        vpcId="6a0d2c7e-9b1f-4e3a-8c5d-2f7e9a1b3c4d",
        apiServerEndpoint=ENDPOINT,
        status="STATUS_RUNNING",
        serviceAccountOidcIssuerUrl="https://oidc.cks.coreweave.com/id/c5b1f0e2",
        sharedStorageClusterId="vast-us-east-04a-1",
        nodePortRange={"start": 30000, "end": 32767},
        auditPolicy="",
        additionalServerSans=[],
        oidc={},
        authnWebhook={},
        authzWebhook={},
    )
    world.ready("usage-vpc-by-cluster")
    world.reconcile()
    pools = ["system-nodepool", *(f"nodepool-{p['name']}" for p in COREWEAVE_POOLS)]
    autoscaled = {f"nodepool-{p['name']}": p for p in COREWEAVE_POOLS if "maxNodeCount" in p}
    for key in pools:
        manifest = world.observed[key]["spec"]["forProvider"]["manifest"]
        target = manifest["spec"].get("targetNodes", 1)
        if key in autoscaled:  # the CKS autoscaler grew it
            target = max(target, autoscaled[key]["maxNodeCount"] // 2)
        world.ready(key, atProvider={"manifest": live_nodepool(manifest, target_nodes=target)})
    shared_vast = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "shared-vast"},
        "provisioner": "csi.vastdata.com",
        "parameters": {
            "root_export": "/k8s",
            "view_policy": "default",
            "vip_pool_name": "main",
            "csi.storage.k8s.io/provisioner-secret-name": "vast-mgmt",
            "csi.storage.k8s.io/provisioner-secret-namespace": "vast-csi",
        },
        "mountOptions": ["nconnect=16", "vers=3"],
        "reclaimPolicy": "Retain",
        "volumeBindingMode": "Immediate",
        "allowVolumeExpansion": True,
    }
    world.ready("shared-vast-observer", atProvider={"manifest": shared_vast})
    world.ready("usage-kubeconfig-by-providerconfig")
    world.report("kubernetes-providerconfig")
    world.reconcile()
    clone = world.observed["rwx-storageclass"]["spec"]["forProvider"]["manifest"]
    world.ready("rwx-storageclass", atProvider={"manifest": clone})
    # The settings Object of an autoscaled pool sees the same live pool as its creator.
    for key in autoscaled:
        world.ready("autoscaled-" + key, atProvider=world.observed[key]["status"]["atProvider"])
    world.observed["kubeconfig"].pop("status", None)  # Secrets have no status; they exist.
    return world, world.reconcile()


def converged_civo() -> tuple[World, fnv1.RunFunctionResponse]:
    # The cluster's connection Secret, read until the function knows which key holds the
    # kubeconfig; the converged XR's status names that key.
    xr = civo_xr(nodePools=copy.deepcopy(CIVO_POOLS))
    world = _world(xr, "civoclusters", civo_connection_secret())
    _provided(
        world,
        "network",
        id="1d3e5a7c-2b4d-4f6a-8c0e-1a3c5e7f9b2d",
        name=world.observed["network"]["spec"]["forProvider"]["label"],
        cidrV4="192.168.1.0/24",
        default=False,
        nameserversV4=["8.8.8.8", "1.1.1.1"],
    )
    rules = [
        {
            "action": "allow",
            "cidr": ["0.0.0.0/0"],
            "label": f"All {p}",
            "portRange": "1-65535",
            "protocol": p,
        }
        for p in ("tcp", "udp", "icmp")
    ]
    _provided(
        world,
        "firewall",
        id="8c2a4e6f-1b3d-4a5c-9e7f-0d2b4c6e8a1f",
        networkId="1d3e5a7c-2b4d-4f6a-8c0e-1a3c5e7f9b2d",
        ingressRule=rules,
        egressRule=rules,
    )
    _provided(
        world,
        "civo-cluster",
        id="5f0b2d4e-6a8c-4e0a-b2d4-6f8a0c2e4b6d",
        apiEndpoint="https://74.220.17.2:6443",
        masterIp="74.220.17.2",
        dnsEntry="5f0b2d4e.k8s.civo.com",
        status="ACTIVE",
        ready=True,
        clusterType="k3s",
        createdAt=CREATED,
        firewallId="8c2a4e6f-1b3d-4a5c-9e7f-0d2b4c6e8a1f",
        networkId="1d3e5a7c-2b4d-4f6a-8c0e-1a3c5e7f9b2d",
        numTargetNodes=2,
        targetNodesSize="g4s.kube.medium",
        installedApplications=[
            {"application": a, "category": "architecture", "installed": True, "version": v}
            for a, v in (("cilium", "1.16.3"), ("metrics-server", "0.7.2"))
        ],
    )
    for key in ("usage-network-by-cluster", "usage-firewall-by-cluster"):
        world.ready(key)
    world.reconcile()
    for index, pool in enumerate(CIVO_POOLS[1:], start=1):
        key = f"nodepool-{pool['name']}"
        pool_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"civo-pool/{pool['name']}"))
        count = pool.get("maxNodeCount", 0) // 2 or pool["nodeCount"]
        observed = world.observed[key]
        observed["metadata"]["annotations"]["crossplane.io/external-name"] = pool_id
        _provided(
            world,
            key,
            id=pool_id,
            clusterId="5f0b2d4e-6a8c-4e0a-b2d4-6f8a0c2e4b6d",
            nodeCount=count,
            instanceNames=[f"k3s-{pool['name']}-{index}{n:03d}" for n in range(count)],
            publicIpNodePool=False,
        )
    world.reconcile()
    world.ready(
        "cluster-autoscaler",
        atProvider={
            "state": "deployed",
            "revision": 3,
            "version": "9.59.0",
            "digest": "sha256:" + hashlib.sha256(b"cluster-autoscaler-9.59.0").hexdigest(),
            "releaseDescription": "Upgrade complete",
            "ownershipTaken": False,
        },
    )
    world.report("helm-providerconfig")
    return world, world.reconcile()
