"""The gRPC servicer: decode the request, call the composition core, encode its Outcome.

No composition rule lives here. Whatever goes wrong inside a core becomes one FATAL result,
never a gRPC error: Crossplane then reports it on the XR and applies nothing.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

import grpc
from crossplane.function import logging, resource, response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1

from function.civo import api as civo_api
from function.civo.compose import compose as compose_civo
from function.coreweave import api as coreweave_api
from function.coreweave.compose import compose as compose_coreweave
from function.input import DEFAULT_INPUT, StepInput, cached_input
from function.shared.cache import LRU, content_key
from function.shared.observed import Observed, Required, View, struct_to_python
from function.shared.outcome import Composite, Outcome, Severity
from function.shared.validation import SpecProblems

Core = Callable[[Composite, Observed, Required, StepInput], Outcome]

CORES: dict[tuple[str, str], Core] = {
    (coreweave_api.API_VERSION, coreweave_api.KIND): lambda xr, obs, req, cfg: compose_coreweave(
        xr, obs, req, cfg.coreweave
    ),
    (civo_api.API_VERSION, civo_api.KIND): lambda xr, obs, req, cfg: compose_civo(
        xr, obs, req, cfg.civo
    ),
}

_REPORT = {
    Severity.NORMAL: response.normal,
    Severity.WARNING: response.warning,
    Severity.FATAL: response.fatal,
}


class FunctionRunner(grpcv1.FunctionRunnerServiceServicer):
    def __init__(self) -> None:
        self.log = logging.get_logger()

    async def RunFunction(  # noqa: N802 - the gRPC method name
        self, req: fnv1.RunFunctionRequest, _: grpc.aio.ServicerContext | None
    ) -> fnv1.RunFunctionResponse:
        rsp = response.to(req)
        try:
            outcome = run(req)
        except Exception as error:  # a reconcile must always get an answer
            # Neither the exception's text nor its frames' locals (which the SDK's JSON logger
            # would print) are safe: either can hold the org token. Type and location only.
            self.log.error(
                "composition failed",
                error_type=type(error).__name__,
                frames=[
                    f"{frame.filename}:{frame.lineno} in {frame.name}"
                    for frame in traceback.extract_tb(error.__traceback__)
                ],
            )
            outcome = Outcome.failed(
                f"internal error ({type(error).__name__}) while composing; "
                "the function's logs have the details"
            )
        write(outcome, rsp)
        self.log.debug(
            "composed",
            tag=req.meta.tag,
            resources=len(outcome.resources),
            results=len(outcome.results),
        )
        return rsp


def run(req: fnv1.RunFunctionRequest) -> Outcome:
    observed_xr = View(
        req.observed.composite.resource if req.observed.HasField("composite") else None
    )
    api_version = observed_xr.string("apiVersion") or ""
    kind = observed_xr.string("kind") or ""
    core = CORES.get((api_version, kind))
    if core is None:
        supported = ", ".join(f"{k} ({v})" for v, k in CORES)
        return Outcome.failed(
            f'unsupported composite resource "{kind or "<none>"}" ({api_version or "<none>"}); '
            f"this function composes {supported}"
        )
    name = observed_xr.string("metadata", "name")
    namespace = observed_xr.string("metadata", "namespace")
    if not name or not namespace:
        missing = [
            f"metadata.{f}: required"
            for f, v in (("name", name), ("namespace", namespace))
            if not v
        ]
        return Outcome.failed(SpecProblems(kind, missing).message)
    try:
        config = (
            cached_input(
                req.input.SerializeToString(deterministic=True), lambda: struct_to_python(req.input)
            )
            if req.HasField("input")
            else DEFAULT_INPUT
        )
    except SpecProblems as problems:
        return Outcome.failed(problems.message)
    spec_value = req.observed.composite.resource.fields.get("spec")
    spec_key = None
    if spec_value is not None and spec_value.HasField("struct_value"):
        spec_struct = spec_value.struct_value
        # Exact and cheap (C code): equal bytes are an equal spec, so a validated spec is reused.
        spec_key = spec_struct.SerializeToString(deterministic=True)

        def load_spec() -> Any:
            # spec.crossplane (composition and resource refs) is Crossplane's; no core reads it.
            return struct_to_python(spec_struct, exclude="crossplane")

    else:

        def load_spec() -> Any:
            return observed_xr.get("spec")

    composite = Composite(
        api_version,
        kind,
        name,
        namespace,
        load_spec=load_spec,
        spec_key=spec_key,
        status=observed_xr.child("status"),
    )
    observed = Observed({k: r.resource for k, r in req.observed.resources.items()})
    required: dict[str, list[View] | None] = {
        k: [View(item.resource) for item in r.items] for k, r in req.required_resources.items()
    }
    return core(composite, observed, required, config)


def write(outcome: Outcome, rsp: fnv1.RunFunctionResponse) -> None:
    fatal = outcome.fatal
    if fatal is not None:
        response.fatal(rsp, fatal.message)
        return
    for key, desired in outcome.resources.items():
        target = rsp.desired.resources[key]
        _encode(target, desired.resource)
        target.ready = fnv1.READY_TRUE if desired.ready else fnv1.READY_FALSE
    for result in outcome.results:
        _REPORT[result.severity](rsp, result.message)
    response.set_conditions(rsp, *outcome.conditions)
    for requirement in outcome.requirements:
        response.require_resources(
            rsp,
            requirement.name,
            requirement.api_version,
            requirement.kind,
            match_name=requirement.match_name,
            namespace=requirement.namespace,
        )
    if outcome.status:
        # Equivalent to resource.update_status: "status" is replaced as a whole.
        _encode(rsp.desired.composite, {"status": outcome.status})


# Encoded desired objects: a converged XR composes the same objects on every reconcile, and
# converting a dict to a Struct in Python costs more than composing it. About 20 objects per XR.
_ENCODED: LRU[bytes] = LRU(4096)


def _encode(target: fnv1.Resource, body: dict[str, Any]) -> None:
    key = content_key(body)
    encoded = _ENCODED.get(key) if key is not None else None
    if encoded is None:
        resource.update(target, body)
        if key is not None:
            _ENCODED.put(key, target.resource.SerializeToString())
    else:
        target.resource.MergeFromString(encoded)
