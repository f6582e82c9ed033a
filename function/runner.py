"""The gRPC servicer: decode the request, call the composition core, encode its Outcome.

No composition rule lives here. Whatever goes wrong inside a core becomes one FATAL result,
never a gRPC error: Crossplane then reports it on the XR and applies nothing.
"""

from __future__ import annotations

import dataclasses
import time
import traceback
from collections.abc import Callable
from typing import Any, NamedTuple

import grpc
from crossplane.function import logging, resource, response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from google.protobuf import struct_pb2 as structpb

from function.civo import api as civo_api
from function.civo.compose import compose as compose_civo
from function.coreweave import api as coreweave_api
from function.coreweave.compose import compose as compose_coreweave
from function.input import DEFAULT_INPUT, StepInput, cached_input
from function.memo.memo import (
    MEMO_BYTES,
    Entry,
    Memo,
    Pass,
    Recorder,
    RecordingObserved,
    RecordingRequired,
    RecordingView,
    spec_digest,
)
from function.memo.replay import Sources, compile_reads
from function.metrics import Metrics
from function.shared.cache import LRU, content_key
from function.shared.observed import Observed, Required, View, struct_to_python
from function.shared.outcome import Composite, Outcome, Result, Severity
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

# A request whose XR no core composes is labelled so in the metrics, whatever it names.
UNSUPPORTED = "unsupported"
_KIND_LABELS = {key: key[1] for key in CORES}

_REPORT = {
    Severity.NORMAL: response.normal,
    Severity.WARNING: response.warning,
    Severity.FATAL: response.fatal,
}


# The worst severity among an answer's results, as the metrics label it.
_WORST = ("none", "normal", "warning", "fatal")
_RANK = {Severity.NORMAL: 1, Severity.WARNING: 2, Severity.FATAL: 3}


class Answer(NamedTuple):
    wire: bytes  # the response, serialized
    resources: int  # desired resources it carries
    results: int
    worst: str  # the worst severity among its results: one of _WORST
    kind: str  # the XR's kind as the metrics label it: a core's kind or UNSUPPORTED
    memo: str | None  # "hit": the XR's previous answer; "miss": composed; None: no core took it


class FunctionRunner(grpcv1.FunctionRunnerServiceServicer):
    def __init__(
        self, log_calls: bool = False, metrics: Metrics | None = None, memo: Memo | None = None
    ) -> None:
        self.log = logging.get_logger()
        # The last answer per XR and pass: a converged call whose reads all replay is answered
        # from it. One per servicer, so one per process (--memo-mib sizes it).
        self.memo = memo if memo is not None else Memo(MEMO_BYTES)
        # One debug line per call (--debug): which XR, which required resources came with the
        # request, whether the memo answered. Built only when asked for: even filtered out at
        # INFO, a structlog debug call cost about 5 µs per call (bench, in-process).
        self.log_calls = log_calls
        # None: not counted, and not timed either.
        self.metrics = metrics

    async def RunFunction(  # noqa: N802 - the gRPC method name
        self,
        req: fnv1.RunFunctionRequest,
        _: grpc.aio.ServicerContext[fnv1.RunFunctionRequest, fnv1.RunFunctionResponse] | None,
    ) -> fnv1.RunFunctionResponse:
        """The answer as a message (the v1beta1 adapter and in-process callers)."""
        rsp: fnv1.RunFunctionResponse = fnv1.RunFunctionResponse.FromString(self.reply(req))
        return rsp

    async def run_function_wire(
        self,
        req: fnv1.RunFunctionRequest,
        _: grpc.aio.ServicerContext[fnv1.RunFunctionRequest, bytes] | None,
    ) -> bytes:
        """The answer serialized, as the v1 service sends it (function/server.py)."""
        return self.reply(req)

    def reply(self, req: fnv1.RunFunctionRequest) -> bytes:
        """req's answer, serialized."""
        metrics = self.metrics
        started = time.perf_counter() if metrics is not None else 0.0
        try:
            done = answer(req, self.memo)
        except Exception as error:  # a reconcile must always get an answer
            kind = kind_label(req)
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
            # Nothing half-written may go out with the FATAL.
            rsp = response.to(req)
            write(outcome, rsp)
            done = Answer(rsp.SerializeToString(), 0, 1, "fatal", kind, memo=None)
            if metrics is not None:
                metrics.internal_error(kind, error)
        if metrics is not None:
            metrics.called(done.kind, done.worst, time.perf_counter() - started, done.memo)
        if self.log_calls:
            self.log.debug(
                "composed",
                xr=describe_xr(req),
                required=carried(req) or "-",
                memo=done.memo or "-",
                resources=done.resources,
                results=done.results,
                tag=req.meta.tag,
            )
        return done.wire


def kind_label(req: fnv1.RunFunctionRequest) -> str:
    """The request's XR kind as the metrics label it: a core's kind, or UNSUPPORTED."""
    xr = View(req.observed.composite.resource if req.observed.HasField("composite") else None)
    return _KIND_LABELS.get((xr.string("apiVersion") or "", xr.string("kind") or ""), UNSUPPORTED)


def worst(results: list[Result]) -> str:
    """The worst severity among results, as the metrics label it ("none" without results)."""
    return _WORST[max((_RANK[r.severity] for r in results), default=0)]


