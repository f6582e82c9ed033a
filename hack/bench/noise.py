"""Metadata noise: what the API server, Crossplane and the providers put on every object.

The function reads a handful of fields of each observed object; everything here is what it must
skip over (uid, resourceVersion, managedFields, owner references, finalizers, annotations,
Synced conditions). Every bench request carries all of it; the request without it, the
converged state of `xrs.py` as it is, is only checked to compose the same.
"""

from __future__ import annotations

import copy
import itertools
import json
import uuid
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from hack.bench.xrs import COREWEAVE_POOLS, CREATED, SYNCED_AT, condition
from harness.fixtures import CONDITION_STATUS, World, xr_status

# Any increasing numbers: the API server's resourceVersions are opaque.
_RESOURCE_VERSIONS = itertools.count(48213377, 7)
# Which controller writes the status of a live object inside an Object, by its kind.
_LIVE_STATUS_MANAGER = {"NodePool": "cks-nodepool-controller", "StorageClass": "cks-addons"}


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


def dress_live(live: dict[str, Any]) -> None:
    """The metadata the API server puts on a live in-cluster object inside an Object."""
    meta = live["metadata"]
    name = meta["name"]
    content = {k: v for k, v in live.items() if k not in ("metadata", "status")}
    applied = json.dumps(
        {**content, "metadata": {"name": name}}, sort_keys=True, separators=(",", ":")
    )
    entries: list[tuple[str, str, str | None, Any]] = [
        ("provider-kubernetes", "Update", None, {k: v for k, v in content.items() if k != "kind"})
    ]
    if "status" in live:
        manager = _LIVE_STATUS_MANAGER.get(live["kind"], "provider-kubernetes")
        entries.append((manager, "Update", "status", {"status": live["status"]}))
    meta.update(
        uid=_uid(f"live/{name}"),
        resourceVersion=str(next(_RESOURCE_VERSIONS)),
        generation=3,
        creationTimestamp=CREATED,
        annotations={"kubectl.kubernetes.io/last-applied-configuration": applied},
        managedFields=managed_fields(live["apiVersion"], *entries),
    )
    if live["kind"] == "NodePool":
        meta["finalizers"] = ["compute.coreweave.com/nodepool-finalizer"]


def dress(key: str, body: dict[str, Any], xr: dict[str, Any]) -> None:
    """Add what the API server and the providers put on an observed composed resource."""
    meta, kind, xr_name = body["metadata"], body["kind"], xr["metadata"]["name"]
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
    if kind == "ProviderConfig":
        meta["finalizers"] = ["in-use.crossplane.io"]
        body["status"] = {"users": len(COREWEAVE_POOLS) + 3}
        entries.append(("crossplane-provider", "Update", "status", {"status": body["status"]}))
    elif kind == "Usage":
        meta["finalizers"] = ["usage.apiextensions.crossplane.io"]
        meta["labels"]["crossplane.io/usage"] = "true"
        body["status"] = {"conditions": [condition("Ready")]}
        entries.append(("crossplane", "Update", "status", {"status": body["status"]}))
    elif kind != "Secret":  # managed resources and provider-kubernetes Objects
        live = (status or {}).get("atProvider", {}).get("manifest")
        if isinstance(live, dict) and isinstance(live.get("metadata"), dict):
            dress_live(live)
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
        provider_fields = {
            "metadata": {"annotations": dict(annotations), "finalizers": meta["finalizers"]},
            "spec": {"managementPolicies": body["spec"]["managementPolicies"]},
        }
        entries += [
            ("crossplane-provider", "Update", None, provider_fields),
            ("crossplane-provider", "Update", "status", {"status": status}),
        ]
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
    status = xr_status(final)
    status["conditions"] = [
        condition("Synced", reason="ReconcileSuccess", observedGeneration=4),
        condition("Ready", reason="Available", observedGeneration=4),
        *(
            condition(
                c.type,
                CONDITION_STATUS.get(c.status, "Unknown"),
                c.reason,
                message=c.message,
                observedGeneration=4,
            )
            for c in final.conditions
        ),
    ]
    xr["status"] = status
    composite = "apiextensions.crossplane.io/composite"
    meta.update(
        resourceVersion=str(next(_RESOURCE_VERSIONS)),
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
            (composite, "Apply", None, {"spec": {"crossplane": xr["spec"]["crossplane"]}}),
            (composite, "Apply", "status", {"status": status}),
        ),
    )
    return xr
