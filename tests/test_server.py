"""The `function` console script as users start it: flags, startup failures, and a real gRPC
round trip whose logs (at --debug) and answers carry the org token only inside the kubeconfig."""

from __future__ import annotations

import base64
import contextlib
import importlib
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from google.protobuf import json_format

from harness.e2e.calls import read_calls
from harness.fixtures import (
    ORG_TOKEN,
    coreweave_xr,
    free_port,
    request,
    token_forms,
    until_listening,
)
from tests.test_coreweave import CREDENTIALS, cluster_up

FUNCTION = str(Path(sys.executable).parent / "function")
# The SDK's flags also read these; a developer's environment must not change what is tested.
FLAG_ENV = (
    "ADDRESS",
    "INSECURE",
    "TLS_SERVER_CERTS_DIR",
    "DEBUG",
    "MAX_RECV_MESSAGE_SIZE",
    "MAX_GRPC_MESSAGE_SIZE",
    "MAX_SEND_MESSAGE_SIZE",
    "METRICS_ADDRESS",
    "HEALTH_ADDRESS",
)


# Metrics and the plaintext health port are on by default (:8080, :8081); tests that do not look
# at them turn them off, so that nothing else on the machine decides whether the function starts.
NO_SIDE_PORTS = ("--metrics-address=", "--health-address=")


def ports_off(flags: tuple[str, ...]) -> list[str]:
    return [f for f in NO_SIDE_PORTS if not any(g.startswith(f) for g in flags)]


@contextlib.contextmanager
def serving(
    *flags: str, side_ports_off: bool = True
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The function on a free loopback port; metrics and health ports off unless flags set them
    (or side_ports_off is False)."""
    port = free_port()
    side_ports = ports_off(flags) if side_ports_off else []
    process = subprocess.Popen(
        [FUNCTION, f"--address=127.0.0.1:{port}", *side_ports, *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        output = process.stdout
        until_listening(
            process, port, seconds=15, written=lambda: output.read().decode() if output else ""
        )
        yield f"127.0.0.1:{port}", process
    finally:
        process.terminate()
        process.wait(timeout=10)


def answers(address: str, *requests: fnv1.RunFunctionRequest) -> list[fnv1.RunFunctionResponse]:
    """The served function's answers to requests, in turn, over one plaintext channel."""
    with grpc.insecure_channel(address) as channel:
        stub = grpcv1.FunctionRunnerServiceStub(channel)
        return [stub.RunFunction(r, timeout=10) for r in requests]


def exited(*flags: str) -> subprocess.CompletedProcess[str]:
    """The function started with flags and run to its exit (a refusal or a startup failure);
    metrics and health ports off unless flags set them."""
    environment = {k: v for k, v in os.environ.items() if k not in FLAG_ENV}
    command = [FUNCTION, *ports_off(flags), *flags]
    return subprocess.run(
        command, capture_output=True, text=True, check=False, timeout=30, env=environment
    )


def test_help_lists_the_sdk_standard_options() -> None:
    done = subprocess.run([FUNCTION, "--help"], capture_output=True, text=True, check=True)
    for flag in ("--address", "0.0.0.0:9443", "--tls-certs-dir", "--insecure", "--debug"):
        assert flag in done.stdout
    for flag, default in (
        ("--metrics-address", ":8080"),
        ("--health-address", ":8081"),
        ("--memo-mib", "64; x>=1"),
    ):
        assert flag in done.stdout
        assert f"[default: {default}]" in done.stdout


# How click refuses a value: the usage, then the error.
USAGE_ERROR = "Usage: function [OPTIONS]\nTry 'function --help' for help.\n\nError: "
NO_PORT = '"localhost" is not HOST:PORT (e.g. ":8080" or "127.0.0.1:8080")'
BAD_MEMO = f"{USAGE_ERROR}Invalid value for '--memo-mib': "


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--insecure", "--metrics-address=localhost"), f"function: --metrics-address: {NO_PORT}"),
        (("--insecure", "--health-address=localhost"), f"function: --health-address: {NO_PORT}"),
        (
            (),
            "function: mTLS needs --tls-certs-dir (or TLS_SERVER_CERTS_DIR) holding tls.crt, "
            "tls.key and ca.crt; pass --insecure to serve plaintext",
        ),
        (("--insecure", "--memo-mib=0"), f"{BAD_MEMO}0 is not in the range x>=1."),
        (("--insecure", "--memo-mib=-1"), f"{BAD_MEMO}-1 is not in the range x>=1."),
        (("--insecure", "--memo-mib=lots"), f"{BAD_MEMO}'lots' is not a valid integer range."),
    ],
    ids=[
        "metrics-address-without-port",
        "health-address-without-port",
        "plaintext",
        "memo-0",
        "memo-minus-1",
        "memo-lots",
    ],
)
def test_refuses_to_start_with(flags: tuple[str, ...], message: str) -> None:
    done = exited(f"--address=127.0.0.1:{free_port()}", *flags)
    assert done.returncode == 2
    assert done.stderr.strip() == message


