"""Benchmark the function on CONVERGED 8-pool XRs against two floors, and write bench/results.md.

What it measures, all in one run (`make bench`, about 2 minutes on 2 cores):

- the function as users run it: the `function` console script, a subprocess on loopback;
- a NO-OP floor: an SDK function (same runtime.serve, same gRPC options) answering
  `response.to(req)`: what any Python function pays for gRPC and decoding the request;
- a REPLAY floor: the same, answering with the function's own recorded response: transport and
  response size, zero composing.

Calls alternate round-robin between the three servers, each call with a distinct request (the
XR's and one composed resource's resourceVersion and meta.tag change per call). Then 8
concurrent callers per server, each server's CPU time per call and peak RSS, the function's cold
start, and the in-process cost of `function.runner.run` and `write` alone.

    .venv/bin/python hack/bench.py              # full run, writes bench/results.md
    .venv/bin/python hack/bench.py --quick      # smoke run (also writes the results file)
    .venv/bin/python hack/bench.py --profile    # pyinstrument over in-process run + write

The requests are reached the way the lifecycle tests reach them (tests.support.World drives the
reconciles), then dressed as the API server and providers would have them: uid, resourceVersion,
generation, managedFields, ownerReferences, finalizers, Synced/Ready conditions, provider
atProvider fields and the live in-cluster objects provider-kubernetes reports.

Exit code: 0 when every call succeeded and no response was FATAL, even if a goal is missed (this
is a report); 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import dataclasses
import datetime
import hashlib
import itertools
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import google.protobuf  # noqa: E402
import grpc  # noqa: E402
import psutil  # noqa: E402
import yaml  # noqa: E402
from crossplane.function import logging as fnlogging  # noqa: E402
from crossplane.function import response  # noqa: E402
from crossplane.function.proto.v1 import run_function_pb2 as fnv1  # noqa: E402
from pyinstrument import Profiler  # noqa: E402

from function import runner  # noqa: E402
from tests.support import (  # noqa: E402
    CLUSTER_PROVIDER_CONFIG,
    ENDPOINT,
    World,
    civo_xr,
    coreweave_xr,
    credentials_secret,
    desired,
    free_port,
    readiness,
    request,
    xr_status,
)

METHOD = "/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction"
MEGABYTE = 1024 * 1024
CALL_TIMEOUT = 30.0
START_TIMEOUT = 30.0
RESULTS = ROOT / "bench" / "results.md"
FUNCTION_BIN = Path(sys.executable).parent / "function"

# Goals from the issue.
GOAL_LATENCY_RATIO = 1.5
GOAL_RSS_MB = 70.0
GOAL_COLD_START_S = 1.0

# --- the two XRs: 8 node pools each -------------------------------------------------------

COREWEAVE_POOLS: list[dict[str, Any]] = [
    {
        "name": "h100-serve",
        "role": "GPU",
        "instanceType": "gd-8xh100ib-i128",
        "nodeCount": 2,
        "minNodeCount": 1,
        "maxNodeCount": 16,
        "gpu": {"acceleratorType": "H100"},
    },
    {
        "name": "h200-serve",
        "role": "GPU",
        "instanceType": "gd-8xh200ib-i128",
        "nodeCount": 1,
        "minNodeCount": 0,
        "maxNodeCount": 8,
        "gpu": {"acceleratorType": "H200"},
    },
    {
        "name": "b200-train",
        "role": "GPU",
        "instanceType": "gd-8xb200ib-i128",
        "nodeCount": 1,
        "maxNodeCount": 4,
        "gpu": {"acceleratorType": "B200"},
    },
    {
        "name": "l40s",
        "role": "GPU",
        "instanceType": "gd-8xl40s-i128",
        "nodeCount": 2,
        "gpu": {"acceleratorType": "L40S"},
    },
    {
        "name": "a100",
        "role": "GPU",
        "instanceType": "gd-8xa100-i128",
        "nodeCount": 1,
        "gpu": {"acceleratorType": "A100"},
    },
    {
        "name": "gh200",
        "role": "GPU",
        "instanceType": "gd-1xgh200",
        "nodeCount": 4,
        "gpu": {"acceleratorType": "GH200"},
    },
    {"name": "cpu-general", "role": "CPU", "instanceType": "cd-gp-a192-genoa", "nodeCount": 3},
    {
        "name": "cpu-batch",
        "role": "CPU",
        "instanceType": "cd-hp-a96-genoa",
        "nodeCount": 1,
        "minNodeCount": 0,
        "maxNodeCount": 10,
    },
]

CIVO_POOLS: list[dict[str, Any]] = [
    {"name": "system", "role": "System", "size": "g4s.kube.medium", "nodeCount": 2},
    {
        "name": "system-burst",
        "role": "System",
        "size": "g4s.kube.large",
        "nodeCount": 1,
        "minNodeCount": 1,
        "maxNodeCount": 3,
    },
    {
        "name": "l40s",
        "role": "GPU",
        "size": "an.g1.l40s.kube.x1",
        "nodeCount": 1,
        "minNodeCount": 1,
        "maxNodeCount": 6,
        "gpu": {"acceleratorType": "L40S"},
    },
    {
        "name": "h100",
        "role": "GPU",
        "size": "an.g1.h100.kube.x1",
        "nodeCount": 1,
        "minNodeCount": 1,
        "maxNodeCount": 4,
        "gpu": {"acceleratorType": "H100"},
    },
    {
        "name": "a100",
        "role": "GPU",
        "size": "an.g1.a100.kube.x1",
        "nodeCount": 2,
        "gpu": {"acceleratorType": "A100"},
    },
    {
        "name": "l40s-x4",
        "role": "GPU",
        "size": "an.g1.l40s.kube.x4",
        "nodeCount": 1,
        "gpu": {"acceleratorType": "L40S"},
    },
    {
        "name": "workers",
        "size": "g4s.kube.xlarge",
        "nodeCount": 2,
        "minNodeCount": 2,
        "maxNodeCount": 10,
    },
    {"name": "batch", "size": "g4s.kube.large", "nodeCount": 3},
]

# What a converged reconcile composes: CoreWeave: vpc, cks-cluster, 3 Usages, kubeconfig,
# kubernetes-providerconfig, system-nodepool, shared-vast-observer, rwx-storageclass + a pool
# each. Civo: network, firewall, civo-cluster, 2 Usages, helm-providerconfig,
# cluster-autoscaler + a NodePool per pool but the inline one.
COREWEAVE_DESIRED = 10 + len(COREWEAVE_POOLS)
CIVO_DESIRED = 7 + len(CIVO_POOLS) - 1

# --- per-call variation: fixed-width sentinels patched into the serialized request ----------

XR_RV_SENTINEL = "900000000001"
OBSERVED_RV_SENTINEL = "900000000002"
TAG_SENTINEL = "bench-tag-" + "0" * 53 + "1"  # 64 characters, like Crossplane's sha256 tag


def _rv(n: int) -> bytes:
    return f"{910000000000 + n:012d}".encode()


def _tag(n: int) -> bytes:
    return f"bench-tag-{n:054d}".encode()


class Template:
    """A serialized request whose sentinels are overwritten in place: a distinct, valid request
    per call for the cost of one bytes copy (the replacements keep every length)."""

    def __init__(self, blob: bytes) -> None:
        self.blob = blob
        self.spots: list[tuple[int, int, Callable[[int], bytes]]] = []
        for sentinel, make in (
            (XR_RV_SENTINEL, _rv),
            (OBSERVED_RV_SENTINEL, _rv),
            (TAG_SENTINEL, _tag),
        ):
            raw = sentinel.encode()
            if blob.count(raw) != 1:
                raise SystemExit(f"bench: sentinel {sentinel} occurs {blob.count(raw)} times")
            self.spots.append((blob.index(raw), len(raw), make))

    def make(self, n: int) -> bytes:
        buf = bytearray(self.blob)
        for offset, length, make in self.spots:
            value = make(n)
            buf[offset : offset + length] = value
        return bytes(buf)


_COUNTER = itertools.count(1)
_COUNTER_LOCK = threading.Lock()


def next_n() -> int:
    with _COUNTER_LOCK:
        return next(_COUNTER)


# --- what the API server and the providers add to observed objects --------------------------

CREATED = "2026-11-30T00:00:00Z"
SYNCED_AT = "2026-11-30T00:04:12Z"
_RESOURCE_VERSIONS = itertools.count(48213377, 7)


def _uid(name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"bench/{name}"))


def fields_v1(data: Any) -> dict[str, Any]:
    """managedFields' FieldsV1 for data, as the API server writes it."""
    if isinstance(data, dict):
        return {f"f:{k}": fields_v1(v) for k, v in data.items()}
    if isinstance(data, list) and data and all(isinstance(i, dict) for i in data):
        out: dict[str, Any] = {}
        for index, item in enumerate(data):
            ident = {k: item[k] for k in ("name", "type", "key") if isinstance(item.get(k), str)}
            key = json.dumps(ident or {"index": index}, separators=(",", ":"), sort_keys=True)
            out[f"k:{key}"] = {".": {}, **fields_v1(item)}
        return out
    return {}


