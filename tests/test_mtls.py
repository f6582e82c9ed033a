"""The console script's transport security, end to end with real certificates.

A throwaway CA signs the function's server certificate (SANs 127.0.0.1 and localhost) and a
client certificate, as Crossplane's would; a second CA, which the function does not trust,
signs another client certificate. With `--tls-certs-dir` (or TLS_SERVER_CERTS_DIR) the function
serves mTLS only: a client with the CA-signed certificate is answered, a client without a
certificate, with the untrusted one, or in plaintext is refused. Plaintext is served only with
an explicit `--insecure`, and then only plaintext, even when a certificate folder is given.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from grpc_health.v1 import health_pb2

from harness.e2e.certs import issue, new_ca
from harness.e2e.operability import health_status
from harness.fixtures import coreweave_xr, free_port, request
from tests.test_metrics import call_seconds_count, calls_total, counted, memo_answers, scrape
from tests.test_server import FLAG_ENV, serving


@pytest.fixture(autouse=True)
def no_flag_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in FLAG_ENV:
        monkeypatch.delenv(name, raising=False)


@dataclass(frozen=True)
class PKI:
    certs_dir: Path
    ca: bytes
    client: tuple[bytes, bytes]
    untrusted_client: tuple[bytes, bytes]


def write_pki(certs_dir: Path, label: str, file_mode: int | None = None) -> PKI:
    """A CA, the function's server certificate (SANs 127.0.0.1 and localhost) in certs_dir as
    the function reads it (tls.crt, tls.key, ca.crt), a client certificate from the same CA and
    one from a CA the function does not trust. The e2e harness's certificates: the same CA and
    leaf shapes Crossplane's runtime uses."""
    ca = new_ca(f"crossplane-root-ca ({label})")
    other_ca = new_ca(f"someone-else-ca ({label})")
    server = issue(ca, "function-inference-clusters", server=True, dns_names=("localhost",))
    client = issue(ca, "crossplane", client=True)
    untrusted = issue(other_ca, "crossplane", client=True)
    for name, data in (
        ("tls.crt", server.cert_pem),
        ("tls.key", server.key_pem),
        ("ca.crt", ca.cert_pem),
    ):
        (certs_dir / name).write_bytes(data)
        if file_mode is not None:
            (certs_dir / name).chmod(file_mode)
    return PKI(
        certs_dir,
        ca.cert_pem,
        (client.cert_pem, client.key_pem),
        (untrusted.cert_pem, untrusted.key_pem),
    )


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> PKI:
    return write_pki(tmp_path_factory.mktemp("tls"), "test")


@contextlib.contextmanager
def serving_throughout(*flags: str, side_ports_off: bool = True) -> Iterator[str]:
    """tests/test_server.py's function, which must still be serving when the test is done: a
    refusal from a function that died would pass for a refused handshake."""
    with serving(*flags, side_ports_off=side_ports_off) as (address, process):
        yield address
        assert process.poll() is None, "the function died while serving"


def call(channel: grpc.Channel) -> fnv1.RunFunctionResponse:
    stub = grpcv1.FunctionRunnerServiceStub(channel)
    rsp: fnv1.RunFunctionResponse = stub.RunFunction(request(coreweave_xr()), timeout=10)
    return rsp


def check_served(channel: grpc.Channel) -> None:
    """A normal answer over channel (closed after): the new XR's first resources, no FATAL."""
    with channel:
        rsp = call(channel)
    assert set(rsp.desired.resources) == {"vpc", "cks-cluster", "usage-vpc-by-cluster"}
    assert all(r.severity != fnv1.SEVERITY_FATAL for r in rsp.results)


def check_refused(channel: grpc.Channel) -> None:
    """RunFunction over channel (closed after) refused."""
    with channel, pytest.raises(grpc.RpcError) as refused:
        call(channel)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE, refused.value


def mtls(
    address: str, pki: PKI, client: tuple[bytes, bytes] | None, **options: str
) -> grpc.Channel:
    credentials = grpc.ssl_channel_credentials(
        root_certificates=pki.ca,
        private_key=client[1] if client else None,
        certificate_chain=client[0] if client else None,
    )
    return grpc.secure_channel(address, credentials, options=list(options.items()))


def test_mtls_serves_only_clients_with_a_certificate_from_its_ca(pki: PKI) -> None:
    with serving_throughout(f"--tls-certs-dir={pki.certs_dir}") as address:
        # (a) the CA-signed client, verifying the server as 127.0.0.1 and as localhost
        check_served(mtls(address, pki, pki.client))
        override = {"grpc.ssl_target_name_override": "localhost"}
        check_served(mtls(address, pki, pki.client, **override))
        # (b) no client certificate
        check_refused(mtls(address, pki, None))
        # (c) a certificate from a CA the function does not trust
        check_refused(mtls(address, pki, pki.untrusted_client))
        # (d) plaintext
        check_refused(grpc.insecure_channel(address))
        # Refused handshakes leave the server serving.
        check_served(mtls(address, pki, pki.client))


def test_tls_certs_dir_from_the_environment(pki: PKI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TLS_SERVER_CERTS_DIR", str(pki.certs_dir))
    with serving_throughout() as address:
        check_served(mtls(address, pki, pki.client))
        check_refused(grpc.insecure_channel(address))
        check_refused(mtls(address, pki, None))


def test_insecure_serves_plaintext_only_even_with_certificates(pki: PKI) -> None:
    with serving_throughout("--insecure", f"--tls-certs-dir={pki.certs_dir}") as address:
        check_served(grpc.insecure_channel(address))
        check_refused(mtls(address, pki, pki.client))


def test_insecure_from_the_environment_is_still_explicit(
    pki: PKI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """INSECURE=true is the SDK's env form of --insecure: plaintext only, certificates unused."""
    monkeypatch.setenv("INSECURE", "true")
    monkeypatch.setenv("TLS_SERVER_CERTS_DIR", str(pki.certs_dir))
    with serving_throughout() as address:
        check_served(grpc.insecure_channel(address))
        check_refused(mtls(address, pki, pki.client))


def test_metrics_and_the_probe_port_beside_an_mtls_grpc_port(
    pki: PKI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Prometheus scrapes plain HTTP and the kubelet probes plaintext gRPC while RunFunction
    and the health service on --address still take only clients with a certificate."""
    metrics_port, probe = free_port(), f"127.0.0.1:{free_port()}"
    monkeypatch.setenv("METRICS_ADDRESS", f"127.0.0.1:{metrics_port}")
    flags = (f"--tls-certs-dir={pki.certs_dir}", f"--health-address={probe}")
    with serving_throughout(*flags, side_ports_off=False) as address:
        check_served(mtls(address, pki, pki.client))
        with mtls(address, pki, pki.client) as channel:
            assert health_status(channel) == health_pb2.HealthCheckResponse.SERVING
        with mtls(address, pki, None) as channel, pytest.raises(grpc.RpcError) as refused:
            health_status(channel)
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        with grpc.insecure_channel(probe) as channel:
            assert health_status(channel) == health_pb2.HealthCheckResponse.SERVING
        text = scrape(f"http://127.0.0.1:{metrics_port}/metrics")
    assert counted(text) == {
        calls_total("CoreWeaveCluster", "normal"): 1,
        call_seconds_count("CoreWeaveCluster"): 1,
        memo_answers("CoreWeaveCluster", "miss"): 1,
    }
