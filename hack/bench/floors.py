"""The floor servers: SDK functions that compose nothing, run as `python floors.py MODE ADDRESS`.

They use the same SDK `runtime.serve` and gRPC options as `function.main`, so the function's
cost above them is its own:

- `noop` answers `response.to(req)`: gRPC plus decoding the request;
- `replay` answers with a response recorded from the function for the same XR kind (arguments
  `KIND=PATH`): gRPC, decoding, and sending a response of the real size.

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


class Replay(grpcv1.FunctionRunnerServiceServicer):
    def __init__(self, recorded: dict[str, bytes]) -> None:
        self.recorded = recorded

    async def RunFunction(  # noqa: N802 - the gRPC method name
        self, req: fnv1.RunFunctionRequest, _: object
    ) -> fnv1.RunFunctionResponse:
        kind = req.observed.composite.resource.fields["kind"].string_value
        rsp: fnv1.RunFunctionResponse = fnv1.RunFunctionResponse.FromString(self.recorded[kind])
        rsp.meta.tag = req.meta.tag
        return rsp


def main(argv: list[str]) -> None:
    mode, address = argv[0], argv[1]
    recorded: dict[str, bytes] = {}
    for arg in argv[2:]:
        kind, _, path = arg.partition("=")
        with open(path, "rb") as f:
            recorded[kind] = f.read()
    logging.configure(level=logging.Level.INFO)
    servicer = NoOp() if mode == "noop" else Replay(recorded)
    runtime.serve(servicer, address, creds=None, insecure=True, options=SERVER_OPTIONS)


if __name__ == "__main__":
    main(sys.argv[1:])