def managed_fields(api_version: str, *entries: tuple[str, str, str | None, Any]) -> list[Any]:
    return [
        {
            "apiVersion": api_version,
            "fieldsType": "FieldsV1",
            "fieldsV1": fields_v1(fields),
            "manager": manager,
            "operation": operation,
            **({"subresource": subresource} if subresource else {}),
            "time": SYNCED_AT,
        }
        for manager, operation, subresource, fields in entries
    ]


def condition(type_: str, status: str = "True", reason: str = "Available", **extra: Any) -> dict:
    return {
        "type": type_,
        "status": status,
        "reason": reason,
        "lastTransitionTime": SYNCED_AT,
        **extra,
    }


def live_object(manifest: dict[str, Any], *, manager: str, status: dict[str, Any]) -> dict:
    """The in-cluster object provider-kubernetes reports in status.atProvider.manifest."""
    live = copy.deepcopy(manifest)
    name = live["metadata"]["name"]
    applied = json.dumps(manifest, sort_keys=True, separators=(",", ":"))
    live["metadata"] = {
        **live["metadata"],
        "uid": _uid(f"live/{name}"),
        "resourceVersion": str(next(_RESOURCE_VERSIONS)),
        "generation": 3,
        "creationTimestamp": CREATED,
        "annotations": {"kubectl.kubernetes.io/last-applied-configuration": applied},
        "managedFields": managed_fields(
            manifest["apiVersion"],
            (
                "provider-kubernetes",
                "Update",
                None,
                {k: v for k, v in manifest.items() if k != "kind"},
            ),
            (manager, "Update", "status", {"status": status}),
        ),
    }
    if status:
        live["status"] = status
    return live


