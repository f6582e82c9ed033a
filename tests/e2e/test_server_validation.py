"""The offline validator (harness/validator.py) agrees with the real kube-apiserver.

Unit and property tests check thousands of composed objects offline with harness/validator.py,
kube-apiserver's own validation code behind a pipe. Here the real kube-apiserver, with the
provider CRDs and the XRDs installed (their XR CRDs made by the real Crossplane), dry-runs
(fieldValidation=Strict) every object of tests/stages/<set>/rendered/<stage>.yaml, which both
accept, and every case of tests/validation_corpus.py, which it must answer with the validator's
exact message: the same field errors, or the same unknown fields or decoding error it refuses the
body with before validating.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from harness.e2e import kinds
from harness.e2e.binaries import REPO
from harness.e2e.kube import ApiError, Kind
from harness.e2e.suite import SHARED_CRDS, Suite
from harness.example_sets import STAGES, documents, example_sets
from harness.validator import Validator, as_sent, validator
from tests.validation_corpus import CASES, NS, VALID

# Its own namespace: the lifecycle tests' XRs in ml-team have composed objects of these names.
DRY_RUN_NAMESPACE = "e2e-dry-run"
BY_TYPE: dict[tuple[str, str], Kind] = {
    (k.api_version, k.kind): k for k in vars(kinds).values() if isinstance(k, Kind)
}


def rendered_objects() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for path in sorted(example.rendered(stage) for example in example_sets() for stage in STAGES):
        for doc in documents(path):
            if (doc.get("apiVersion"), doc.get("kind")) in BY_TYPE:
                found.append((f"{path.relative_to(REPO)}: {doc['kind']}", doc))
    return found


def as_new(doc: dict[str, Any]) -> dict[str, Any]:
    """The object as a client would create it in the dry-run namespace."""
    obj = copy.deepcopy(doc)
    obj.pop("status", None)
    metadata = obj["metadata"]
    # Server-assigned fields, and the owner reference crank render writes without the XR's UID
    # (Crossplane fills it in when it applies).
    server_assigned = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields")
    for field in (*server_assigned, "ownerReferences"):
        metadata.pop(field, None)
    if BY_TYPE[(obj["apiVersion"], obj["kind"])].namespaced:
        metadata["namespace"] = DRY_RUN_NAMESPACE
    return obj


# A dry run refusing unknown fields, as `kubectl apply --dry-run=server --validate=strict` asks.
STRICT_DRY_RUN = {"dryRun": "All", "fieldValidation": "Strict"}


def server_message(api: Any, obj: dict[str, Any]) -> str:
    """The API server's Status message for a dry-run create of `obj`; '' when it accepts it."""
    kind = BY_TYPE[(obj["apiVersion"], obj["kind"])]
    metadata = obj["metadata"] if isinstance(obj["metadata"], dict) else {}
    # POSTed to its namespace's path (a case with a malformed metadata has none to read).
    namespace = metadata.get("namespace", NS) if kind.namespaced else None
    try:
        api.request("POST", kind.path(namespace), as_sent(obj), query=STRICT_DRY_RUN)
    except ApiError as error:
        return str(json.loads(error.body)["message"])
    return ""


def expected(checker: Validator, obj: dict[str, Any], with_status: bool = False) -> str:
    """The validator's message for a corpus object, whose kind always has a CRD."""
    verdict = checker.verdict(obj, with_status=with_status)
    assert verdict.known, f"no served CRD defines {obj['apiVersion']} {obj['kind']}"
    return verdict.message


def test_api_server_and_the_validator_accept_every_rendered_object(suite: Suite) -> None:
    api = suite.plane.api
    api.apply(kinds.NAMESPACE, {"metadata": {"name": DRY_RUN_NAMESPACE}})
    checker = validator(SHARED_CRDS, REPO / "apis")
    objects = rendered_objects()
    assert len(objects) > 20, "no rendered fixtures found"
    # Core kinds (Secret) have no CRD, so no validator message: only the API server checks them.
    said = {
        label: (server_message(api, obj), checker.verdict(obj).message)
        for label, obj in ((label, as_new(doc)) for label, doc in objects)
    }
    assert {label: both for label, both in said.items() if both != ("", "")} == {}


def agrees(server: str, validator_message: str) -> bool:
    """The same answer: a field error's Status message is the validator's exactly; a body
    refused while decoding is reported as `<body summary> ... cannot be handled as a <Kind>:
    <the validator's message>`."""
    return server == validator_message or (
        bool(validator_message) and server.endswith(f": {validator_message}")
    )


def test_the_api_server_answers_the_corpus_as_the_validator_does(suite: Suite) -> None:
    api = suite.plane.api
    api.apply(kinds.NAMESPACE, {"metadata": {"name": NS}})
    checker = validator(SHARED_CRDS, REPO / "apis")
    # Status is a create's to drop: those cases are checked by a status update instead.
    creates = [c for c in CASES if not c.with_status]
    assert len(creates) >= 30
    disagreements = {}
    objects = [*VALID.items(), *((c.id, c.obj) for c in creates)]
    refused = 0
    for name, obj in objects:
        server, said = server_message(api, obj), expected(checker, obj)
        refused += bool(server)
        if not agrees(server, said):
            disagreements[name] = {"api-server": server, "validator": said}
    assert disagreements == {}
    suite.notes.append(
        f"kube-apiserver and the validator agree on all {len(objects)} corpus objects "
        f"({refused} refused)"
    )


# A ProviderConfig's own provider writes it (finalizer, status.users) soon after its create, so a
# status update can meet a newer resourceVersion; a few reads cover that controller's writes.
STATUS_UPDATE_ATTEMPTS = 5


def status_update_message(api: Any, kind: Kind, obj: dict[str, Any]) -> str:
    """The API server's message for a dry-run status update of `obj`, created without its status
    (and deleted afterwards), at the object's latest resourceVersion: a 409 from a controller's
    write in between is retried."""
    name, namespace = obj["metadata"]["name"], obj["metadata"].get("namespace")
    path = f"{kind.path(namespace, name)}/status"
    api.create(kind, {k: v for k, v in as_sent(obj).items() if k != "status"})
    try:
        for _ in range(STATUS_UPDATE_ATTEMPTS):
            current = api.get(kind, name, namespace)
            assert current is not None, f"{kind.kind} {name} is gone before its status update"
            update = {**as_sent(obj), "metadata": current["metadata"]}
            try:
                api.request("PUT", path, update, query=STRICT_DRY_RUN)
            except ApiError as error:
                if error.status == 409:
                    continue
                return str(json.loads(error.body)["message"])
            return ""
    finally:
        api.delete(kind, name, namespace)
    raise AssertionError(
        f"{kind.kind} {name}: every status update met a newer resourceVersion "
        f"({STATUS_UPDATE_ATTEMPTS} tries)"
    )


def test_a_status_update_is_refused_as_the_validator_says(suite: Suite) -> None:
    api = suite.plane.api
    api.apply(kinds.NAMESPACE, {"metadata": {"name": NS}})
    checker = validator(SHARED_CRDS, REPO / "apis")
    disagreements = {}
    for case in (c for c in CASES if c.with_status):
        kind = BY_TYPE[(case.obj["apiVersion"], case.obj["kind"])]
        server = status_update_message(api, kind, case.obj)
        said = expected(checker, case.obj, with_status=True)
        if not agrees(server, said):
            disagreements[case.id] = {"api-server": server, "validator": said}
    assert disagreements == {}
