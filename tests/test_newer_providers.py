"""The providers users run may be newer than the ones `make e2e` proves (provider-kubernetes
v1.2.1, v1.3.0 and v1.3.1, provider-helm v1.3.0), and the newer ones cannot be built here
(docs/versions.md). What they change in the objects the function observes is known from their
sources, so it is proven here, provider-kubernetes v1.3's shape too (which make e2e also runs):
a whole life of each XR is driven under the observed shapes each provider version writes, and
every answer must be exactly the one the proven versions give.

What the newer providers write that the proven ones do not:

- provider-kubernetes v1.3.0 and later: `spec.forProvider.deletionPropagationPolicy`, defaulted to
  `Background` by the Object CRD (package/crds/kubernetes.m.crossplane.io_objects.yaml). The API
  server stores the default on create and adds it on every read of an Object stored before.
- provider-kubernetes v1.4.0: `status.lastHandledReconcileAt` (crossplane-runtime v2.5, written
  once a user requested a reconcile), and with `--remove-managed-fields` an
  `status.atProvider.manifest` without `metadata.managedFields`.
- provider-helm v1.4.0 (Helm v4 SDK, new installs by server-side apply): the Release CRD's
  `maxHistory: 20` default (there since v1.3.0), `status.atProvider.version`, and
  `status.lastHandledReconcileAt`.

The function reads none of these, so it must neither compose differently nor write them back:
under Crossplane's server-side apply of composed resources, a field the function wrote would
be owned by the XR's field manager and re-asserted on every reconcile.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from google.protobuf import json_format

from function import runner
from function.memo.memo import MEMO_BYTES, Memo
from function.runner import FunctionRunner
from harness.fixtures import (
    CLUSTER_PROVIDER_CONFIG,
    ENDPOINT,
    World,
    civo_connection_secret,
    civo_xr,
    conditions,
    coreweave_xr,
    credentials_secret,
    desired,
    readiness,
    request,
    results,
    xr_status,
)
from harness.validator import shared_crds_dir
from tests import civo_expected, coreweave_expected
from tests.test_memo import canonical, composed_afresh, last_required

OBJECT = ("kubernetes.m.crossplane.io/v1alpha1", "Object")
RELEASE = ("helm.m.crossplane.io/v1beta1", "Release")
NOW = "2026-11-30T00:00:00Z"
# What crossplane-runtime v2.5 copies from a user's reconcile request: an opaque token.
RECONCILE_TOKEN = "2026-12-01T09:30:00Z"


@dataclasses.dataclass(frozen=True)
class Shape:
    """What the API server (a provider version's CRD defaults) and the provider itself add to the
    composed resources the function observes, on top of what the function composed."""

    name: str
    # CRD defaults of an Object's spec and spec.forProvider, set where absent.
    object_spec: Mapping[str, Any]
    object_for_provider: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    # Written by the provider into the status of every Object it reconciled.
    object_status: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    # --remove-managed-fields (provider-kubernetes v1.4.0, off by default).
    strips_managed_fields: bool = False
    release_for_provider: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    # Merged into a deployed Release's status.atProvider, and into its status.
    release_at_provider: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    release_status: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def store(self, observed: dict[str, dict[str, Any]]) -> None:
        """observed as read back from the API server, once the provider reconciled it."""
        for body in observed.values():
            kind = (body.get("apiVersion"), body.get("kind"))
            spec = body.setdefault("spec", {})
            status = body.get("status")
            if kind == OBJECT:
                for field, value in self.object_spec.items():
                    spec.setdefault(field, copy.deepcopy(value))
                for field, value in self.object_for_provider.items():
                    spec["forProvider"].setdefault(field, value)
                if status is not None:
                    status.update(copy.deepcopy(dict(self.object_status)))
                    live = status.get("atProvider", {}).get("manifest", {})
                    if self.strips_managed_fields and "metadata" in live:
                        live["metadata"].pop("managedFields", None)
            elif kind == RELEASE:
                for field, value in self.release_for_provider.items():
                    spec["forProvider"].setdefault(field, value)
                if status is not None and "atProvider" in status:
                    status["atProvider"].update(self.release_at_provider)
                    status.update(self.release_status)


# The Object CRD of v1.2.1 (../shared/crds/kubernetes) defaults managementPolicies to ["*"] and
# watch to false; v1.3.0, v1.3.1 and v1.4.0 keep both.
OBJECT_SPEC_DEFAULTS = {"managementPolicies": ["*"], "watch": False}
BACKGROUND = {"deletionPropagationPolicy": "Background"}
# The Release CRD's maxHistory default (provider-helm v1.3.0 and v1.4.0).
RELEASE_DEFAULTS = {"maxHistory": 20}

KUBERNETES_V1_2_1 = Shape("provider-kubernetes v1.2.1", OBJECT_SPEC_DEFAULTS)
# What each newer provider-kubernetes writes besides its deletionPropagationPolicy default.
KUBERNETES_WRITES: dict[str, dict[str, Any]] = {
    "v1.3.0": {},
    "v1.3.1": {},
    "v1.4.0": {},
    "v1.4.0, a reconcile requested": {"object_status": {"lastHandledReconcileAt": RECONCILE_TOKEN}},
    "v1.4.0 --remove-managed-fields": {"strips_managed_fields": True},
}
KUBERNETES_NEWER = [
    Shape(f"provider-kubernetes {version}", OBJECT_SPEC_DEFAULTS, BACKGROUND, **writes)
    for version, writes in KUBERNETES_WRITES.items()
]
HELM_V1_3_0 = Shape("provider-helm v1.3.0", {}, release_for_provider=RELEASE_DEFAULTS)
HELM_NEWER = [
    Shape(
        f"provider-helm v1.4.0, {situation}",
        {},
        release_for_provider=RELEASE_DEFAULTS,
        release_at_provider={"version": "9.59.0"},
        release_status=status,
    )
    for situation, status in (
        ("Helm v4 server-side apply install", {}),
        ("a reconcile requested", {"lastHandledReconcileAt": RECONCILE_TOKEN}),
    )
]


def live(
    manifest: Mapping[str, Any],
    managers: list[tuple[str, str]],
    status: dict[str, Any] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """The in-cluster object as the API server returns it, which provider-kubernetes reports as
    status.atProvider.manifest: the manifest applied, with `spec` overrides other writers made,
    server metadata, its field managers ((manager, operation)) and its own status."""
    obj = copy.deepcopy(dict(manifest))
    if spec:
        obj["spec"] = {**obj["spec"], **spec}
    name = obj["metadata"]["name"]
    obj["metadata"] = {
        **obj["metadata"],
        "uid": f"uid-{name}",
        "resourceVersion": "48213",
        "generation": 1,
        "creationTimestamp": NOW,
        "managedFields": [
            {
                "manager": manager,
                "operation": operation,
                "apiVersion": obj["apiVersion"],
                "time": NOW,
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {}},
            }
            for manager, operation in managers
        ],
    }
    if status is not None:
        obj["status"] = status
    return obj


def applied_by(world: World, key: str, **spec: Any) -> dict[str, Any]:
    """status.atProvider of an Object whose manifest provider-kubernetes applied under server-side
    apply (its field manager is named after the Object); a NodePool as CKS validated it and runs
    its target's nodes, with the `spec` the CKS autoscaler wrote."""
    body = world.observed[key]
    managers = [(f"provider-kubernetes/{body['metadata']['name']}", "Apply")]
    if spec:
        managers.append(("cluster-autoscaler", "Update"))
    manifest = body["spec"]["forProvider"]["manifest"]
    target = spec.get("targetNodes", manifest.get("spec", {}).get("targetNodes"))
    running = {
        "conditions": [{"type": "Validated", "status": "True", "reason": "Valid"}],
        "currentNodes": target,
    }
    is_pool = manifest["kind"] == "NodePool"
    return {"manifest": live(manifest, managers, running if is_pool else None, **spec)}


class Life:
    """One XR's life under one provider shape: every reconcile's answer, by stage."""

    def __init__(self, world: World, shape: Shape) -> None:
        self.world, self.shape = world, shape
        self.answers: list[tuple[str, dict[str, Any]]] = []
        # The XR of each reconcile with the status the function answered, as Crossplane writes it.
        self.xrs: list[dict[str, Any]] = []
        # Each life has its own servicer, so its own memo: no entry of another life answers for it.
        world.servicer = FunctionRunner()

    def reconcile(self, stage: str) -> None:
        """Reconcile once; observed is then what the API server and the provider hold."""
        self.shape.store(self.world.observed)
        rsp = self.world.reconcile()
        self.shape.store(self.world.observed)
        # Everything the function answered that Crossplane acts on.
        answer = {
            "desired": desired(rsp),
            "readiness": readiness(rsp),
            "status": xr_status(rsp),
            "conditions": conditions(rsp),
            "results": results(rsp),
            "requirements": json_format.MessageToDict(rsp.requirements),
            "calls": self.world.calls[-1],
        }
        self.answers.append((stage, answer))
        self.xrs.append({**copy.deepcopy(self.world.xr), "status": xr_status(rsp)})


def coreweave_life(shape: Shape) -> Life:
    """A CoreWeaveCluster from creation through an edit of an autoscaled pool and a pool's
    removal, with provider-kubernetes reporting what it reports."""
    world = World(coreweave_xr())
    world.cluster_objects = [CLUSTER_PROVIDER_CONFIG, credentials_secret()]
    life = Life(world, shape)
    life.reconcile("new")
    world.ready("vpc", atProvider={"id": "3f0c-vpc"})
    world.ready(
        "cks-cluster",
        atProvider={"id": "9e1d-cks", "status": "STATUS_RUNNING", "apiServerEndpoint": ENDPOINT},
    )
    world.ready("usage-vpc-by-cluster")
    life.reconcile("cluster-ready")
    for key in ("system-nodepool", "nodepool-l40s", "nodepool-cpu"):
        world.ready(key, atProvider=applied_by(world, key))
    # The CKS autoscaler grew h100 to 5 nodes.
    world.ready("nodepool-h100", atProvider=applied_by(world, "nodepool-h100", targetNodes=5))
    shared_vast = live(coreweave_expected.SHARED_VAST_LIVE, [("cks-storage", "Update")])
    world.ready("shared-vast-observer", atProvider={"manifest": shared_vast})
    # Secrets, ProviderConfigs and Usages exist once applied; they report no readiness.
    for key in ("kubeconfig", "kubernetes-providerconfig", "usage-kubeconfig-by-providerconfig"):
        world.report(key)
    life.reconcile("pools-validated")
    world.ready("rwx-storageclass", atProvider=applied_by(world, "rwx-storageclass"))
    world.ready(
        "autoscaled-nodepool-h100",
        atProvider=applied_by(world, "autoscaled-nodepool-h100", targetNodes=5),
    )
    life.reconcile("converged")
    life.reconcile("steady")
    world.xr["spec"]["nodePools"][0]["maxNodeCount"] = 10
    life.reconcile("bounds-edited")
    del world.xr["spec"]["nodePools"][2]
    life.reconcile("pool-removed")
    life.reconcile("pool-deleted")
    return life


def deployed(revision: int, description: str) -> dict[str, Any]:
    """What provider-helm reports of a deployed Helm release."""
    return {"state": "deployed", "revision": revision, "releaseDescription": description}


def civo_life(shape: Shape, key: str = "kubeconfig") -> Life:
    """A CivoCluster from creation through its last autoscaled pool made fixed (a Helm upgrade)
    and a pool's removal, with provider-helm reporting what it reports; the provider writes the
    kubeconfig to the connection Secret's key."""
    world = World(civo_xr())
    life = Life(world, shape)
    life.reconcile("new")
    world.ready("network", atProvider={"id": "1d3e-net"})
    world.ready("firewall", atProvider={"id": "8c2a-fw"})
    world.ready(
        "civo-cluster", atProvider={"id": "5f0b-cluster", "kubernetesVersion": "1.34.1-k3s1"}
    )
    world.ready("usage-network-by-cluster")
    world.ready("usage-firewall-by-cluster")
    world.cluster_objects = [civo_connection_secret(key)]
    life.reconcile("cluster-ready")
    world.cluster_objects = []
    annotations = world.observed["nodepool-l40s"]["metadata"]["annotations"]
    annotations["crossplane.io/external-name"] = civo_expected.L40S_GROUP["name"]
    world.ready(
        "nodepool-l40s", atProvider={"id": civo_expected.L40S_GROUP["name"], "nodeCount": 1}
    )
    world.ready("nodepool-a100", atProvider={"id": "b9d4-a100", "nodeCount": 1})
    life.reconcile("pool-ids")
    world.ready("cluster-autoscaler", atProvider=deployed(1, "Install complete"), synced=True)
    world.report("helm-providerconfig")
    life.reconcile("converged")
    life.reconcile("steady")
    del world.xr["spec"]["nodePools"][1]["minNodeCount"]
    del world.xr["spec"]["nodePools"][1]["maxNodeCount"]
    life.reconcile("last-autoscaled-pool-fixed")
    world.ready("cluster-autoscaler", atProvider=deployed(2, "Upgrade complete"), synced=True)
    life.reconcile("release-upgraded")
    del world.xr["spec"]["nodePools"][2]
    life.reconcile("pool-removed")
    return life


LIVES: dict[str, tuple[Callable[[Shape], Life], Shape, list[Shape]]] = {
    "CoreWeaveCluster": (coreweave_life, KUBERNETES_V1_2_1, KUBERNETES_NEWER),
    "CivoCluster": (civo_life, HELM_V1_3_0, HELM_NEWER),
}
NEWER = [
    pytest.param(kind, shape, id=f"{kind}-{shape.name}")
    for kind, (_, _, shapes) in LIVES.items()
    for shape in shapes
]


CRDS = shared_crds_dir()


def crd_properties(path: Path, *fields: str) -> dict[str, Any]:
    """The schema properties at fields of a CRD's first version."""
    crd = yaml.safe_load(path.read_text())
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    for field in fields:
        schema = schema["properties"][field]
    return dict(schema["properties"])


@pytest.mark.skipif(CRDS is None, reason="../shared/crds not found")
def test_fixture_defaults_are_the_crds_defaults() -> None:
    """The defaults the shapes add are the CRDs' own: the Object CRD of provider-kubernetes
    v1.2.1 and the Release CRD of provider-helm v1.4.0, as copied to ../shared/crds. (v1.3.0's
    deletionPropagationPolicy default is in its CRD, which has no copy there; v1.2.1 has none.)"""
    assert CRDS is not None
    objects = CRDS / "kubernetes" / "kubernetes.m.crossplane.io_objects.yaml"
    spec = crd_properties(objects, "spec")
    assert {f: s["default"] for f, s in spec.items() if "default" in s} == {
        **OBJECT_SPEC_DEFAULTS,
        "providerConfigRef": {"kind": "ClusterProviderConfig", "name": "default"},
    }
    assert sorted(spec["forProvider"]["properties"]) == ["manifest"]
    releases = CRDS / "helm" / "helm.m.crossplane.io_releases.yaml"
    for_provider = crd_properties(releases, "spec", "forProvider")
    assert {f: s["default"] for f, s in for_provider.items() if "default" in s} == RELEASE_DEFAULTS
    assert "default" not in for_provider["ssaForceConflicts"]
    at_provider = crd_properties(releases, "status", "atProvider")
    assert set(HELM_NEWER[0].release_at_provider) <= set(at_provider)
    assert "lastHandledReconcileAt" in crd_properties(releases, "status")


def test_proven_providers_life_composes_the_documented_objects() -> None:
    """The reference the newer providers are held to is the documented composition: under the
    shapes v1.2.1 and v1.3.0 write (their CRD defaults included), each XR converges to exactly
    the objects the expected modules spell out, with nothing left to report."""
    coreweave = dict(coreweave_life(KUBERNETES_V1_2_1).answers)
    civo = dict(civo_life(HELM_V1_3_0).answers)
    for answers, expected in ((coreweave, coreweave_expected), (civo, civo_expected)):
        assert answers["converged"]["desired"] == expected.converged()
        assert answers["steady"] == answers["converged"]
        assert all(answers["steady"]["readiness"].values())
        assert answers["steady"]["results"] == []
    assert coreweave["steady"]["conditions"] == {
        "ClusterAccess": (
            "True",
            "Available",
            f'kubeconfig in Secret "{coreweave_expected.SECRET_NAME}"',
        ),
        "NodePools": (
            "True",
            "AtTarget",
            "node pools at target: modelplane-system (1 of 1 node), h100 (5 of 5 nodes), l40s "
            "(1 of 1 node), cpu (2 of 2 nodes)",
        ),
        "SharedStorage": (
            "True",
            "Available",
            'ReadWriteMany StorageClass "shared-vast-delete" cloned from "shared-vast"',
        ),
    }
    settings = coreweave["bounds-edited"]["desired"]["autoscaled-nodepool-h100"]
    assert settings["spec"]["forProvider"]["manifest"]["spec"]["maxNodes"] == 10
    retiring = coreweave["pool-removed"]["desired"]["nodepool-cpu"]["spec"]["managementPolicies"]
    assert retiring == [*coreweave_expected.IN_CLUSTER_POLICIES, "Delete"]
    assert "nodepool-cpu" not in coreweave["pool-deleted"]["desired"]

    assert civo["steady"]["conditions"]["NodePools"] == (
        "True",
        "AtTarget",
        "node pools at target: l40s (1 of 1 node), a100 (1 of 1 node)",
    )
    assert civo["steady"]["conditions"]["Autoscaler"] == (
        "True",
        "Available",
        "cluster-autoscaler scales l40s",
    )
    assert civo["release-upgraded"]["desired"]["cluster-autoscaler"] == civo_expected.autoscaler([])
    assert "nodepool-a100" not in civo["pool-removed"]["desired"]


@pytest.mark.parametrize(("kind", "shape"), NEWER)
def test_newer_provider_changes_no_answer(kind: str, shape: Shape) -> None:
    """Every reconcile of the life, under the newer provider's shapes, answers exactly as under
    the proven provider: the same desired objects, readiness, XR status, conditions (messages
    included), results, requirements and calls per reconcile. Anything else would flap."""
    drive, proven, _ = LIVES[kind]
    newer = drive(shape)
    assert lacking(newer.world.observed, shape) == [], "the life observed what the provider writes"
    assert newer.answers == drive(proven).answers


def lacking(observed: Mapping[str, Mapping[str, Any]], shape: Shape) -> list[str]:
    """Keys of the observed Objects and Releases that do not carry what shape writes; [] also
    needs at least one of them to be there."""
    missing, seen = [], 0
    for key, body in observed.items():
        kind = (body["apiVersion"], body["kind"])
        spec, status = body["spec"], body.get("status", {})
        if kind == OBJECT:
            metadata = status.get("atProvider", {}).get("manifest", {}).get("metadata", {})
            carries = (
                spec["forProvider"].items() >= shape.object_for_provider.items()
                and status.items() >= shape.object_status.items()
                and not (shape.strips_managed_fields and "managedFields" in metadata)
            )
        elif kind == RELEASE:
            carries = (
                spec["forProvider"].items() >= shape.release_for_provider.items()
                and status["atProvider"].items() >= shape.release_at_provider.items()
                and status.items() >= shape.release_status.items()
            )
        else:
            continue
        seen += 1
        if not carries:
            missing.append(key)
    return missing if seen else ["no Object or Release observed"]


# Fields the providers' CRDs default, per composed kind. The function may write a defaulted
# field only where it always has (server-side apply then keeps it the XR's); the ones the newer
# versions introduced never.
DEFAULTED: dict[tuple[str, str], list[tuple[str, ...]]] = {
    OBJECT: [
        ("spec", "forProvider", "deletionPropagationPolicy"),
        ("spec", "managementPolicies"),
        ("spec", "providerConfigRef"),
        ("spec", "readiness", "policy"),
        ("spec", "watch"),
        ("status",),
    ],
    RELEASE: [
        ("spec", "forProvider", "maxHistory"),
        ("spec", "forProvider", "ssaForceConflicts"),
        ("spec", "forProvider", "takeOwnership"),
        ("spec", "managementPolicies"),
        ("spec", "providerConfigRef"),
        ("status",),
    ],
}
POOLS = ("system-nodepool", "nodepool-h100", "autoscaled-nodepool-h100", "nodepool-l40s")
# Where the function writes a CRD-defaulted field, as it always has: every in-cluster Object's
# policies (none with Delete while wanted) and ProviderConfig, and each pool's readiness policy.
WRITTEN = {
    "CoreWeaveCluster": {
        *((key, "spec.readiness.policy") for key in (*POOLS, "nodepool-cpu")),
        *(
            (key, field)
            for key in (*POOLS, "nodepool-cpu", "rwx-storageclass", "shared-vast-observer")
            for field in ("spec.managementPolicies", "spec.providerConfigRef")
        ),
    },
    "CivoCluster": {
        ("cluster-autoscaler", "spec.managementPolicies"),
        ("cluster-autoscaler", "spec.providerConfigRef"),
    },
}


def defaulted_fields_written(life: Life) -> Iterator[tuple[str, str]]:
    for _, answer in life.answers:
        for key, body in answer["desired"].items():
            for path in DEFAULTED.get((body["apiVersion"], body["kind"]), []):
                value: Any = body
                for step in path:
                    value = value.get(step) if isinstance(value, dict) else None
                if value is not None:
                    yield key, ".".join(path)


@pytest.mark.parametrize(("kind", "shape"), NEWER)
def test_function_writes_no_field_the_newer_provider_defaults(kind: str, shape: Shape) -> None:
    """Observing the newer provider's defaults, the function still writes none of them, and the
    older defaulted fields only where it always did: server-side apply never takes a defaulted
    field from the provider's CRD default, and never hands one to the XR's field manager."""
    drive, _, _ = LIVES[kind]
    assert set(defaulted_fields_written(drive(shape))) == WRITTEN[kind]


def test_provider_upgrade_in_place_is_answered_from_the_memo() -> None:
    """Upgrading the providers under a converged XR changes only fields the function does not
    read: the memo keeps answering, with the bytes a fresh composition gives, and no core runs."""
    memo = Memo(MEMO_BYTES)
    for kind, (drive, proven, newer) in LIVES.items():
        world = drive(proven).world
        # The final call of world's next reconcile, before and after the upgrade.
        before = runner.answer(request(world.xr, world.observed, last_required(world)), memo)
        assert before.memo == "miss", kind
        for shape in newer:
            observed = copy.deepcopy(world.observed)
            shape.store(observed)
            req = request(world.xr, observed, last_required(world))
            after = runner.answer(req, memo)
            where = (kind, shape.name)
            assert after.memo == "hit", where
            assert canonical(after.wire) == canonical(before.wire) == composed_afresh(req), where