def live_nodepool(applied: dict[str, Any], *, target_nodes: int) -> dict[str, Any]:
    spec = applied["spec"]
    live = copy.deepcopy(applied)
    live["spec"] = {
        **spec,
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
    result = live_object(live, manager="cks-nodepool-controller", status=status)
    result["metadata"]["finalizers"] = ["compute.coreweave.com/nodepool-finalizer"]
    return result


def _echo(for_provider: dict[str, Any]) -> dict[str, Any]:
    """atProvider echoes forProvider without the *Ref/*Selector helpers."""
    return {
        k: copy.deepcopy(v)
        for k, v in for_provider.items()
        if not k.endswith("Ref") and not k.endswith("Selector")
    }


def dress(key: str, body: dict[str, Any], xr: dict[str, Any]) -> None:
    """Add what the API server and the providers put on an observed composed resource."""
    meta = body["metadata"]
    kind = body["kind"]
    xr_name = xr["metadata"]["name"]
    name = meta["name"]
    spec_like = {
        k: v for k, v in body.items() if k not in ("apiVersion", "kind", "metadata", "status")
    }
    owner = {
        "apiVersion": xr["apiVersion"],
        "kind": xr["kind"],
        "name": xr_name,
        "uid": xr["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    meta["labels"] = {"crossplane.io/composite": xr_name, **meta.get("labels", {})}
    meta["ownerReferences"] = [owner]
    meta.update(
        uid=_uid(f"{key}/{name}"),
        resourceVersion=str(next(_RESOURCE_VERSIONS)),
        generation=2,
        creationTimestamp=CREATED,
    )
    applied = {
        "metadata": {
            "annotations": {"crossplane.io/composition-resource-name": key},
            "labels": {"crossplane.io/composite": xr_name},
            "name": name,
            "ownerReferences": [owner],
        },
        **spec_like,
    }
    entries: list[tuple[str, str, str | None, Any]] = [
        (f"apiextensions.crossplane.io/composed/{_uid(xr_name)[:8]}", "Apply", None, applied)
    ]
    status = body.get("status")
    if kind == "Secret":
        pass
    elif kind == "ProviderConfig":
        meta["finalizers"] = ["in-use.crossplane.io"]
        body["status"] = {"users": len(COREWEAVE_POOLS) + 3}
        entries.append(("crossplane-provider", "Update", "status", {"status": body["status"]}))
    elif kind == "Usage":
        meta["finalizers"] = ["usage.apiextensions.crossplane.io"]
        meta["labels"]["crossplane.io/usage"] = "true"
        body["status"] = {"conditions": [condition("Ready")]}
        entries.append(("crossplane", "Update", "status", {"status": body["status"]}))
    else:  # managed resources and provider-kubernetes Objects
        meta["finalizers"] = ["finalizer.managedresource.crossplane.io"]
        annotations = meta.setdefault("annotations", {})
        external = (status or {}).get("atProvider", {}).get("id") or name
        annotations.setdefault("crossplane.io/external-name", external)
        annotations["crossplane.io/external-create-pending"] = CREATED
        annotations["crossplane.io/external-create-succeeded"] = CREATED
        body["spec"].setdefault("managementPolicies", ["*"])
        status = body.setdefault("status", {})
        ready = next((c for c in status.get("conditions", []) if c["type"] == "Ready"), None)
        status["conditions"] = [
            {**(ready or condition("Ready")), "observedGeneration": 2},
            condition("Synced", reason="ReconcileSuccess", observedGeneration=2),
        ]
        entries.append(
            (
                "crossplane-provider",
                "Update",
                None,
                {
                    "metadata": {
                        "annotations": dict(annotations),
                        "finalizers": meta["finalizers"],
                    },
                    "spec": {"managementPolicies": body["spec"]["managementPolicies"]},
                },
            )
        )
        entries.append(("crossplane-provider", "Update", "status", {"status": status}))
    meta["managedFields"] = managed_fields(body["apiVersion"], *entries)


def dress_required(obj: dict[str, Any]) -> dict[str, Any]:
    """A required resource as Crossplane fetches it from the API server."""
    obj = copy.deepcopy(obj)
    meta = obj["metadata"]
    meta.update(
        uid=_uid(f"required/{obj['kind']}/{meta['name']}"),
        resourceVersion=str(next(_RESOURCE_VERSIONS)),
        creationTimestamp=CREATED,
    )
    content = {k: v for k, v in obj.items() if k not in ("metadata", "status")}
    if obj["kind"] == "Secret":
        obj.setdefault("type", "Opaque")
        meta["managedFields"] = managed_fields("v1", ("kubectl-create", "Update", None, content))
    else:
        meta["generation"] = 1
        meta["finalizers"] = ["in-use.crossplane.io"]
        meta["annotations"] = {
            "kubectl.kubernetes.io/last-applied-configuration": json.dumps(content, sort_keys=True)
        }
        obj["status"] = {"users": 2, "conditions": [condition("Ready")]}
        meta["managedFields"] = managed_fields(
            obj["apiVersion"],
            ("kubectl-client-side-apply", "Update", None, content),
            ("crossplane-provider", "Update", "status", {"status": obj["status"]}),
        )
    return obj


def dress_xr(world: World, final: fnv1.RunFunctionResponse, composition: str) -> dict[str, Any]:
    """The observed XR: the user's spec with API-server defaults, spec.crossplane, and the
    status the function and Crossplane wrote on the previous reconcile."""
    xr = copy.deepcopy(world.xr)
    meta = xr["metadata"]
    user = {
        "apiVersion": xr["apiVersion"],
        "kind": xr["kind"],
        "metadata": {"name": meta["name"], "namespace": meta["namespace"]},
        "spec": copy.deepcopy(xr["spec"]),
    }
    xr["spec"]["crossplane"] = {
        "compositionRef": {"name": composition},
        "compositionRevisionRef": {"name": f"{composition}-7c9d2e1"},
        "compositionUpdatePolicy": "Automatic",
        "resourceRefs": sorted(
            (
                {"apiVersion": o["apiVersion"], "kind": o["kind"], "name": o["metadata"]["name"]}
                for o in world.observed.values()
            ),
            key=lambda r: (r["kind"], r["name"]),
        ),
    }
    statuses = {fnv1.STATUS_CONDITION_TRUE: "True", fnv1.STATUS_CONDITION_FALSE: "False"}
    status = xr_status(final)
    status["conditions"] = [
        condition("Synced", reason="ReconcileSuccess", observedGeneration=4),
        condition("Ready", reason="Available", observedGeneration=4),
        *(
            condition(
                c.type,
                statuses.get(c.status, "Unknown"),
                c.reason,
                message=c.message,
                observedGeneration=4,
            )
            for c in final.conditions
        ),
    ]
    xr["status"] = status
    meta.update(
        resourceVersion=XR_RV_SENTINEL,
        generation=4,
        creationTimestamp=CREATED,
        labels={"modelplane.ai/team": "ml-platform", "modelplane.ai/env": "prod"},
        annotations={
            "kubectl.kubernetes.io/last-applied-configuration": json.dumps(user, sort_keys=True)
        },
        finalizers=["composite.apiextensions.crossplane.io"],
        managedFields=managed_fields(
            xr["apiVersion"],
            (
                "kubectl-client-side-apply",
                "Update",
                None,
                {"metadata": {"annotations": {}}, **user},
            ),
            (
                "apiextensions.crossplane.io/composite",
                "Apply",
                None,
                {"spec": {"crossplane": xr["spec"]["crossplane"]}},
            ),
            ("apiextensions.crossplane.io/composite", "Apply", "status", {"status": status}),
        ),
    )
    return xr


# --- the converged requests ----------------------------------------------------------------


@dataclasses.dataclass
class Scenario:
    label: str
    kind: str
    pools: int
    expected: int
    template: Template
    clean_desired: dict[str, dict[str, Any]]


def step_input(cloud: str) -> dict[str, Any]:
    composition = yaml.safe_load((ROOT / "apis" / cloud / "composition.yaml").read_text())
    return dict(composition["spec"]["pipeline"][0]["input"])


def converge(world: World, label: str) -> fnv1.RunFunctionResponse:
    rsp = world.reconcile()
    problems = [r.message for r in rsp.results]
    not_ready = [k for k, ready in readiness(rsp).items() if not ready]
    if problems or not_ready:
        raise SystemExit(
            f"bench: {label} did not converge: results {problems}, not ready {not_ready}"
        )
    return rsp


def converged_coreweave() -> tuple[World, fnv1.RunFunctionResponse]:
    world = World(
        coreweave_xr(nodePools=copy.deepcopy(COREWEAVE_POOLS)),
        step_input=step_input("coreweaveclusters"),
    )
    world.cluster_objects = [CLUSTER_PROVIDER_CONFIG, credentials_secret()]
    world.reconcile()
    vpc = world.observed["vpc"]["spec"]["forProvider"]
    world.ready(
        "vpc",
        atProvider={
            **_echo(vpc),
            "id": "6a0d2c7e-9b1f-4e3a-8c5d-2f7e9a1b3c4d",
            "hostPrefix": "10.176.0.0/18",
            "hostPrefixes": [{"name": "primary", "prefixes": ["10.176.0.0/18"], "type": "PRIMARY"}],
            "dhcp": {"dns": {"servers": ["10.16.0.10"]}},
            "ingress": {"disablePublicServices": False},
            "egress": {"disablePublicAccess": False},
        },
    )
    cluster = world.observed["cks-cluster"]["spec"]["forProvider"]
    world.ready(
        "cks-cluster",
        atProvider={
            **_echo(cluster),
            "id": "c5b1f0e2-7d3a-4b9c-a1e8-3f6d2c9b0a17",
            "vpcId": "6a0d2c7e-9b1f-4e3a-8c5d-2f7e9a1b3c4d",
            "apiServerEndpoint": ENDPOINT,
            "status": "STATUS_RUNNING",
            "serviceAccountOidcIssuerUrl": "https://oidc.cks.coreweave.com/id/c5b1f0e2",
            "sharedStorageClusterId": "vast-us-east-04a-1",
            "nodePortRange": {"start": 30000, "end": 32767},
            "auditPolicy": "",
            "additionalServerSans": [],
            "oidc": {},
            "authnWebhook": {},
            "authzWebhook": {},
        },
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
    world.ready(
        "shared-vast-observer",
        atProvider={"manifest": live_object(shared_vast, manager="cks-addons", status={})},
    )
    for key in ("usage-kubeconfig-by-providerconfig", "usage-cluster-by-providerconfig"):
        world.ready(key)
    world.report("kubernetes-providerconfig")
    world.reconcile()
    clone = world.observed["rwx-storageclass"]["spec"]["forProvider"]["manifest"]
    world.ready(
        "rwx-storageclass",
        atProvider={"manifest": live_object(clone, manager="provider-kubernetes", status={})},
    )
    world.observed["kubeconfig"].pop("status", None)  # Secrets have no status; they exist.
    return world, converge(world, "CoreWeaveCluster")


def converged_civo() -> tuple[World, fnv1.RunFunctionResponse]:
    world = World(
        civo_xr(nodePools=copy.deepcopy(CIVO_POOLS)), step_input=step_input("civoclusters")
    )
    world.reconcile()
    network = world.observed["network"]["spec"]["forProvider"]
    world.ready(
        "network",
        atProvider={
            **_echo(network),
            "id": "1d3e5a7c-2b4d-4f6a-8c0e-1a3c5e7f9b2d",
            "name": network["label"],
            "cidrV4": "192.168.1.0/24",
            "default": False,
            "nameserversV4": ["8.8.8.8", "1.1.1.1"],
        },
    )
    firewall = world.observed["firewall"]["spec"]["forProvider"]
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
    world.ready(
        "firewall",
        atProvider={
            **_echo(firewall),
            "id": "8c2a4e6f-1b3d-4a5c-9e7f-0d2b4c6e8a1f",
            "networkId": "1d3e5a7c-2b4d-4f6a-8c0e-1a3c5e7f9b2d",
            "ingressRule": rules,
            "egressRule": rules,
        },
    )
    cluster = world.observed["civo-cluster"]["spec"]["forProvider"]
    world.ready(
        "civo-cluster",
        atProvider={
            **_echo(cluster),
            "id": "5f0b2d4e-6a8c-4e0a-b2d4-6f8a0c2e4b6d",
            "apiEndpoint": "https://74.220.17.2:6443",
            "masterIp": "74.220.17.2",
            "dnsEntry": "5f0b2d4e.k8s.civo.com",
            "status": "ACTIVE",
            "ready": True,
            "clusterType": "k3s",
            "createdAt": CREATED,
            "firewallId": "8c2a4e6f-1b3d-4a5c-9e7f-0d2b4c6e8a1f",
            "networkId": "1d3e5a7c-2b4d-4f6a-8c0e-1a3c5e7f9b2d",
            "numTargetNodes": 2,
            "targetNodesSize": "g4s.kube.medium",
            "installedApplications": [
                {"application": a, "category": "architecture", "installed": True, "version": v}
                for a, v in (("cilium", "1.16.3"), ("metrics-server", "0.7.2"))
            ],
        },
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
        world.ready(
            key,
            atProvider={
                **_echo(observed["spec"]["forProvider"]),
                "id": pool_id,
                "clusterId": "5f0b2d4e-6a8c-4e0a-b2d4-6f8a0c2e4b6d",
                "nodeCount": count,
                "instanceNames": [f"k3s-{pool['name']}-{index}{n:03d}" for n in range(count)],
                "publicIpNodePool": False,
            },
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
    return world, converge(world, "CivoCluster")


def build_scenario(label: str, kind: str, pools: int, expected: int, observed_key: str) -> Scenario:
    world, final = converged_coreweave() if kind == "CoreWeaveCluster" else converged_civo()
    composition = f"{kind.lower()}s.infrastructure.modelplane.ai"
    # Crossplane's final pass of the requirements loop: every requirement resolved.
    required = {
        name: [dress_required(o) for o in world._resolve(selector)]
        for name, selector in final.requirements.resources.items()
    }
    clean = request(world.xr, world.observed, required or None, world.step_input)
    clean_desired = desired(runner_response(clean))
    xr = dress_xr(world, final, composition)
    observed = copy.deepcopy(world.observed)
    for key, body in observed.items():
        dress(key, body, xr)
    observed[observed_key]["metadata"]["resourceVersion"] = OBSERVED_RV_SENTINEL
    req = request(xr, observed, required or None, world.step_input)
    req.meta.tag = TAG_SENTINEL
    req.meta.capabilities.extend(
        [
            fnv1.CAPABILITY_CAPABILITIES,
            fnv1.CAPABILITY_REQUIRED_RESOURCES,
            fnv1.CAPABILITY_CREDENTIALS,
            fnv1.CAPABILITY_CONDITIONS,
            fnv1.CAPABILITY_REQUIRED_SCHEMAS,
        ]
    )
    scenario = Scenario(
        label, kind, pools, expected, Template(req.SerializeToString()), clean_desired
    )
    # Untimed checks: the dressed request composes exactly what the clean one does.
    probe = fnv1.RunFunctionRequest.FromString(scenario.template.make(next_n()))
    if probe.observed.composite.resource["metadata"]["resourceVersion"] == XR_RV_SENTINEL:
        raise SystemExit("bench: the per-call patch did not change the request")
    rsp = runner_response(probe)
    check_response(scenario, rsp, "in-process")
    if desired(rsp) != clean_desired:
        raise SystemExit(f"bench: {label}: the dressed request composes something else")
    return scenario


def runner_response(req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
    outcome = runner.run(req)
    rsp = response.to(req)
    runner.write(outcome, rsp)
    return rsp


def check_response(scenario: Scenario, rsp: fnv1.RunFunctionResponse, where: str) -> None:
    fatal = [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
    if fatal:
        raise SystemExit(f"bench: {scenario.label} ({where}): FATAL {fatal}")
    if len(rsp.desired.resources) != scenario.expected:
        raise SystemExit(
            f"bench: {scenario.label} ({where}): {len(rsp.desired.resources)} desired resources, "
            f"expected {scenario.expected}"
        )
    not_ready = [k for k, r in rsp.desired.resources.items() if r.ready != fnv1.READY_TRUE]
    if not_ready:
        raise SystemExit(f"bench: {scenario.label} ({where}): not ready {not_ready}")


def build_scenarios() -> list[Scenario]:
    return [
        build_scenario(
            "CoreWeaveCluster",
            "CoreWeaveCluster",
            len(COREWEAVE_POOLS),
            COREWEAVE_DESIRED,
            "cks-cluster",
        ),
        build_scenario("CivoCluster", "CivoCluster", len(CIVO_POOLS), CIVO_DESIRED, "civo-cluster"),
    ]


# --- the servers ---------------------------------------------------------------------------

FLOOR_SERVER = '''
"""Floor functions for hack/bench.py: same SDK runtime.serve and gRPC options as function.main."""
import sys

from crossplane.function import logging, response, runtime
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1

MEGABYTE = 1024 * 1024
mode, address = sys.argv[1], sys.argv[2]
recorded = {}
for arg in sys.argv[3:]:
    kind, _, path = arg.partition("=")
    with open(path, "rb") as f:
        recorded[kind] = f.read()


class NoOp(grpcv1.FunctionRunnerServiceServicer):
    async def RunFunction(self, req, _):
        return response.to(req)


class Replay(grpcv1.FunctionRunnerServiceServicer):
    async def RunFunction(self, req, _):
        kind = req.observed.composite.resource.fields["kind"].string_value
        rsp = fnv1.RunFunctionResponse.FromString(recorded[kind])
        rsp.meta.tag = req.meta.tag
        return rsp


logging.configure(level=logging.Level.INFO)
options = [
    ("grpc.max_receive_message_length", 4 * MEGABYTE),
    ("grpc.max_send_message_length", 4 * MEGABYTE),
    ("grpc.so_reuseport", 0),
]
runtime.serve(NoOp() if mode == "noop" else Replay(), address, creds=None, insecure=True, options=options)
'''

CLIENT_OPTIONS = [
    ("grpc.max_receive_message_length", 64 * MEGABYTE),
    ("grpc.max_send_message_length", 64 * MEGABYTE),
    ("grpc.initial_reconnect_backoff_ms", 10),
    ("grpc.min_reconnect_backoff_ms", 10),
    ("grpc.max_reconnect_backoff_ms", 50),
]


def wait_listening(process: subprocess.Popen[bytes], port: int, deadline: float) -> None:
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode} during startup")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"server did not listen on {port} within {START_TIMEOUT}s")
        time.sleep(0.002)


class Server:
    def __init__(self, name: str, argv: list[str], port: int, log: Path) -> None:
        self.name, self.argv, self.port, self.log_path = name, argv, port, log
        self.process: subprocess.Popen[bytes] | None = None
        self.channel: grpc.Channel | None = None
        self.call: Callable[..., bytes] | None = None
        self.ps: psutil.Process | None = None

    def start(self) -> None:
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT)
        self.ps = psutil.Process(self.process.pid)
        try:
            wait_listening(self.process, self.port, time.monotonic() + START_TIMEOUT)
        except RuntimeError as error:
            raise RuntimeError(f"{self.name}: {error}; log: {self.log_tail()}") from None
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.port}", options=CLIENT_OPTIONS)
        grpc.channel_ready_future(self.channel).result(timeout=START_TIMEOUT)
        # No (de)serializers: bytes in, bytes out; the client does no protobuf work per call.
        self.call = self.channel.unary_unary(METHOD)

    def invoke(self, data: bytes) -> bytes:
        if self.call is None:
            raise RuntimeError(f"{self.name} is not started")
        return self.call(data, timeout=CALL_TIMEOUT)

    def cpu(self) -> float:
        if self.ps is None:
            return 0.0
        times = self.ps.cpu_times()
        return float(times.user + times.system)

    def memory(self) -> tuple[float, float]:
        """(peak RSS, current RSS) in MB: VmHWM and VmRSS from /proc/<pid>/status."""
        if self.process is None:
            return 0.0, 0.0
        values = {}
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
                key, _, rest = line.partition(":")
                if key in ("VmHWM", "VmRSS"):
                    values[key] = int(rest.split()[0]) / 1024
        if not values and self.ps is not None:
            rss = self.ps.memory_info().rss / MEGABYTE
            return rss, rss
        return values.get("VmHWM", 0.0), values.get("VmRSS", 0.0)

    def log_tail(self) -> str:
        with contextlib.suppress(OSError):
            return self.log_path.read_text(errors="replace")[-2000:]
        return ""

    def stop(self) -> None:
        if self.channel is not None:
            self.channel.close()
            self.channel = None
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


# --- measurements --------------------------------------------------------------------------


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


@dataclasses.dataclass
class Stats:
    latencies_ms: list[float] = dataclasses.field(default_factory=list)
    errors: int = 0
    bad: int = 0  # FATAL or wrong responses (function only)
    cpu_s: float = 0.0
    wall_s: float = 0.0
    calls: int = 0
    response_bytes: int = 0

    @property
    def per_s(self) -> float:
        return self.calls / self.wall_s if self.wall_s else float("nan")

    @property
    def cpu_us(self) -> float:
        return self.cpu_s / self.calls * 1e6 if self.calls else float("nan")


def function_response_ok(scenario: Scenario, blob: bytes) -> bool:
    rsp = fnv1.RunFunctionResponse.FromString(blob)
    return len(rsp.desired.resources) == scenario.expected and not any(
        r.severity == fnv1.SEVERITY_FATAL for r in rsp.results
    )


def serial(servers: list[Server], scenario: Scenario, calls: int, warmup: int) -> dict[str, Stats]:
    """Round-robin: every iteration calls each server once, in a rotating order."""
    stats = {s.name: Stats() for s in servers}
    cpu0: dict[str, float] = {}
    for i in range(warmup + calls):
        if i == warmup:
            cpu0 = {s.name: s.cpu() for s in servers}
        shift = i % len(servers)
        for server in servers[shift:] + servers[:shift]:
            data = scenario.template.make(next_n())
            start = time.perf_counter_ns()
            try:
                blob = server.invoke(data)
            except grpc.RpcError:
                stats[server.name].errors += 1
                continue
            elapsed = time.perf_counter_ns() - start
            record = stats[server.name]
            record.response_bytes = len(blob)
            if i >= warmup:
                record.latencies_ms.append(elapsed / 1e6)
            if server.name == "function" and not function_response_ok(scenario, blob):
                record.bad += 1
    for server in servers:
        record = stats[server.name]
        record.calls = len(record.latencies_ms)
        record.cpu_s = server.cpu() - cpu0.get(server.name, server.cpu())
        record.wall_s = sum(record.latencies_ms) / 1e3
    return stats


def concurrent(
    servers: list[Server], scenario: Scenario, workers: int, seconds: float, rounds: int
) -> tuple[dict[str, Stats], float]:
    """`workers` callers on one channel per server for seconds/rounds, servers alternating per
    round. Returns the stats and the bench client's own CPU use (% of one core)."""
    stats = {s.name: Stats() for s in servers}
    me = psutil.Process()
    client_cpu = client_wall = 0.0
    window = seconds / rounds
    for r in range(rounds):
        shift = r % len(servers)
        for server in servers[shift:] + servers[:shift]:
            record = stats[server.name]
            blobs: list[bytes] = []
            lock = threading.Lock()
            deadline = time.perf_counter() + window

            def caller(
                server: Server = server,
                deadline: float = deadline,
                blobs: list[bytes] = blobs,
                lock: threading.Lock = lock,
            ) -> tuple[list[float], int]:
                latencies: list[float] = []
                errors = 0
                for _ in range(1_000_000):  # bounded; the deadline ends it long before
                    if time.perf_counter() >= deadline:
                        break
                    data = scenario.template.make(next_n())
                    start = time.perf_counter_ns()
                    try:
                        blob = server.invoke(data)
                    except grpc.RpcError:
                        errors += 1
                        continue
                    latencies.append((time.perf_counter_ns() - start) / 1e6)
                    if server.name == "function":
                        with lock:
                            blobs.append(blob)
                return latencies, errors

            cpu_before, me_before = server.cpu(), me.cpu_times()
            start = time.perf_counter()
            with ThreadPoolExecutor(max_workers=workers) as pool:
                results = [f.result() for f in [pool.submit(caller) for _ in range(workers)]]
            wall = time.perf_counter() - start
            me_after = me.cpu_times()
            record.cpu_s += server.cpu() - cpu_before
            record.wall_s += wall
            client_cpu += (me_after.user + me_after.system) - (me_before.user + me_before.system)
            client_wall += wall
            for latencies, errors in results:
                record.latencies_ms.extend(latencies)
                record.errors += errors
            record.bad += sum(1 for b in blobs if not function_response_ok(scenario, b))
    for record in stats.values():
        record.calls = len(record.latencies_ms)
    return stats, (client_cpu / client_wall * 100 if client_wall else float("nan"))


def cold_starts(
    argv_for: Callable[[int], list[str]], template: Template, n: int, logdir: Path, name: str
) -> list[float]:
    """Process start to first answered call (a converged request), n fresh processes."""
    times = []
    for i in range(n):
        port = free_port()
        server = Server(f"{name}-cold-{i}", argv_for(port), port, logdir / f"{name}-cold-{i}.log")
        data = template.make(next_n())
        try:
            start = time.perf_counter()
            with server.log_path.open("wb") as log:
                server.process = subprocess.Popen(server.argv, stdout=log, stderr=subprocess.STDOUT)
            wait_listening(server.process, port, time.monotonic() + START_TIMEOUT)
            server.channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=CLIENT_OPTIONS)
            server.channel.unary_unary(METHOD)(data, timeout=START_TIMEOUT, wait_for_ready=True)
            times.append(time.perf_counter() - start)
        finally:
            server.stop()
    return times


@dataclasses.dataclass
class InProcess:
    decode: float
    run: float
    to: float
    write: float
    encode: float
    servicer: float
    log_debug: float

    @property
    def core(self) -> float:
        return self.run + self.write


def median_us(samples: list[int]) -> float:
    return statistics.median(samples) / 1e3


def in_process(scenario: Scenario, iterations: int, warmup: int) -> InProcess:
    """The servicer's work without gRPC, each step timed on its own (median µs)."""
    parts: dict[str, list[int]] = {
        k: [] for k in ("decode", "run", "to", "write", "encode", "servicer", "log")
    }
    servicer = runner.FunctionRunner()
    clock = time.perf_counter_ns
    for i in range(warmup + iterations):
        data = scenario.template.make(next_n())
        t0 = clock()
        req = fnv1.RunFunctionRequest.FromString(data)
        t1 = clock()
        outcome = runner.run(req)
        t2 = clock()
        rsp = response.to(req)
        t3 = clock()
        runner.write(outcome, rsp)
        t4 = clock()
        rsp.SerializeToString()
        t5 = clock()
        # The whole coroutine as the gRPC server runs it (to + run + write + log), on a fresh
        # decode; driven by hand so no event loop cost is added.
        again = fnv1.RunFunctionRequest.FromString(data)
        t6 = clock()
        coroutine = servicer.RunFunction(again, None)
        try:
            coroutine.send(None)
        except StopIteration as stop:
            answer = stop.value
        t7 = clock()
        servicer.log.debug(
            "composed", tag=req.meta.tag, resources=len(outcome.resources), results=0
        )
        t8 = clock()
        if outcome.fatal is not None or len(answer.desired.resources) != scenario.expected:
            raise SystemExit(f"bench: {scenario.label}: in-process call {i} went wrong")
        if i >= warmup:
            for key, value in (
                ("decode", t1 - t0),
                ("run", t2 - t1),
                ("to", t3 - t2),
                ("write", t4 - t3),
                ("encode", t5 - t4),
                ("servicer", t7 - t6),
                ("log", t8 - t7),
            ):
                parts[key].append(value)
    return InProcess(
        median_us(parts["decode"]),
        median_us(parts["run"]),
        median_us(parts["to"]),
        median_us(parts["write"]),
        median_us(parts["encode"]),
        median_us(parts["servicer"]),
        median_us(parts["log"]),
    )


# --- report --------------------------------------------------------------------------------


def machine() -> dict[str, str]:
    model = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    commit = "unknown"
    dirty = ""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        commit = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        # GIT_OPTIONAL_LOCKS=0: `git status` must not rewrite the index (others work here too).
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--", "function"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
        ).stdout.splitlines()
        dirty = f" (+{len(changed)} uncommitted change(s) under function/)" if changed else ""
    digest = hashlib.sha256()
    for path in sorted((ROOT / "function").rglob("*.py")):
        digest.update(path.relative_to(ROOT).as_posix().encode())
        digest.update(path.read_bytes())
    return {
        "cpu": model,
        "cores": str(os.cpu_count()),
        "ram": f"{psutil.virtual_memory().total / 1024**3:.1f} GiB",
        "python": platform.python_version(),
        "grpcio": grpc.__version__,
        "protobuf": google.protobuf.__version__,
        "commit": commit + dirty,
        "function_sha": digest.hexdigest()[:12],
    }


def fmt(value: float, digits: int = 2) -> str:
    return "n/a" if value != value else f"{value:.{digits}f}"  # noqa: PLR0124 - NaN check


def table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |"
    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    body = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in rows
    ]
    return "\n".join([line, rule, *body])


@dataclasses.dataclass
class Report:
    args: argparse.Namespace
    machine: dict[str, str]
    scenarios: list[Scenario]
    serial: dict[str, dict[str, Stats]]
    concurrent: dict[str, dict[str, Stats]]
    client_cpu: dict[str, float]
    memory: dict[str, tuple[float, float]]
    cold: dict[str, list[float]]
    inproc: dict[str, InProcess]
    duration_s: float

    def tables(self) -> str:
        servers = ["function", "noop", "replay"]
        label = {"function": "function", "noop": "no-op floor", "replay": "replay floor"}
        out = []
        rows = []
        for sc in self.scenarios:
            st = self.serial[sc.label]
            fn = st["function"].latencies_ms
            for name in servers:
                lat = st[name].latencies_ms
                ratios = []
                for floor in ("noop", "replay"):
                    fl = st[floor].latencies_ms
                    ratios.append(
                        "/".join(fmt(pct(fn, q) / pct(fl, q)) for q in (50, 90, 99))
                        if name == "function"
                        else ""
                    )
                rows.append(
                    [
                        sc.label,
                        label[name],
                        fmt(pct(lat, 50), 3),
                        fmt(pct(lat, 90), 3),
                        fmt(pct(lat, 99), 3),
                        ratios[0],
                        ratios[1],
                        fmt(st[name].per_s, 0),
                        fmt(st[name].cpu_us, 0),
                        str(st[name].errors),
                        f"{st[name].response_bytes / 1024:.1f}",
                    ]
                )
        out.append(
            "### Serial latency (client-side, gRPC unary over loopback, round-robin)\n\n"
            + table(
                [
                    "XR",
                    "server",
                    "p50 ms",
                    "p90 ms",
                    "p99 ms",
                    "x no-op p50/p90/p99",
                    "x replay p50/p90/p99",
                    "serial calls/s",
                    "server CPU µs/call",
                    "errors",
                    "response KiB",
                ],
                rows,
            )
        )
        rows = []
        for sc in self.scenarios:
            st = self.concurrent[sc.label]
            for name in servers:
                rows.append(
                    [
                        sc.label,
                        label[name],
                        fmt(st[name].per_s, 0),
                        str(st[name].errors),
                        fmt(pct(st[name].latencies_ms, 50), 2),
                        fmt(pct(st[name].latencies_ms, 99), 2),
                        fmt(st[name].cpu_us, 0),
                        str(st[name].calls),
                    ]
                )
        out.append(
            f"### {self.args.concurrency} concurrent callers ({self.args.duration:g} s per server per XR, "
            f"in {self.args.rounds} alternating slices)\n\n"
            + table(
                [
                    "XR",
                    "server",
                    "calls/s",
                    "errors",
                    "p50 ms",
                    "p99 ms",
                    "server CPU µs/call",
                    "calls",
                ],
                rows,
            )
            + "\n\nBench client CPU while loading (% of one core): "
            + ", ".join(f"{k} {fmt(v, 0)}%" for k, v in self.client_cpu.items())
        )
        rows = []
        for name in servers:
            cold = self.cold.get(name, [])
            rows.append(
                [
                    label[name],
                    fmt(self.memory[name][0], 1),
                    fmt(self.memory[name][1], 1),
                    (
                        f"{fmt(statistics.median(cold), 3)} (min {fmt(min(cold), 3)}, max {fmt(max(cold), 3)}, n={len(cold)})"
                        if cold
                        else "-"
                    ),
                ]
            )
        out.append(
            "### Server processes\n\n"
            + table(
                [
                    "server",
                    "peak RSS MB (VmHWM)",
                    "RSS at end MB",
                    "cold start s: median (process start → first answer)",
                ],
                rows,
            )
        )
        rows = []
        for sc in self.scenarios:
            ip = self.inproc[sc.label]
            rows.append(
                [
                    sc.label,
                    fmt(ip.decode, 0),
                    fmt(ip.run, 0),
                    fmt(ip.write, 0),
                    fmt(ip.core, 0),
                    fmt(ip.to, 1),
                    fmt(ip.encode, 0),
                    fmt(ip.servicer, 0),
                    fmt(ip.log_debug, 1),
                ]
            )
        out.append(
            f"### In-process cost (µs, median of {self.args.inproc} calls; no gRPC)\n\n"
            + table(
                [
                    "XR",
                    "decode request",
                    "runner.run",
                    "runner.write",
                    "run + write",
                    "response.to",
                    "encode response",
                    "RunFunction coroutine",
                    "log.debug at INFO",
                ],
                rows,
            )
        )
        sizes = []
        for sc in self.scenarios:
            sizes.append(
                f"- {sc.label}: {sc.pools} pools, {sc.expected} desired resources, "
                f"request {len(sc.template.blob) / 1024:.1f} KiB"
            )
        out.append("### Requests\n\n" + "\n".join(sizes))
        return "\n\n".join(out)

    def goals(self) -> list[tuple[str, str, bool]]:
        cw = self.scenarios[0].label
        st = self.serial[cw]
        ratio = pct(st["function"].latencies_ms, 50) / pct(st["noop"].latencies_ms, 50)
        errors = sum(self.concurrent[sc.label]["function"].errors for sc in self.scenarios)
        peak = self.memory["function"][0]
        cold = (
            statistics.median(self.cold["function"]) if self.cold.get("function") else float("nan")
        )
        return [
            (
                f"converged 8-pool CoreWeaveCluster: median latency ≤ {GOAL_LATENCY_RATIO}x the no-op floor's",
                f"{fmt(ratio)}x ({fmt(pct(st['function'].latencies_ms, 50), 3)} ms vs {fmt(pct(st['noop'].latencies_ms, 50), 3)} ms)",
                ratio <= GOAL_LATENCY_RATIO,
            ),
            (
                f"{self.args.concurrency} concurrent callers with zero errors",
                f"{errors} errors in {sum(self.concurrent[sc.label]['function'].calls for sc in self.scenarios)} calls",
                errors == 0,
            ),
            (f"RSS ≤ {GOAL_RSS_MB:g} MB", f"peak {fmt(peak, 1)} MB", peak <= GOAL_RSS_MB),
            (
                f"cold start ≤ {GOAL_COLD_START_S:g} s",
                f"median {fmt(cold, 3)} s",
                cold <= GOAL_COLD_START_S,
            ),
        ]

    def machine_line(self) -> str:
        m = self.machine
        return (
            f"{m['cpu']}, {m['cores']} cores, {m['ram']} RAM; Python {m['python']}, grpcio {m['grpcio']}, "
            f"protobuf {m['protobuf']}; commit {m['commit']}; function/ sha256 {m['function_sha']}"
        )

    def goals_text(self) -> str:
        return table(
            ["goal", "measured", "result"],
            [[g, v, "PASS" if ok else "FAIL"] for g, v, ok in self.goals()],
        )

    def markdown(self) -> str:
        a = self.args
        return (
            "# Benchmark results\n\n"
            "Generated by `make bench` (`hack/bench.py`); see `bench/README.md` for the method.\n\n"
            f"- Date: {datetime.datetime.now(datetime.UTC).strftime('%Y-%m-%d %H:%M UTC')}\n"
            f"- Machine: {self.machine_line()}\n"
            f"- Run: {a.calls} serial calls per server per XR after {a.warmup} warm-up calls; "
            f"{a.concurrency} callers x {a.duration:g} s per server per XR; {a.cold_starts} cold starts; "
            f"{a.inproc} in-process calls{' (--quick)' if a.quick else ''}; took {self.duration_s:.0f} s\n\n"
            "## Goals\n\n" + self.goals_text() + "\n\n"
            "## Results\n\n" + self.tables() + "\n\n"
            "Floors: **no-op** answers `response.to(req)` (gRPC + decoding the request); **replay** "
            "answers with the function's own recorded response for the same XR (gRPC + decoding + "
            "a response of the same size; nothing composed). Both are SDK `runtime.serve` servers "
            "with the function's gRPC options. Every call carries a distinct request.\n"
        )


# --- profile -------------------------------------------------------------------------------


def hot_spots(profiler: Profiler, top: int) -> str:
    """Per function: inclusive time (outermost call on each stack only) and self time (time in
    C called from it, e.g. upb, counts as its self time), as shares of the profiled time."""
    session = profiler.last_session
    root = session.root_frame() if session is not None else None
    if root is None:
        return "(no samples)"
    inclusive: dict[str, float] = {}
    own: dict[str, float] = {}
    stack: list[tuple[Any, frozenset[str]]] = [(root, frozenset())]
    for _ in range(10_000_000):  # bounded walk of the call tree
        if not stack:
            break
        frame, active = stack.pop()
        if frame.is_synthetic:
            continue
        key = f"{frame.function}  {frame.file_path_short}:{frame.line_no}"
        own[key] = own.get(key, 0.0) + frame.total_self_time
        if key not in active:
            inclusive[key] = inclusive.get(key, 0.0) + frame.time
        stack.extend((child, active | {key}) for child in frame.children)
    total = root.time or 1.0
    lines = ["inclusive   self   function"]
    for key, spent in sorted(inclusive.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"{spent / total:8.1%} {own.get(key, 0.0) / total:7.1%}   {key}")
    lines.append("")
    lines.append("self time (top):")
    for key, spent in sorted(own.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"{spent / total:8.1%}   {key}")
    return "\n".join(lines)


def profile(calls: int, kind: str) -> None:
    scenarios = {s.label: s for s in build_scenarios()}
    scenario = scenarios["CoreWeaveCluster" if kind == "coreweave" else "CivoCluster"]
    for _ in range(50):  # warm-up
        runner_response(fnv1.RunFunctionRequest.FromString(scenario.template.make(next_n())))
    profiler = Profiler(interval=0.0001)
    chunk = 100
    done = 0
    wall = 0.0
    while done < calls:
        # Decoded outside the profiled region: decoding is gRPC's work, paid by the floors too.
        batch = [
            fnv1.RunFunctionRequest.FromString(scenario.template.make(next_n()))
            for _ in range(min(chunk, calls - done))
        ]
        start = time.perf_counter()
        profiler.start()
        for req in batch:
            outcome = runner.run(req)
            rsp = response.to(req)
            runner.write(outcome, rsp)
        profiler.stop()
        wall += time.perf_counter() - start
        done += len(batch)
    print(
        f"pyinstrument: {calls} in-process calls of runner.run + response.to + runner.write on the "
        f"converged {scenario.label} request ({len(scenario.template.blob) / 1024:.1f} KiB), "
        f"{wall / calls * 1e6:.0f} µs per call under the profiler\n"
    )
    print(profiler.output_text(unicode=True, color=False, time="percent_of_total"))
    print("Hot spots (share of profiled time):\n")
    print(hot_spots(profiler, 25))


# --- main ----------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--calls", type=int, default=2000, help="serial calls per server per XR")
    parser.add_argument("--warmup", type=int, default=200, help="warm-up calls per server per XR")
    parser.add_argument("--concurrency", type=int, default=8, help="concurrent callers")
    parser.add_argument(
        "--duration", type=float, default=3.0, help="seconds of concurrent load per server per XR"
    )
    parser.add_argument(
        "--rounds", type=int, default=3, help="alternating slices of the concurrent load"
    )
    parser.add_argument(
        "--cold-starts", type=int, default=5, help="cold starts of the function (median)"
    )
    parser.add_argument("--inproc", type=int, default=2000, help="in-process calls per XR")
    parser.add_argument("--quick", action="store_true", help="short smoke run")
    parser.add_argument("--no-write", action="store_true", help="do not write bench/results.md")
    parser.add_argument(
        "--profile", action="store_true", help="only profile run + write in-process"
    )
    parser.add_argument("--profile-calls", type=int, default=1000)
    parser.add_argument("--profile-kind", choices=["coreweave", "civo"], default="coreweave")
    args = parser.parse_args(argv)
    if args.quick:
        args.calls, args.warmup, args.duration, args.rounds = 200, 20, 1.0, 1
        args.cold_starts, args.inproc = 2, 200
    return args


def servers_for(
    tmp: Path, recorded: dict[str, Path]
) -> tuple[Callable[[int], list[str]], Callable[[int], list[str]], Callable[[int], list[str]]]:
    floor = tmp / "floor_server.py"
    floor.write_text(FLOOR_SERVER)
    function_bin = str(
        FUNCTION_BIN if FUNCTION_BIN.exists() else ROOT / ".venv" / "bin" / "function"
    )

    def function_argv(port: int) -> list[str]:
        return [function_bin, "--insecure", f"--address=127.0.0.1:{port}"]

    def noop_argv(port: int) -> list[str]:
        return [sys.executable, str(floor), "noop", f"127.0.0.1:{port}"]

    def replay_argv(port: int) -> list[str]:
        return [
            sys.executable,
            str(floor),
            "replay",
            f"127.0.0.1:{port}",
            *(f"{kind}={path}" for kind, path in recorded.items()),
        ]

    return function_argv, noop_argv, replay_argv


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.profile:
        profile(args.profile_calls, args.profile_kind)
        return 0
    began = time.perf_counter()
    print("building converged requests ...", flush=True)
    scenarios = build_scenarios()
    for sc in scenarios:
        print(
            f"  {sc.label}: {sc.pools} pools, {sc.expected} desired, request {len(sc.template.blob) / 1024:.1f} KiB"
        )
    serial_stats: dict[str, dict[str, Stats]] = {}
    concurrent_stats: dict[str, dict[str, Stats]] = {}
    client_cpu: dict[str, float] = {}
    memory: dict[str, tuple[float, float]] = {}
    cold: dict[str, list[float]] = {}
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="fn-bench-") as tmpdir:
        tmp = Path(tmpdir)
        recorded = {sc.kind: tmp / f"replay-{sc.kind}.bin" for sc in scenarios}
        function_argv, noop_argv, replay_argv = servers_for(tmp, recorded)
        started: list[Server] = []
        try:
            port = free_port()
            function = Server("function", function_argv(port), port, tmp / "function.log")
            started.append(function)
            function.start()
            # Record the function's own answers for the replay floor; check them once.
            for sc in scenarios:
                blob = function.invoke(sc.template.make(next_n()))
                rsp = fnv1.RunFunctionResponse.FromString(blob)
                check_response(sc, rsp, "function over gRPC")
                if desired(rsp) != sc.clean_desired:
                    raise SystemExit(
                        f"bench: {sc.label}: the served function composes something else"
                    )
                recorded[sc.kind].write_bytes(blob)
            for name, argv_for in (("noop", noop_argv), ("replay", replay_argv)):
                port = free_port()
                server = Server(name, argv_for(port), port, tmp / f"{name}.log")
                started.append(server)
                server.start()
            for sc in scenarios:  # the floors answer what they should
                replayed = fnv1.RunFunctionResponse.FromString(
                    started[2].invoke(sc.template.make(next_n()))
                )
                if len(replayed.desired.resources) != sc.expected:
                    raise SystemExit(f"bench: replay floor answered {sc.label} wrongly")
                fnv1.RunFunctionResponse.FromString(started[1].invoke(sc.template.make(next_n())))
            for sc in scenarios:
                print(
                    f"serial: {sc.label}, {args.calls} calls per server after {args.warmup} warm-up ...",
                    flush=True,
                )
                serial_stats[sc.label] = serial(started, sc, args.calls, args.warmup)
            for sc in scenarios:
                print(
                    f"concurrent: {sc.label}, {args.concurrency} callers, {args.duration:g} s per server ...",
                    flush=True,
                )
                concurrent_stats[sc.label], client_cpu[sc.label] = concurrent(
                    started, sc, args.concurrency, args.duration, args.rounds
                )
            memory = {s.name: s.memory() for s in started}
        finally:
            for server in started:
                server.stop()
        print(
            f"cold starts: {args.cold_starts} x function, {args.cold_starts} x no-op floor ...",
            flush=True,
        )
        cold["function"] = cold_starts(
            function_argv, scenarios[0].template, args.cold_starts, tmp, "function"
        )
        cold["noop"] = cold_starts(noop_argv, scenarios[0].template, args.cold_starts, tmp, "noop")
    print(f"in-process: {args.inproc} calls per XR ...", flush=True)
    fnlogging.configure(
        level=fnlogging.Level.INFO
    )  # as the served function runs (debug is filtered)
    inproc = {sc.label: in_process(sc, args.inproc, max(20, args.inproc // 10)) for sc in scenarios}
    report = Report(
        args,
        machine(),
        scenarios,
        serial_stats,
        concurrent_stats,
        client_cpu,
        memory,
        cold,
        inproc,
        time.perf_counter() - began,
    )
    for sc in scenarios:
        for phase, stats in (("serial", serial_stats), ("concurrent", concurrent_stats)):
            for name, record in stats[sc.label].items():
                if record.errors:
                    failures.append(f"{sc.label} {phase}: {record.errors} failed calls to {name}")
                if record.bad:
                    failures.append(
                        f"{sc.label} {phase}: {record.bad} FATAL/wrong responses from {name}"
                    )
    print()
    print(f"Machine: {report.machine_line()}\n")
    print(report.tables())
    print("\n### Goals\n")
    print(report.goals_text())
    if not args.no_write:
        RESULTS.parent.mkdir(exist_ok=True)
        RESULTS.write_text(report.markdown())
        print(f"\nwrote {RESULTS.relative_to(ROOT)} ({report.duration_s:.0f} s)")
    for failure in failures:
        print(f"bench: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
