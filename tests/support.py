"""Fixtures shared by the tests: realistic XRs, requests, and the observed state Crossplane
would report after applying a response."""

from __future__ import annotations

import asyncio
import base64
import copy
import json
from typing import Any

from crossplane.function import logging, resource
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import json_format

from function.runner import FunctionRunner

logging.configure(logging.Level.DISABLED)

NAMESPACE = "ml-team"
# Obviously fake; tests assert it appears nowhere but inside the kubeconfig Secret.
ORG_TOKEN = "CW-SECRET-fake-token-for-tests-0123456789"
ENDPOINT = "ml-team-prod-a1b2c3.k8s.us-east-04a.coreweave.com"

COREWEAVE_XR: dict[str, Any] = {
    "apiVersion": "infrastructure.modelplane.ai/v1alpha1",
    "kind": "CoreWeaveCluster",
    "metadata": {"name": "inference-east", "namespace": NAMESPACE, "uid": "7d1e5c2a-0000"},
    "spec": {
        "zone": "US-EAST-04A",
        "kubernetesVersion": "1.37",
        "credentials": {"name": "coreweave", "type": "ClusterProviderConfig"},
        "nodePools": [
            {
                "name": "h100",
                "role": "GPU",
                "instanceType": "gd-8xh100ib-i128",
                "nodeCount": 2,
                "minNodeCount": 1,
                "maxNodeCount": 8,
                "gpu": {"acceleratorType": "H100"},
            },
            {
                "name": "l40s",
                "role": "GPU",
                "instanceType": "gd-8xl40s-i128",
                "nodeCount": 1,
                "gpu": {"acceleratorType": "L40S"},
            },
            {"name": "cpu", "role": "CPU", "instanceType": "cd-gp-a192-genoa", "nodeCount": 2},
        ],
    },
}

CLUSTER_PROVIDER_CONFIG: dict[str, Any] = {
    "apiVersion": "coreweave.m.crossplane.io/v1beta1",
    "kind": "ClusterProviderConfig",
    "metadata": {"name": "coreweave"},
    "spec": {
        "credentials": {
            "source": "Secret",
            "secretRef": {"name": "coreweave-creds", "namespace": "crossplane-system", "key": "credentials"},
        }
    },
}


def credentials_secret(token: str = ORG_TOKEN, *, namespace: str = "crossplane-system") -> dict[str, Any]:
    payload = json.dumps({"token": token}).encode()
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "coreweave-creds", "namespace": namespace},
        "data": {"credentials": base64.b64encode(payload).decode()},
    }


def coreweave_xr(**spec: Any) -> dict[str, Any]:
    xr = copy.deepcopy(COREWEAVE_XR)
    xr["spec"].update(spec)
    return xr


def request(
    xr: dict[str, Any],
    observed: dict[str, dict[str, Any]] | None = None,
    required: dict[str, list[dict[str, Any]]] | None = None,
    step_input: dict[str, Any] | None = None,
) -> fnv1.RunFunctionRequest:
    req = fnv1.RunFunctionRequest(meta=fnv1.RequestMeta(tag="test"))
    req.observed.composite.resource.update(xr)
    for key, body in (observed or {}).items():
        req.observed.resources[key].resource.update(body)
    for name, items in (required or {}).items():
        req.required_resources[name].SetInParent()
        for item in items:
            req.required_resources[name].items.add().resource.update(item)
    if step_input is not None:
        req.input.update(step_input)
    return req


def run(req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
    return asyncio.run(FunctionRunner().RunFunction(req, None))


def to_dict(rsp: fnv1.RunFunctionResponse) -> dict[str, Any]:
    return json_format.MessageToDict(rsp)


def desired(rsp: fnv1.RunFunctionResponse) -> dict[str, dict[str, Any]]:
    """Desired composed resources by key, numbers as ints as the API server would store them."""
    return {k: _ints(resource.struct_to_dict(r.resource)) for k, r in rsp.desired.resources.items()}


def _ints(data: Any) -> Any:
    if isinstance(data, float) and data.is_integer():
        return int(data)
    if isinstance(data, dict):
        return {k: _ints(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_ints(v) for v in data]
    return data
