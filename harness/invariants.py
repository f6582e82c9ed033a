"""What every answer must satisfy, whatever the request: checked by the property tests on
generated requests and by the walks after every reconcile."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import json_format

from harness.fixtures import CORE_KINDS, NAMESPACE, results, token_forms
from harness.validator import composed_problems, spec_problems

FATAL_PATH = re.compile(r"(spec|metadata|input)(\.[A-Za-z]+|\[\d+\])*:")
DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")

# Realistic values of the fields a cloud cannot change in place.
CW_INSTANCE_TYPES = ["gd-8xh100ib-i128", "gd-8xl40s-i128", "gd-8xh200ib-i128", "cd-gp-a192-genoa"]
CIVO_SIZES = ["g4s.kube.medium", "g4s.kube.large", "an.g1.l40s.kube.x1", "g4g.kube.small"]


def xrd_refuses(kind: str, xr: dict[str, Any]) -> bool:
    """Whether the API server refuses the XR's spec, or the function's own rule does: no
    CoreWeave pool may be named modelplane-system (docs/api.md), a name the XRD accepts."""
    return _xrd_refuses(kind, json.dumps({**xr, "status": {}}, sort_keys=True))


@functools.lru_cache(maxsize=4096)
def _xrd_refuses(kind: str, xr_json: str) -> bool:
    xr = json.loads(xr_json)
    pools = xr["spec"].get("nodePools") if isinstance(xr["spec"], dict) else None
    reserved = (
        kind == "CoreWeaveCluster"
        and isinstance(pools, list)
        and any(isinstance(p, dict) and p.get("name") == "modelplane-system" for p in pools)
    )
    return reserved or bool(spec_problems(xr))


def fatal_messages(rsp: fnv1.RunFunctionResponse) -> list[str]:
    return [message for severity, message in results(rsp) if severity == "Fatal"]


def fatal_problems(rsp: fnv1.RunFunctionResponse) -> list[str]:
    """How an answer to bad input falls short of one FATAL alone, naming a field, with nothing
    desired and no XR status."""
    problems = []
    if [severity for severity, _ in results(rsp)] != ["Fatal"]:
        return [f"not one FATAL alone: {results(rsp)}"]
    message = results(rsp)[0][1]
    if "internal error" in message:
        problems.append(f"an internal error: {message}")
    if not FATAL_PATH.search(message):
        problems.append(f"FATAL names no field path: {message[:300]}")
    if len(rsp.desired.resources) != 0:
        problems.append("a FATAL carries desired resources")
    if "status" in rsp.desired.composite.resource.fields:
        problems.append("a FATAL carries an XR status")
    return problems


def object_problems(composed: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    """Object-name and CRD problems of every composed object (as `desired` gives them), by
    resource key."""
    problems: dict[str, list[str]] = {}
    for key, body in composed.items():
        found = []
        name = body.get("metadata", {}).get("name", "")
        if len(name) > 253 or not DNS_SUBDOMAIN.fullmatch(name):
            found.append(f"metadata.name: {name!r} is not a valid object name")
        if (body["apiVersion"], body["kind"]) not in CORE_KINDS:
            applied = {**body, "metadata": {**body["metadata"], "namespace": NAMESPACE}}
            found.extend(composed_problems(applied))
        if found:
            problems[key] = found
    return problems


def tokens_in(text: str, tokens: Iterable[str]) -> list[str]:
    return [token for token in tokens if any(form in text for form in token_forms(token))]


def leaked_tokens(rsp: fnv1.RunFunctionResponse, tokens: Iterable[str]) -> list[str]:
    """The tokens found anywhere in the answer but the kubeconfig Secret's data."""
    rest = fnv1.RunFunctionResponse()
    rest.CopyFrom(rsp)
    if "kubeconfig" in rest.desired.resources:
        del rest.desired.resources["kubeconfig"].resource.fields["data"]
    return tokens_in(json.dumps(json_format.MessageToDict(rest)), tokens)