GRPC_BIND_FAILURE = (
    "Failed to bind to address {address}; set GRPC_VERBOSITY=debug environment variable to see "
    "detailed error message."
)


# What the function says when the address its flag names is taken, by flag.
TAKEN = {
    "address": f"function: cannot serve on {{address}}: {GRPC_BIND_FAILURE}",
    "metrics-address": (
        "function: cannot serve metrics on {address}: [Errno 98] Address already in use"
    ),
    "health-address": f"function: cannot serve health probes on {{address}}: {GRPC_BIND_FAILURE}",
}


@pytest.mark.parametrize(("flag", "message"), TAKEN.items(), ids=TAKEN.keys())
def test_exits_nonzero_when_an_address_is_taken(flag: str, message: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        address = f"127.0.0.1:{taken.getsockname()[1]}"
        flags = {"--address": f"127.0.0.1:{free_port()}", f"--{flag}": address}
        done = exited("--insecure", *(f"{name}={value}" for name, value in flags.items()))
    assert done.returncode == 1
    # The last line is the function's own; gRPC's C core may log its bind failure before it.
    assert done.stderr.strip().splitlines()[-1] == message.format(address=address)


def test_exits_nonzero_when_tls_files_are_missing(tmp_path: Path) -> None:
    done = exited(f"--tls-certs-dir={tmp_path}", f"--address=127.0.0.1:{free_port()}")
    assert done.returncode == 1
    assert f"No such file or directory: '{tmp_path}/tls.crt'" in done.stderr


def test_token_only_in_the_kubeconfig_secret_even_at_debug() -> None:
    requests = [
        request(coreweave_xr(), cluster_up(), CREDENTIALS),
        request(
            coreweave_xr(),
            cluster_up(),
            {"coreweave-providerconfig": CREDENTIALS["coreweave-providerconfig"]},
        ),
        request(
            coreweave_xr(nodePools=[{"name": "bad", "role": "GPU", "instanceType": "x"}]),
            cluster_up(),
            CREDENTIALS,
        ),
    ]
    with serving("--insecure", "--debug") as (address, process):
        responses = answers(address, *requests)
        process.terminate()
        logs = process.communicate(timeout=10)[0].decode()

    assert "composed" in logs, "debug logging was on"
    answered = [json_format.MessageToDict(r) for r in responses]
    secret = answered[0]["desired"]["resources"].pop("kubeconfig")
    assert ORG_TOKEN in base64.b64decode(secret["resource"]["data"]["kubeconfig"]).decode()
    for text in [*map(json.dumps, answered), logs]:
        for form in token_forms(ORG_TOKEN):
            assert form not in text
    assert responses[2].results[0].severity == fnv1.SEVERITY_FATAL


@pytest.mark.parametrize("memo", [(), ("--memo-mib=1",)], ids=["default-memo", "1-mib-memo"])
def test_debug_logs_one_line_per_call_naming_the_xr_its_pass_and_the_memo(
    tmp_path: Path, memo: tuple[str, ...]
) -> None:
    first_pass = request(coreweave_xr(), cluster_up())
    final_pass = request(coreweave_xr(), cluster_up(), CREDENTIALS)
    with serving("--insecure", "--debug", *memo) as (address, process):
        answers(address, first_pass, final_pass, first_pass, final_pass)
        process.terminate()
        log = tmp_path / "function.log"
        log.write_bytes(process.communicate(timeout=10)[0])

    xr = "CoreWeaveCluster/ml-team/inference-east"
    both = ("coreweave-credentials", "coreweave-providerconfig")
    assert [(c.xr, c.required, c.memoised) for c in read_calls(log)] == [
        (xr, (), False),
        (xr, both, False),
        (xr, (), True),
        (xr, both, True),
    ]


@pytest.mark.parametrize("version", ["v1", "v1beta1"])
def test_serves_both_protocol_versions(version: str) -> None:
    messages = importlib.import_module(f"crossplane.function.proto.{version}.run_function_pb2")
    service = importlib.import_module(f"crossplane.function.proto.{version}.run_function_pb2_grpc")
    req = messages.RunFunctionRequest.FromString(request(coreweave_xr()).SerializeToString())
    with serving("--insecure") as (address, _), grpc.insecure_channel(address) as channel:
        rsp = service.FunctionRunnerServiceStub(channel).RunFunction(req, timeout=10)
    assert set(rsp.desired.resources) == {"vpc", "cks-cluster", "usage-vpc-by-cluster"}