def carried(req: fnv1.RunFunctionRequest) -> str:
    """The names of the required resources req carries, sorted and comma-separated: which pass
    of Crossplane's requirements loop it is ("" on the first)."""
    return ",".join(sorted(req.required_resources))


def describe_xr(req: fnv1.RunFunctionRequest) -> str:
    """kind/namespace/name of the request's XR, for the log (no spaces: one token)."""
    xr = View(req.observed.composite.resource)
    return "/".join(
        xr.string(*path) or "-"
        for path in (("kind",), ("metadata", "namespace"), ("metadata", "name"))
    )


def answer(req: fnv1.RunFunctionRequest, memo: Memo) -> Answer:
    """req's answer, serialized, from `memo` where it holds the XR's last answer.

    The memo answers when the XR's spec, the step input and every value the core read last time
    are unchanged: the recorded fields are appended to the serialized `response.to(req)`, which
    protobuf parses exactly as merging them into it. Only answers that compose none of the keys
    an earlier pipeline step composed are memoised: merging recorded bytes over those would
    replace their fields rather than merge into them, as write() does.
    """
    call = prepare(req)
    if isinstance(call, Outcome):
        rsp = response.to(req)
        write(call, rsp)
        return Answer(
            rsp.SerializeToString(),
            len(call.resources),
            len(call.results),
            worst(call.results),
            kind_label(req),
            memo=None,
        )
    sources = Sources(req.observed.resources, call.composite.status, call.required)
    spec_key = call.composite.spec_key
    if spec_key is not None:
        entry = memo.lookup(call.memo_pass, call.core, spec_key, call.config, sources)
        if entry is not None and entry.keys.isdisjoint(req.desired.resources):
            wire = response.to(req).SerializeToString() + entry.unpacked()
            return Answer(wire, *entry.counts, call.composite.kind, memo="hit")
    recorder = Recorder()
    composite = call.composite
    composite.status = RecordingView(
        composite.status._struct,
        recorder,
        ("status",),
    )
    outcome = call.core(
        composite,
        RecordingObserved(call.observed(), recorder),
        RecordingRequired(call.required, recorder),
        call.config,
    )
    keys = frozenset(outcome.resources)
    counts = (len(outcome.resources), len(outcome.results), worst(outcome.results))
    if spec_key is None or outcome.fatal is not None or not keys.isdisjoint(req.desired.resources):
        rsp = response.to(req)
        write(outcome, rsp)
        return Answer(rsp.SerializeToString(), *counts, call.composite.kind, memo="miss")
    written = fnv1.RunFunctionResponse()
    write(outcome, written)
    blob = written.SerializeToString()
    plan, wants = compile_reads(recorder.reads)
    packed, dictionary = memo.pack(call.core, blob)
    memo.remember(
        call.memo_pass,
        Entry(
            call.core,
            spec_digest(spec_key),
            call.config,
            plan,
            wants,
            packed,
            dictionary,
            keys,
            counts,
        ),
    )
    return Answer(
        response.to(req).SerializeToString() + blob, *counts, call.composite.kind, memo="miss"
    )


@dataclasses.dataclass(slots=True)
class Call:
    """A request decoded for a core: which core, and what it reads."""

    core: Core
    memo_pass: Pass  # the XR, and which required resources this pass of the loop carries
    composite: Composite
    resources: Any  # req.observed.resources: a protobuf map of Resource messages
    required: dict[str, list[View] | None]
    config: StepInput

    def observed(self) -> dict[str, structpb.Struct]:
        """Observed resources by key, for a core (built only when a core runs)."""
        return {k: r.resource for k, r in self.resources.items()}


def run(req: fnv1.RunFunctionRequest) -> Outcome:
    """The core's Outcome for req, composed afresh (no memo)."""
    call = prepare(req)
    if isinstance(call, Outcome):
        return call
    return call.core(call.composite, Observed(call.observed()), call.required, call.config)


def prepare(req: fnv1.RunFunctionRequest) -> Call | Outcome:
    """The core and its inputs for req, or the FATAL Outcome of a request no core can take."""
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
    required: dict[str, list[View] | None] = {
        k: [View(item.resource) for item in r.items] for k, r in req.required_resources.items()
    }
    return Call(
        core,
        (api_version, kind, namespace, name, carried(req)),
        composite,
        req.observed.resources,
        required,
        config,
    )


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
    if outcome.ready is not None:
        rsp.desired.composite.ready = fnv1.READY_TRUE if outcome.ready else fnv1.READY_FALSE
    if outcome.status:
        # Equivalent to resource.update_status: "status" is replaced as a whole.
        _encode(rsp.desired.composite, {"status": outcome.status})


# Encoded desired objects by content: converting a dict to a Struct in Python costs more than
# composing it, and an XR that changed recomposes mostly the objects it composed before.
# Bounded by the bytes held: keys and values are both about an object's serialized size.
_ENCODED: LRU[bytes] = LRU(2 * 1024 * 1024, cost=lambda key, value: len(key) + len(value))


def _encode(target: fnv1.Resource, body: dict[str, Any]) -> None:
    key = content_key(body)
    encoded = _ENCODED.get(key) if key is not None else None
    if encoded is None:
        resource.update(target, body)
        if key is not None:
            _ENCODED.put(key, target.resource.SerializeToString())
    else:
        target.resource.MergeFromString(encoded)
