"""Certificates for the local control plane: one CA for the API server and its clients, and
leaf certificates signed by any CA (also Crossplane's own root CA, read from its Secret)."""

from __future__ import annotations

import datetime
import ipaddress
import warnings
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

# Longer than any run, short enough that a leaked test key is worthless soon after.
VALIDITY = datetime.timedelta(days=2)
LOOPBACK = ipaddress.ip_address("127.0.0.1")


@dataclass(frozen=True)
class KeyPair:
    cert_pem: bytes
    key_pem: bytes

    def write(self, directory: Path, cert_name: str = "tls.crt", key_name: str = "tls.key") -> None:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / cert_name).write_bytes(self.cert_pem)
        (directory / key_name).write_bytes(self.key_pem)
        (directory / key_name).chmod(0o600)


def _key_pem(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _builder(
    subject: x509.Name, issuer: x509.Name, key: ec.EllipticCurvePrivateKey, *, ca: bool
) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )


def new_ca(common_name: str) -> KeyPair:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    cert = (
        _builder(name, name, key, ca=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )
    return KeyPair(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def issue(
    ca: KeyPair,
    common_name: str,
    *,
    organization: str | None = None,
    server: bool = False,
    client: bool = False,
    dns_names: tuple[str, ...] = ("localhost",),
) -> KeyPair:
    """A leaf certificate signed by `ca`; servers get the loopback IP and `dns_names` as SANs."""
    with warnings.catch_warnings():
        # Crossplane's root CA names its country "Earth"; cryptography warns about any country
        # that is not two letters, but signs with the name as it is.
        warnings.simplefilter("ignore", UserWarning)
        issuer = x509.load_pem_x509_certificate(ca.cert_pem).subject
    ca_key = serialization.load_pem_private_key(ca.key_pem, password=None)
    if not isinstance(ca_key, ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey):
        raise TypeError(f"unsupported CA key type {type(ca_key).__name__}")
    key = ec.generate_private_key(ec.SECP256R1())
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    if organization:
        attributes.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    roles = ((ExtendedKeyUsageOID.SERVER_AUTH, server), (ExtendedKeyUsageOID.CLIENT_AUTH, client))
    usages = [usage for usage, wanted in roles if wanted]
    builder = _builder(x509.Name(attributes), issuer, key, ca=False).add_extension(
        x509.ExtendedKeyUsage(usages), critical=False
    )
    if server:
        names: list[x509.GeneralName] = [x509.IPAddress(LOOPBACK)]
        names += [x509.DNSName(name) for name in dns_names]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    cert = builder.sign(ca_key, hashes.SHA256())
    return KeyPair(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def service_account_key_pem() -> bytes:
    """The key the API server signs service-account tokens with (RSA: what it expects)."""
    return _key_pem(rsa.generate_private_key(public_exponent=65537, key_size=2048))
