"""The standard gRPC health service (grpc.health.v1.Health): SERVING once the function answers,
NOT_SERVING from the moment it starts shutting down.

It is served on the function's own gRPC port, with that port's transport security, and, for
the kubelet, on a plaintext port of its own (--health-address) that serves nothing else: the
kubelet's gRPC probes cannot speak TLS (Kubernetes v1.35 pkg/probe/grpc dials with insecure
credentials, and GRPCAction has no TLS field), while Crossplane always serves a function mTLS.
Opening RunFunction itself in plaintext would let anything in the cluster call it.
"""

from __future__ import annotations

import grpc
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1beta1 import run_function_pb2 as fnv1beta1
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from function import addresses

# "" is the server as a whole (what a probe without a service name asks), then each service.
SERVICES = (
    "",
    fnv1.DESCRIPTOR.services_by_name["FunctionRunnerService"].full_name,
    fnv1beta1.DESCRIPTOR.services_by_name["FunctionRunnerService"].full_name,
)
SERVICE_NAME = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name
# The port after the metrics port: function-sdk-go has no plaintext health port to follow.
DEFAULT_ADDRESS = ":8081"


class Health:
    """The health statuses of the function's services, shared by every port serving them."""

    def __init__(self) -> None:
        self.servicer = health.aio.HealthServicer()

    def add_to_server(self, server: grpc.aio.Server) -> None:
        health_pb2_grpc.add_HealthServicer_to_server(self.servicer, server)

    async def starting(self) -> None:
        """NOT_SERVING until serving() (the servicer starts out SERVING)."""
        for service in SERVICES:
            await self.servicer.set(service, health_pb2.HealthCheckResponse.NOT_SERVING)

    async def serving(self) -> None:
        for service in SERVICES:
            await self.servicer.set(service, health_pb2.HealthCheckResponse.SERVING)

    async def shutting_down(self) -> None:
        """NOT_SERVING for good: later set() calls are ignored."""
        await self.servicer.enter_graceful_shutdown()


def probe_server(
    statuses: Health, address: str, options: list[tuple[str, object]]
) -> grpc.aio.Server:
    """A plaintext server on address with only the health service (for the kubelet's probes)."""
    server = grpc.aio.server(options=options)
    statuses.add_to_server(server)
    server.add_insecure_port(addresses.for_grpc(address))
    return server
