"""The consumer's composition function, as Modelplane's InferenceCluster composes
(modelplaneai/modelplane, functions/compose-inference-cluster/): a cluster-scoped
ServingCluster composes one of our XRs in a fixed namespace with GPU pools only, and, while that
XR is Ready and publishes its kubeconfig Secret, a provider-kubernetes ClusterProviderConfig on
the Secret, an Object applied through it into the workload cluster (the InferenceCluster's
ServingStack), and a Usage of our XR by that Object. While our XR is not Ready it leaves all
three out, so Crossplane deletes them: a drop of our Ready shows as new UIDs."""

from __future__ import annotations

from typing import Any

import grpc
from crossplane.function import resource, response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1

# Where the InferenceCluster composes its cluster XR.
NAMESPACE = "modelplane-system"
XR_API_VERSION = "infrastructure.modelplane.ai/v1alpha1"
KUBERNETES_API_VERSION = "kubernetes.m.crossplane.io/v1alpha1"
# Per cloud: our XR's kind, its location field, and its pools' machine field.
CLOUDS = {
    "CoreWeave": ("CoreWeaveCluster", "zone", "instanceType"),
    "Civo": ("CivoCluster", "region", "size"),
}
# The composition resource names, as the InferenceCluster's: `<cloud>-cluster` and the rest.
KEY_PROVIDER_CONFIG = "cluster-providerconfig"
KEY_SERVING_STACK = "serving-stack"
KEY_USAGE = "usage-cluster-by-serving-stack"


def compose(req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
    rsp = response.to(req)
    xr = resource.struct_to_dict(req.observed.composite.resource)
    name, spec = xr["metadata"]["name"], xr["spec"]
    kind, location, machine = CLOUDS[spec["cloud"]]
    key = f"{spec['cloud'].lower()}-cluster"
    pools = [
        {
            "name": p["name"],
            "role": "GPU",
            machine: p["machine"],
            "nodeCount": p["nodeCount"],
            "gpu": {"acceleratorType": p["acceleratorType"]},
        }
        for p in spec["gpuPools"]
    ]
    desire(
        rsp,
        key,
        {
            "apiVersion": XR_API_VERSION,
            "kind": kind,
            "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {
                location: spec["location"],
                "credentials": spec["credentials"],
                "nodePools": pools,
            },
        },
    )
    cluster = req.observed.resources[key].resource if key in req.observed.resources else None
    observed = resource.struct_to_dict(cluster) if cluster is not None else {}
    status = observed.get("status", {})
    ready = any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions", [])
    )
    secret = next((s for s in status.get("secrets", []) if s.get("type") == "Kubeconfig"), None)
    if ready and secret is not None:
        serve_on(rsp, name, kind, secret)
    return rsp


def serve_on(rsp: fnv1.RunFunctionResponse, name: str, kind: str, secret: dict[str, Any]) -> None:
    """The ProviderConfig on our Secret, the serving stack through it, and the Usage."""
    ref = {"namespace": NAMESPACE, "name": secret["name"], "key": secret["key"]}
    desire(
        rsp,
        KEY_PROVIDER_CONFIG,
        {
            "apiVersion": KUBERNETES_API_VERSION,
            "kind": "ClusterProviderConfig",
            "metadata": {"name": name},
            "spec": {"credentials": {"source": "Secret", "secretRef": ref}},
        },
    )
    stack = f"{name}-serving-stack"
    desire(
        rsp,
        KEY_SERVING_STACK,
        {
            "apiVersion": KUBERNETES_API_VERSION,
            "kind": "Object",
            "metadata": {"name": stack, "namespace": NAMESPACE},
            "spec": {
                "forProvider": {
                    "manifest": {
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "metadata": {"name": "serving-stack", "namespace": "default"},
                        "data": {"servingCluster": name},
                    }
                },
                "providerConfigRef": {"kind": "ClusterProviderConfig", "name": name},
            },
        },
    )
    desire(
        rsp,
        KEY_USAGE,
        {
            "apiVersion": "protection.crossplane.io/v1beta1",
            "kind": "Usage",
            "metadata": {"name": f"{name}-serving-stack-uses-cluster", "namespace": NAMESPACE},
            "spec": {
                "of": {"apiVersion": XR_API_VERSION, "kind": kind, "resourceRef": {"name": name}},
                "by": {
                    "apiVersion": KUBERNETES_API_VERSION,
                    "kind": "Object",
                    "resourceRef": {"name": stack},
                },
                "replayDeletion": True,
            },
        },
    )


def desire(rsp: fnv1.RunFunctionResponse, key: str, body: dict[str, Any]) -> None:
    resource.update(rsp.desired.resources[key], body)


class Consumer(grpcv1.FunctionRunnerServiceServicer):
    async def RunFunction(  # noqa: N802 - the gRPC method's name
        self, req: fnv1.RunFunctionRequest, _: grpc.aio.ServicerContext[Any, Any] | None
    ) -> fnv1.RunFunctionResponse:
        return compose(req)
