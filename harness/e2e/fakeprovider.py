"""A fake cloud: a controller loop that does to the CoreWeave and Civo managed resources what
provider-coreweave and provider-upjet-civo do, without any cloud. (The Civo cluster-autoscaler's
Release is the real provider-helm's: harness/e2e/providerhelm.py.)

Per managed resource, like crossplane-runtime's managed reconciler: add the managed finalizer,
resolve `*IdRef` references into `forProvider` (Synced=False until the referenced resource has an
external name), "create" it (an ID as `crossplane.io/external-name`), report `atProvider` fields
(the ones tests/stages/*/observed/*.yaml model), `Synced` and `Ready`; on deletion remove the
finalizer. A Civo or CKS cluster is a real Kubernetes of its own (harness/e2e/workload.py): it
stays BUILDING (STATUS_CREATING) until that answers; a Civo cluster's connection Secret holds
its kubeconfig, a CKS cluster reports its endpoint; deleting either deletes everything in it,
a CKS cluster's NodePools included, as CKS does. It also plays CKS inside each CKS cluster: each
`compute.coreweave.com` NodePool gets `Validated=True` and `currentNodes = targetNodes` (none, all
queued, for a pool `no_capacity_for` names).

Status is written only when it differs from what is there, so the fake adds no churn of its own.
Tests steer it: `hold` keeps a kind Creating (not Ready), `flap` reports one resource
Unavailable, as during a provider or cloud outage.
"""

from __future__ import annotations

import base64
import copy
import datetime
import hashlib
import json
import threading
import time
import traceback
from typing import Any

from . import kinds
from .kube import NO_ANSWER, ApiError, Kind, Kube, condition
from .workload import Workload, WorkloadClusters
from .xr import EXTERNAL_NAME

MANAGED_FINALIZER = "finalizer.managedresource.crossplane.io"
# A real provider polls each resource about once a minute; faster here keeps stages short.
LOOP_INTERVAL_SECONDS = 0.5


# The references each kind resolves (forProvider field, referenced kind), as the real
# providers' generated resolvers do.
REFERENCES: dict[Kind, tuple[tuple[str, Kind], ...]] = {
    kinds.CKS_CLUSTER: (("vpcId", kinds.COREWEAVE_VPC),),
    kinds.CIVO_FIREWALL: (("networkId", kinds.CIVO_NETWORK),),
    kinds.CIVO_CLUSTER: (("networkId", kinds.CIVO_NETWORK), ("firewallId", kinds.CIVO_FIREWALL)),
    kinds.CIVO_NODEPOOL: (("clusterId", kinds.CIVO_CLUSTER),),
}
# Managed kinds that are clusters with a Kubernetes of their own, and whose cloud runs them.
WORKLOAD_KINDS = {kinds.CIVO_CLUSTER: "civo", kinds.CKS_CLUSTER: "cks"}
# What a cluster's cloud reports while it updates the cluster in place (the ready-flap stages).
IN_PLACE_STATUS = {kinds.CIVO_CLUSTER: "UPGRADING", kinds.CKS_CLUSTER: "STATUS_UPDATING"}
# Every managed kind, the ones that reference nothing first, so that a pass resolves in order.
MANAGED_KINDS = (kinds.COREWEAVE_VPC, kinds.CIVO_NETWORK, *REFERENCES)


def external_id(obj: dict[str, Any]) -> str:
    """A stable cloud ID per resource, derived from its UID so a re-created one gets a new ID."""
    digest = hashlib.sha256(obj["metadata"]["uid"].encode()).hexdigest()[:8]
    return f"{digest}-{obj['kind'].lower()}"


