"""Cluster access for CKS: the org token chain and the kubeconfig built from it.

CKS publishes no connection details. Its API server accepts the CoreWeave org token as a bearer
token, so the kubeconfig is built here from the cluster's endpoint and that token, read through
ProviderConfig -> credentials Secret (JSON {"token": ...}). The token must appear nowhere but in
the kubeconfig Secret: no message in this module quotes Secret content.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import functools
import json
import re

from function.shared.observed import Required, View
from function.shared.outcome import Requirement
from function.shared.validation import Credentials

PROVIDER_CONFIG_API_VERSION = "coreweave.m.crossplane.io/v1beta1"
REQUIRED_PROVIDER_CONFIG = "coreweave-providerconfig"
REQUIRED_CREDENTIALS_SECRET = "coreweave-credentials"  # noqa: S105 - a requirement name
KUBECONFIG_KEY = "kubeconfig"
# On the kubeconfig Secret: the credentials Secret its token came from, "<namespace>/<name>", so
# the next reconcile can ask for it together with the ProviderConfig. Names no secret content.
ANNOTATION_TOKEN_SOURCE = "inference.fn.modelplane.ai/credentials-secret"  # noqa: S105


@dataclasses.dataclass(frozen=True, slots=True)
class SecretRef:
    namespace: str
    name: str

    @property
    def annotation(self) -> str:
        return f"{self.namespace}/{self.name}"

    @classmethod
    def parse(cls, annotation: str | None) -> SecretRef | None:
        """The ref an annotation names, or None for anything that is not "<namespace>/<name>"."""
        namespace, _, name = (annotation or "").partition("/")
        return cls(namespace, name) if namespace and name and "/" not in name else None

    def names(self, secret: View) -> bool:
        """Whether a fetched Secret is this one (Crossplane sends what was asked for last)."""
        namespace = secret.string("metadata", "namespace")
        return secret.string("metadata", "name") == self.name and namespace in (
            None,
            self.namespace,
        )


@dataclasses.dataclass(frozen=True, slots=True)
class TokenLookup:
    """The org token, or why it cannot be read yet (never both); and the credentials Secret the
    ProviderConfig names, once it was read."""

    requirements: list[Requirement]
    token: str | None = None
    problem: str | None = None
    source: SecretRef | None = None


def _secret_requirement(ref: SecretRef) -> Requirement:
    return Requirement(
        name=REQUIRED_CREDENTIALS_SECRET,
        api_version="v1",
        kind="Secret",
        match_name=ref.name,
        namespace=ref.namespace,
    )


def read_token(
    credentials: Credentials,
    namespace: str,
    required: Required,
    remembered: SecretRef | None = None,
) -> TokenLookup:
    """Follow spec.credentials to the token, declaring each requirement on the way.

    Crossplane fetches requirements one round at a time and stops calling once a call asks for
    what the previous one asked for. With `remembered`, the Secret the ProviderConfig named on
    the previous reconcile, the first call asks for the ProviderConfig and that Secret at once:
    when the ProviderConfig still names it, the second call has everything and asks for the same,
    so a converged reconcile takes two calls instead of three. A wrong guess costs one more call:
    the Secret sent is used only if it is the one the ProviderConfig names now.
    """
    namespaced = credentials.type == "ProviderConfig"
    config_requirement = Requirement(
        name=REQUIRED_PROVIDER_CONFIG,
        api_version=PROVIDER_CONFIG_API_VERSION,
        kind=credentials.type,
        match_name=credentials.name,
        namespace=namespace if namespaced else None,
    )
    described = f'{credentials.type} "{credentials.name}"'
    configs = required.get(REQUIRED_PROVIDER_CONFIG)
    if configs is None:
        guessed = [_secret_requirement(remembered)] if remembered is not None else []
        return TokenLookup([config_requirement, *guessed], problem=f"reading {described}")
    if not configs:
        return TokenLookup([config_requirement], problem=f"{described} not found")
    config = configs[0]
    source = config.string("spec", "credentials", "source")
    secret_ref = config.child("spec", "credentials", "secretRef")
    secret_name, key = secret_ref.string("name"), secret_ref.string("key")
    if source != "Secret" or not secret_name or not key:
        return TokenLookup(
            [config_requirement],
            problem=f"{described} does not take its credentials from a Secret "
            "(spec.credentials.source: Secret with secretRef name and key); "
            "the kubeconfig needs the org API token",
        )
    # A namespaced ProviderConfig's Secret lives in the XR's namespace whatever it says: the
    # provider resolves it there, and reading another namespace would cross a tenancy boundary.
    secret_namespace = namespace if namespaced else secret_ref.string("namespace")
    if not secret_namespace:
        return TokenLookup(
            [config_requirement],
            problem=f"{described} has no spec.credentials.secretRef.namespace",
        )
    named = SecretRef(secret_namespace, secret_name)
    requirements = [config_requirement, _secret_requirement(named)]
    described_secret = f'Secret "{secret_namespace}/{secret_name}"'
    secrets = required.get(REQUIRED_CREDENTIALS_SECRET)
    if secrets is None or (secrets and not named.names(secrets[0])):
        # Not fetched yet, or fetched on a guess the ProviderConfig no longer confirms.
        return TokenLookup(requirements, problem=f"reading {described_secret}", source=named)
    if not secrets:
        return TokenLookup(requirements, problem=f"{described_secret} not found", source=named)
    token = _token_from_secret(secrets[0], key)
    if token is None:
        return TokenLookup(
            requirements,
            problem=f'{described_secret} key "{key}" does not hold JSON with a non-empty "token"',
            source=named,
        )
    return TokenLookup(requirements, token=token, source=named)


# Credentials documents are a few hundred bytes; a larger value is decoded every time rather
# than cached, so the cache holds at most 256 x 4 KiB.
_CACHED_SECRET_VALUE = 4096


def _token_from_secret(secret: View, key: str) -> str | None:
    encoded = secret.string("data", key)
    if encoded is None:
        return None
    if len(encoded) > _CACHED_SECRET_VALUE:
        return _decode_token.__wrapped__(encoded)
    return _decode_token(encoded)


@functools.lru_cache(maxsize=256)
def _decode_token(encoded: str) -> str | None:
    """The token in base64 JSON {"token": ...}; decoded once per distinct Secret content."""
    try:
        document = json.loads(base64.b64decode(encoded, validate=True))
    except (binascii.Error, ValueError, RecursionError):  # whatever the Secret holds
        return None
    token = document.get("token") if isinstance(document, dict) else None
    if not isinstance(token, str) or not token.strip():
        return None
    return token.strip()


def api_server_url(endpoint: str) -> str:
    """CKS reports a bare host; tolerate a full URL should it ever carry the scheme."""
    return endpoint if endpoint.startswith("https://") else f"https://{endpoint}"


# JSON writes characters beyond the BMP as UTF-16 surrogate pairs, which YAML forbids.
_SURROGATE_PAIR = re.compile(r"\\u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})")


def _yaml_quoted(text: str) -> str:
    """A YAML double-quoted scalar for any text: JSON quoting, with YAML's 8-digit escapes for
    characters beyond the BMP."""

    def combine(match: re.Match[str]) -> str:
        high, low = int(match.group(1), 16), int(match.group(2), 16)
        return f"\\U{0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00):08X}"

    return _SURROGATE_PAIR.sub(combine, json.dumps(text))


def kubeconfig(cluster_name: str, endpoint: str, token: str) -> str:
    """A kubeconfig for CKS managed auth: public CA (no CA data) and the org token as bearer.

    Values are double-quoted scalars, so no endpoint or token content can change the document's
    structure.
    """
    name = _yaml_quoted(cluster_name)
    return (
        "apiVersion: v1\n"
        "kind: Config\n"
        "clusters:\n"
        f"- name: {name}\n"
        "  cluster:\n"
        f"    server: {_yaml_quoted(api_server_url(endpoint))}\n"
        "contexts:\n"
        f"- name: {name}\n"
        "  context:\n"
        f"    cluster: {name}\n"
        f"    user: {name}\n"
        f"current-context: {name}\n"
        "users:\n"
        f"- name: {name}\n"
        "  user:\n"
        f"    token: {_yaml_quoted(token)}\n"
    )


def encode(text: str) -> str:
    return base64.b64encode(text.encode()).decode()
