"""The committed renders of every lifecycle stage, validated by the real API server.

tests/crdcheck.py re-implements the API server's validation offline, so that unit and property
tests can check thousands of composed objects without a control plane. Here the real
kube-apiserver, with the provider CRDs and the XRDs installed, dry-runs every object of
tests/stages/<set>/rendered/<stage>.yaml (schema, CEL, defaults, and unknown fields under strict
field validation) and tests/crdcheck.py must agree with it on each one.
"""

from __future__ import annotations

import copy
from typing import Any

import yaml

from harness.e2e import kinds
from harness.e2e.binaries import REPO
from harness.e2e.kube import ApiError, Kind
from harness.e2e.suite import SHARED_CRDS, Suite
from harness.example_sets import STAGES, example_sets
from tests.crdcheck import CrdCatalog

# Its own namespace: the lifecycle tests' XRs in ml-team have composed objects of these names.
DRY_RUN_NAMESPACE = "e2e-dry-run"
BY_TYPE: dict[tuple[str, str], Kind] = {
    (k.api_version, k.kind): k for k in vars(kinds).values() if isinstance(k, Kind)
}


def rendered_objects() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for path in sorted(example.rendered(stage) for example in example_sets() for stage in STAGES):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and (doc.get("apiVersion"), doc.get("kind")) in BY_TYPE:
                found.append((f"{path.relative_to(REPO)}: {doc['kind']}", doc))
    return found


def as_new(doc: dict[str, Any]) -> dict[str, Any]:
    """The object as a client would create it in the dry-run namespace."""
    obj = copy.deepcopy(doc)
    obj.pop("status", None)
    metadata = obj["metadata"]
    # Server-assigned fields, and the owner reference crank render writes without the XR's UID
    # (Crossplane fills it in when it applies).
    for field in (
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "generation",
        "managedFields",
        "ownerReferences",
    ):
        metadata.pop(field, None)
    if BY_TYPE[(obj["apiVersion"], obj["kind"])].namespaced:
        metadata["namespace"] = DRY_RUN_NAMESPACE
    return obj


def crdcheck_problems(catalog: CrdCatalog, obj: dict[str, Any]) -> list[str]:
    if not catalog.has_schema(obj["apiVersion"], obj["kind"]):
        return []  # core kinds (Secret) have no CRD; only the API server checks them
    return catalog.validate(obj)


def test_api_server_and_crdcheck_accept_every_rendered_object(suite: Suite) -> None:
    api = suite.plane.api
    api.apply(kinds.NAMESPACE, {"metadata": {"name": DRY_RUN_NAMESPACE}})
    catalog = CrdCatalog.load(SHARED_CRDS, REPO / "apis")
    objects = rendered_objects()
    assert len(objects) > 20, "no rendered fixtures found"
    refused = {}
    disagreements = {}
    for label, doc in objects:
        obj = as_new(doc)
        try:
            api.dry_run_create(BY_TYPE[(obj["apiVersion"], obj["kind"])], obj)
            server = ""
        except ApiError as error:
            server = str(error)
        offline = crdcheck_problems(catalog, obj)
        if server:
            refused[label] = server
        if bool(server) != bool(offline):
            disagreements[label] = {"api-server": server, "crdcheck": offline}
    assert not refused, refused
    assert not disagreements, disagreements