class FakeCloud:
    """Runs the fake providers' loop in a thread until `stop()`."""

    def __init__(self, api: Kube, clusters: WorkloadClusters) -> None:
        self.api = api
        self.clusters = clusters
        self.held: set[Kind] = set()
        # Pools, by name, the cloud has no capacity for.
        self.starved: set[str] = set()
        self.flapped: set[tuple[Kind, str]] = set()
        # Clusters deleted outside Crossplane, by cluster ID.
        self.deleted_outside: set[str] = set()
        self.errors: list[str] = []
        self.status_writes = 0
        # Seconds between passes, read before each wait: the fleet slows it while idle.
        self.loop_interval_seconds = LOOP_INTERVAL_SECONDS
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="fake-cloud", daemon=True)

    # --- steering, for the tests -------------------------------------------------------------

    def hold(self, kind: Kind) -> None:
        """Resources of this kind stay Creating (Ready=False) until `release`."""
        with self._lock:
            self.held.add(kind)

    def release(self, kind: Kind) -> None:
        with self._lock:
            self.held.discard(kind)

    def no_capacity_for(self, pool: str) -> None:
        """The cloud finds no capacity for the pool of this name, in any cluster: a CKS NodePool
        runs none of its nodes (all queued), a Civo NodePool stays Creating."""
        with self._lock:
            self.starved.add(pool)

    def flap(self, kind: Kind, name: str, unavailable: bool) -> None:
        """Reports one resource Unavailable (Ready=False) while `unavailable`, keeping atProvider;
        a cluster as its cloud reports an update in place (IN_PLACE_STATUS)."""
        with self._lock:
            if unavailable:
                self.flapped.add((kind, name))
            else:
                self.flapped.discard((kind, name))

    def delete_outside_crossplane(self, cluster_id: str) -> None:
        """The cloud deletes a Civo or CKS cluster behind Crossplane's back (a user in the
        console, an account clean-up): it and everything in it are gone, and the provider
        reports it not found. That is the window before the real provider's next poll, which
        would create it again; a test deletes the XR within it."""
        with self._lock:
            self.deleted_outside.add(cluster_id)
        self.clusters.delete(cluster_id)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    # --- the loop ------------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            for kind in MANAGED_KINDS:
                self._guarded(self._reconcile_kind, kind)
            self._guarded(self._reconcile_cks_nodepools)
            self._stop.wait(self.loop_interval_seconds)

    def _guarded(self, step: Any, *args: Any) -> None:
        try:
            step(*args)
        except ApiError as error:
            # 404/409: the object changed under us (deleted, or a newer version); next pass.
            if error.status not in (404, 409):
                self.errors.append(str(error))
        except NO_ANSWER as error:
            # An API server down (a fault test's, or a Civo cluster's being deleted): one line
            # with its time, not a traceback, so a failure's report shows when it was down.
            self.errors.append(
                f"{time.strftime('%H:%M:%S')} {step.__name__}: {type(error).__name__}: {error}"
            )
        except Exception:  # a bug in the fake must fail the test, not kill the thread silently
            self.errors.append(traceback.format_exc())

    def _reconcile_kind(self, kind: Kind) -> None:
        for obj in self.api.list(kind):
            self._guarded(self._reconcile, kind, obj)

    def _reconcile(self, kind: Kind, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        namespace, name = meta["namespace"], meta["name"]
        finalizers = meta.get("finalizers") or []
        if meta.get("deletionTimestamp"):
            # The cloud resource is gone at once; release the object.
            if kind in WORKLOAD_KINDS and EXTERNAL_NAME in (meta.get("annotations") or {}):
                self.clusters.delete(meta["annotations"][EXTERNAL_NAME])
            if MANAGED_FINALIZER in finalizers:
                kept = [f for f in finalizers if f != MANAGED_FINALIZER]
                self._set_finalizers(kind, obj, kept)
            return
        if MANAGED_FINALIZER not in finalizers:
            obj = self._set_finalizers(kind, obj, [*finalizers, MANAGED_FINALIZER])
        unresolved = self._resolve_references(kind, obj)
        if unresolved:
            self._write_status(kind, obj, {}, ready=None, error=unresolved)
            return
        if EXTERNAL_NAME not in (obj["metadata"].get("annotations") or {}):
            # "Created": the provider records the cloud ID as the external name.
            created = {"metadata": {"annotations": {EXTERNAL_NAME: external_id(obj)}}}
            obj = self.api.merge_patch(kind, name, created, namespace)
        starvable = (
            obj["spec"].get("forProvider", {}).get("label") if kind == kinds.CIVO_NODEPOOL else None
        )
        with self._lock:
            held = kind in self.held or starvable in self.starved
            flapped = (kind, name) in self.flapped
            gone = external_id(obj) in self.deleted_outside
        if gone:
            not_found = f"cannot observe external resource: {kind.kind} {external_id(obj)}: 404"
            self._write_status(kind, obj, {}, ready=None, error=not_found)
            return
        workload = None
        if kind in WORKLOAD_KINDS and not held:
            region = obj["spec"]["forProvider"].get("region", "")
            workload = self.clusters.serving(external_id(obj), WORKLOAD_KINDS[kind], region)
            # BUILDING (STATUS_CREATING) until its Kubernetes answers.
            held = workload is None
        at_provider = self._at_provider(kind, obj, workload)
        if held and kind == kinds.CIVO_NODEPOOL:
            # Still being created: Civo reports no count for it yet.
            at_provider = {"id": at_provider["id"]}
        if held:
            ready: tuple[bool, str] = (False, "Creating")
        elif flapped:
            ready = (False, "Unavailable")
            if kind in IN_PLACE_STATUS:
                at_provider = {**at_provider, "status": IN_PLACE_STATUS[kind]}
        else:
            ready = (True, "Available")
        self._write_status(kind, obj, at_provider, ready=ready)
        if workload is not None and kind == kinds.CIVO_CLUSTER:
            self._publish_connection_secret(obj, workload)

    def _set_finalizers(
        self, kind: Kind, obj: dict[str, Any], finalizers: list[str]
    ) -> dict[str, Any]:
        """Replaces the object's finalizers, failing (409) if it changed since it was read."""
        meta = obj["metadata"]
        patch = {"metadata": {"resourceVersion": meta["resourceVersion"], "finalizers": finalizers}}
        return self.api.merge_patch(kind, meta["name"], patch, meta["namespace"])

    def _resolve_references(self, kind: Kind, obj: dict[str, Any]) -> str:
        """Copies referenced external names into forProvider; returns what is still missing."""
        meta = obj["metadata"]
        for_provider = obj["spec"].get("forProvider", {})
        patch: dict[str, str] = {}
        missing = []
        for field, target_kind in REFERENCES.get(kind, ()):
            ref = for_provider.get(f"{field}Ref")
            if not ref:
                continue
            target = self.api.get(target_kind, ref["name"], meta["namespace"])
            value = ((target or {}).get("metadata", {}).get("annotations") or {}).get(EXTERNAL_NAME)
            if not value:
                missing.append(f"{target_kind.kind} {ref['name']}")
            elif for_provider.get(field) != value:
                patch[field] = value
        if patch:
            spec = {"spec": {"forProvider": patch}}
            obj.update(self.api.merge_patch(kind, meta["name"], spec, meta["namespace"]))
        if missing:
            return "cannot resolve references: " + ", ".join(missing) + " has no external name"
        return ""

    def _at_provider(
        self, kind: Kind, obj: dict[str, Any], workload: Workload | None
    ) -> dict[str, Any]:
        """What the cloud reports; a cluster is created once its Kubernetes answers (`workload`)."""
        ident = external_id(obj)
        spec = obj["spec"]
        for_provider = spec.get("forProvider", {})
        if kind == kinds.CKS_CLUSTER:
            if workload is None:
                return {"id": ident, "status": "STATUS_CREATING"}
            endpoint = f"127.0.0.1:{workload.port}"
            return {"id": ident, "status": "STATUS_RUNNING", "apiServerEndpoint": endpoint}
        if kind == kinds.CIVO_CLUSTER:
            if workload is None:
                return {"id": ident, "ready": False, "status": "BUILDING"}
            endpoint = f"https://127.0.0.1:{workload.port}"
            return {"id": ident, "ready": True, "status": "ACTIVE", "apiEndpoint": endpoint}
        if kind == kinds.CIVO_NODEPOOL:
            initial = spec.get("initProvider", {}).get("nodeCount")
            current = obj.get("status", {}).get("atProvider", {}).get("nodeCount", initial)
            # An autoscaled pool keeps whatever count it has; a fixed one follows forProvider.
            return {"id": ident, "nodeCount": for_provider.get("nodeCount", current)}
        if kind == kinds.CIVO_NETWORK:
            return {"id": ident, "label": for_provider.get("label")}
        return {"id": ident}

    def _write_status(
        self,
        kind: Kind,
        obj: dict[str, Any],
        at_provider: dict[str, Any],
        ready: tuple[bool, str] | None,
        error: str = "",
    ) -> None:
        old = obj.get("status") or {}
        reason = "ReconcileError" if error else "ReconcileSuccess"
        conditions = [_condition(obj, "Synced", not error, reason, error)]
        if ready is not None:
            conditions.append(_condition(obj, "Ready", ready[0], ready[1], ""))
        else:
            # A failed reconcile leaves Ready as it was, as crossplane-runtime does.
            conditions += [c for c in old.get("conditions") or [] if c.get("type") == "Ready"]
        status = {
            **old,
            "atProvider": at_provider or old.get("atProvider", {}),
            "conditions": conditions,
        }
        self._patch_status(self.api, kind, obj, status)

    def _patch_status(
        self, api: Kube, kind: Kind, obj: dict[str, Any], status: dict[str, Any]
    ) -> None:
        """Writes the status only when it differs from what is there, failing (409) if the
        object changed since it was read."""
        if _comparable(status) == _comparable(obj.get("status") or {}):
            return
        self.status_writes += 1
        meta = obj["metadata"]
        patch = {"metadata": {"resourceVersion": meta["resourceVersion"]}, "status": status}
        api.merge_patch(kind, meta["name"], patch, meta.get("namespace"), subresource="status")

    def _publish_connection_secret(self, cluster: dict[str, Any], workload: Workload) -> None:
        ref = cluster["spec"].get("writeConnectionSecretToRef")
        namespace = cluster["metadata"]["namespace"]
        if not ref or self.api.get(kinds.SECRET, ref["name"], namespace) is not None:
            return
        encoded = base64.b64encode(json.dumps(workload.kubeconfig).encode()).decode()
        # As crossplane-runtime's connection publisher: owned by the managed resource.
        owner = {
            "apiVersion": cluster["apiVersion"],
            "kind": cluster["kind"],
            "name": cluster["metadata"]["name"],
            "uid": cluster["metadata"]["uid"],
            "controller": True,
        }
        metadata = {"name": ref["name"], "namespace": namespace, "ownerReferences": [owner]}
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": metadata,
            "type": "connection.crossplane.io/v1alpha1",
            # upjet-civo publishes the raw kubeconfig under both keys (PROVIDERS.md §6).
            "data": {"kubeconfig": encoded, "attribute.kubeconfig": encoded},
        }
        self.api.create(kinds.SECRET, secret)

    def _reconcile_cks_nodepools(self) -> None:
        """CKS's side of a NodePool, in every CKS cluster that answers: validate the instance
        type, bring up targetNodes nodes."""
        for workload in self.clusters.answering("cks"):
            self._guarded(self._reconcile_cks_nodepools_in, workload.api)

    def _reconcile_cks_nodepools_in(self, api: Kube) -> None:
        for pool in api.list(kinds.CKS_NODEPOOL):
            old = pool.get("status") or {}
            target = pool["spec"].get("targetNodes", old.get("currentNodes", 0))
            with self._lock:
                starved = pool["metadata"]["name"] in self.starved
            status = {
                **old,
                "currentNodes": 0 if starved else target,
                "queuedNodes": target if starved else 0,
                "conditions": [_condition(pool, "Validated", True, "Valid", "")],
            }
            self._guarded(self._patch_status, api, kinds.CKS_NODEPOOL, pool, status)

    def autoscale_cks_pool(self, cluster_id: str, name: str, target_nodes: int) -> dict[str, Any]:
        """What the CKS autoscaler does in that cluster: an Update of spec.targetNodes under its
        own manager."""
        return self.clusters.get(cluster_id).api.merge_patch(
            kinds.CKS_NODEPOOL,
            name,
            {"spec": {"targetNodes": target_nodes}},
            field_manager="cks-cluster-autoscaler",
        )


def _condition(
    obj: dict[str, Any], kind: str, status: bool, reason: str, message: str
) -> dict[str, Any]:
    value = "True" if status else "False"
    previous = condition(obj, kind)
    entry: dict[str, Any] = {"type": kind, "status": value, "reason": reason}
    if message:
        entry["message"] = message
    # Like crossplane-runtime: the transition time moves only when the status does.
    same = previous.get("status") == value
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    entry["lastTransitionTime"] = previous.get("lastTransitionTime") if same else now
    return entry


def _comparable(status: dict[str, Any]) -> Any:
    copied = copy.deepcopy(status)
    for entry in copied.get("conditions") or []:
        entry.pop("lastTransitionTime", None)
    return copied
