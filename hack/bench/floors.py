"""The no-op floor: an SDK function that composes nothing, run as `python floors.py ADDRESS`.

It uses the same SDK `runtime.serve` and gRPC options as `function.main`, so the function's
cost above it is its own. It answers `response.to(req)`: gRPC plus decoding the request.

Only the SDK is imported: a floor must not pay for loading the function.
"""

import sys

from crossplane.function import logging, response, runtime
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1

MEGABYTE = 1024 * 1024
# The function's own limits (function/main.py).
SERVER_OPTIONS = [
    ("grpc.max_receive_message_length", 4 * MEGABYTE),
    ("grpc.max_send_message_length", 4 * MEGABYTE),
    ("grpc.so_reuseport", 0),
]


class NoOp(grpcv1.FunctionRunnerServiceServicer):
    async def RunFunction(  # noqa: N802 - the gRPC method name
        self, req: fnv1.RunFunctionRequest, _: object
    ) -> fnv1.RunFunctionResponse:
        rsp: fnv1.RunFunctionResponse = response.to(req)
        return rsp


def main(argv: list[str]) -> None:
    logging.configure(level=logging.Level.INFO)
    # The SDK reads creds only when not insecure; its annotation does not say None is allowed.
    runtime.serve(NoOp(), argv[0], creds=None, insecure=True, options=SERVER_OPTIONS)  # type: ignore[arg-type]


if __name__ == "__main__":
    main(sys.argv[1:])
