"""The gRPC server: the SDK's runtime.serve, except that v1 answers leave as the bytes composed.

A converged reconcile is answered from recorded bytes (function/memo/memo.py). Handing gRPC a
RunFunctionResponse would mean parsing those bytes into a message only for gRPC to serialize it
again, which costs more than the rest of such a reply. So the v1 RunFunction method is
registered with a serializer that sends bytes as they are. Everything else is the SDK's: the
v1beta1 service (through its BetaFunctionRunner), reflection, the SIGTERM grace period and the
listening ports; beside them, the standard health service (function/health.py).
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Sequence
from typing import Any

import grpc
from crossplane.function import runtime
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1beta1 import run_function_pb2_grpc as grpcv1beta1
from grpc_reflection.v1alpha import reflection

from function.health import SERVICE_NAME as HEALTH_SERVICE
from function.health import Health, probe_server
from function.runner import FunctionRunner

SERVICE = fnv1.DESCRIPTOR.services_by_name["FunctionRunnerService"].full_name


class ProbePortError(Exception):
    """The plaintext health port cannot be opened (the message names it)."""


def _as_sent(reply: bytes | fnv1.RunFunctionResponse) -> bytes:
    return reply if isinstance(reply, bytes) else reply.SerializeToString()


def add_to_server(runner: FunctionRunner, health: Health, server: grpc.aio.Server) -> None:
    """Register runner's v1 service (bytes out), the SDK's v1beta1 adapter for it, and the
    health service."""
    handler = grpc.unary_unary_rpc_method_handler(
        runner.run_function_wire,
        request_deserializer=fnv1.RunFunctionRequest.FromString,
        response_serializer=_as_sent,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(SERVICE, {"RunFunction": handler}),)
    )
    # The generated registration function carries no annotations.
    grpcv1beta1.add_FunctionRunnerServiceServicer_to_server(  # type: ignore[no-untyped-call]
        runtime.BetaFunctionRunner(wrapped=runner), server
    )
    health.add_to_server(server)
    reflection.enable_server_reflection((*runtime.SERVICE_NAMES, HEALTH_SERVICE), server)


def serve(
    runner: FunctionRunner,
    address: str,
    *,
    creds: grpc.ServerCredentials | None,
    options: Sequence[tuple[str, Any]],
    health_address: str | None = None,
) -> None:
    """Serve until SIGTERM: mTLS with creds, plaintext without; the health service also in
    plaintext on health_address when given (function/health.py)."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    server = grpc.aio.server(options=options)
    health = Health()
    add_to_server(runner, health, server)
    if creds is not None:
        server.add_secure_port(address, creds)
    else:
        server.add_insecure_port(address)
    servers = [server]
    if health_address:
        try:
            servers.append(probe_server(health, health_address, list(options)))
        except RuntimeError as error:
            raise ProbePortError(
                f"cannot serve health probes on {health_address}: {error}"
            ) from None

    async def stop() -> None:
        # Probes see NOT_SERVING first, so the pod leaves the Service's addresses while the
        # calls in flight finish within the grace period.
        await health.shutting_down()
        await asyncio.gather(
            *(s.stop(grace=runtime.SHUTDOWN_GRACE_PERIOD_SECONDS) for s in servers)
        )

    loop.add_signal_handler(signal.SIGTERM, lambda: asyncio.ensure_future(stop()))

    async def run() -> None:
        await health.starting()
        for each in servers:
            await each.start()
        await health.serving()
        await server.wait_for_termination()

    try:
        loop.run_until_complete(run())
    finally:
        loop.run_until_complete(stop())
        loop.close()
