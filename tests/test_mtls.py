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
import datetime
import ipaddress
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from tests.support import coreweave_xr, free_port, request

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
)


@dataclass(frozen=True)
class Identity:
    cert: bytes
    key: bytes
    signer: x509.Certificate | None = None
    signer_key: ec.EllipticCurvePrivateKey | None = None


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _validity(builder: x509.CertificateBuilder) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return builder.not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(
        now + datetime.timedelta(days=1)
    )


def make_ca(common_name: str) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    cert = (
        _validity(x509.CertificateBuilder())
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return cert, key


def issue(
    ca: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey,
    common_name: str,
    *,
    usage: x509.ObjectIdentifier,
    sans: list[x509.GeneralName] | None = None,
) -> tuple[bytes, bytes]:
    """A leaf certificate and key, PEM, signed by ca."""
    key = ec.generate_private_key(ec.SECP256R1())
    builder = (
        _validity(x509.CertificateBuilder())
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
    )
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    cert = builder.sign(ca_key, hashes.SHA256())
    return cert.public_bytes(serialization.Encoding.PEM), _pem_key(key)


@dataclass(frozen=True)
class PKI:
    certs_dir: Path
    ca: bytes
    client: tuple[bytes, bytes]
    untrusted_client: tuple[bytes, bytes]


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> PKI:
    ca, ca_key = make_ca("crossplane-root-ca (test)")
    other_ca, other_key = make_ca("someone-else-ca (test)")
    server = issue(
        ca,
        ca_key,
        "function-inference-clusters",
        usage=ExtendedKeyUsageOID.SERVER_AUTH,
        sans=[
            x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
            x509.DNSName("localhost"),
        ],
    )
    client = issue(ca, ca_key, "crossplane", usage=ExtendedKeyUsageOID.CLIENT_AUTH)
    untrusted = issue(other_ca, other_key, "crossplane", usage=ExtendedKeyUsageOID.CLIENT_AUTH)
    certs_dir = tmp_path_factory.mktemp("tls")
    ca_pem = ca.public_bytes(serialization.Encoding.PEM)
    (certs_dir / "tls.crt").write_bytes(server[0])
    (certs_dir / "tls.key").write_bytes(server[1])
    (certs_dir / "ca.crt").write_bytes(ca_pem)
    return PKI(certs_dir, ca_pem, client, untrusted)


@contextlib.contextmanager
def serving(*flags: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """The console script on a free loopback port; yields its address."""
    address = f"127.0.0.1:{free_port()}"
    environment = {k: v for k, v in os.environ.items() if k not in FLAG_ENV}
    environment.update(env or {})
    process = subprocess.Popen(
        [FUNCTION, f"--address={address}", *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=environment,
    )
    try:
        deadline = time.monotonic() + 15
        while True:
            if process.poll() is not None:
                output = process.stdout.read().decode() if process.stdout else ""
                pytest.fail(f"function exited during startup: {output}")
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", int(address.split(":")[1])), 0.2),
            ):
                break
            assert time.monotonic() < deadline, "function did not listen within 15s"
            time.sleep(0.05)
        yield address
        assert process.poll() is None, "the function died while serving"
    finally:
        process.terminate()
        process.wait(timeout=10)


def call(channel: grpc.Channel) -> fnv1.RunFunctionResponse:
    stub = grpcv1.FunctionRunnerServiceStub(channel)
    return stub.RunFunction(request(coreweave_xr()), timeout=10)


def check_served(rsp: fnv1.RunFunctionResponse) -> None:
    """A normal answer: the new XR's first resources, no FATAL."""
    assert set(rsp.desired.resources) == {"vpc", "cks-cluster", "usage-vpc-by-cluster"}
    assert all(r.severity != fnv1.SEVERITY_FATAL for r in rsp.results)


def check_refused(channel: grpc.Channel) -> None:
    with pytest.raises(grpc.RpcError) as refused:
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
    with serving(f"--tls-certs-dir={pki.certs_dir}") as address:
        # (a) the CA-signed client, verifying the server as 127.0.0.1 and as localhost
        with mtls(address, pki, pki.client) as channel:
            check_served(call(channel))
        override = {"grpc.ssl_target_name_override": "localhost"}
        with mtls(address, pki, pki.client, **override) as channel:
            check_served(call(channel))
        # (b) no client certificate
        with mtls(address, pki, None) as channel:
            check_refused(channel)
        # (c) a certificate from a CA the function does not trust
        with mtls(address, pki, pki.untrusted_client) as channel:
            check_refused(channel)
        # (d) plaintext
        with grpc.insecure_channel(address) as channel:
            check_refused(channel)
        # Refused handshakes leave the server serving.
        with mtls(address, pki, pki.client) as channel:
            check_served(call(channel))


def test_tls_certs_dir_from_the_environment(pki: PKI) -> None:
    with serving(env={"TLS_SERVER_CERTS_DIR": str(pki.certs_dir)}) as address:
        with mtls(address, pki, pki.client) as channel:
            check_served(call(channel))
        with grpc.insecure_channel(address) as channel:
            check_refused(channel)
        with mtls(address, pki, None) as channel:
            check_refused(channel)


def test_insecure_serves_plaintext_only_even_with_certificates(pki: PKI) -> None:
    with serving("--insecure", f"--tls-certs-dir={pki.certs_dir}") as address:
        with grpc.insecure_channel(address) as channel:
            check_served(call(channel))
        with mtls(address, pki, pki.client) as channel:
            check_refused(channel)


def test_insecure_from_the_environment_is_still_explicit(pki: PKI) -> None:
    """INSECURE=true is the SDK's env form of --insecure: plaintext only, certificates unused."""
    with serving(env={"INSECURE": "true", "TLS_SERVER_CERTS_DIR": str(pki.certs_dir)}) as address:
        with grpc.insecure_channel(address) as channel:
            check_served(call(channel))
        with mtls(address, pki, pki.client) as channel:
            check_refused(channel)


def test_no_plaintext_without_insecure() -> None:
    environment = {k: v for k, v in os.environ.items() if k not in FLAG_ENV}
    done = subprocess.run(
        [FUNCTION, f"--address=127.0.0.1:{free_port()}"],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
        env=environment,
    )
    assert done.returncode == 2
    assert "pass --insecure to serve plaintext" in done.stderr
