"""Cluster access for Civo: which key of the cluster's connection Secret holds the kubeconfig.

provider-upjet-civo writes the kubeconfig of a cluster created with `writeKubeconfig: true` to
the Cluster's connection Secret. The cluster-scoped provider's source names the key
`kubeconfig`; for the namespaced provider only `attribute.kubeconfig` may exist. The key is
not guessed: the Secret is read (a required resource in the XR's namespace) until one of those
keys holds a kubeconfig, and the key found is what status.secrets and the helm ProviderConfig
name. No message in this module quotes Secret content.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import functools
import re

from function.shared.composer import CONDITION_ACCESS
from function.shared.observed import Required, View
from function.shared.outcome import Requirement

REQUIRED_CONNECTION_SECRET = "civo-connection-secret"  # noqa: S105 - a requirement name
# Where provider-upjet-civo may put the kubeconfig, most specific first.
KUBECONFIG_KEYS = ("kubeconfig", "attribute.kubeconfig")
# A kubeconfig, YAML or JSON, names at least one cluster with its server.
_KUBECONFIG_SHAPE = re.compile(r'(^|\n|")clusters"?\s*:.*server"?\s*:', re.DOTALL)


@dataclasses.dataclass(frozen=True, slots=True)
class KubeconfigLookup:
    """The key holding the kubeconfig, or why it is not known yet (never both)."""

    requirements: list[Requirement]
    key: str | None = None
    problem: str | None = None
    reason: str = "WaitingForKubeconfig"


def established_key(status: View, secret_name: str) -> str | None:
    """The key a previous reconcile found by reading the Secret, from the XR's own status.

    It counts only together with ClusterAccess=True, which only a reconcile that read the
    Secret reports: status written by an older version of the function is verified again.
    """
    # Only this condition, not the whole list: Crossplane's own conditions (Synced, Ready,
    # Responsive) change without changing what the function would compose.
    if status.condition_status(CONDITION_ACCESS, at=("conditions",)) != "True":
        return None
    for entry in status.get("secrets") or []:
        if (
            isinstance(entry, dict)
            and entry.get("type") == "Kubeconfig"
            and entry.get("name") == secret_name
            and entry.get("key") in KUBECONFIG_KEYS
        ):
            return str(entry["key"])
    return None


def find_key(secret_name: str, namespace: str, required: Required) -> KubeconfigLookup:
    """Read the connection Secret and find the key that holds a kubeconfig."""
    requirement = Requirement(
        name=REQUIRED_CONNECTION_SECRET,
        api_version="v1",
        kind="Secret",
        match_name=secret_name,
        namespace=namespace,
    )
    described = f'Secret "{namespace}/{secret_name}"'
    secrets = required.get(REQUIRED_CONNECTION_SECRET)
    if secrets is None:
        return KubeconfigLookup([requirement], problem=f"reading the connection {described}")
    if not secrets:
        return KubeconfigLookup(
            [requirement],
            problem=f"waiting for the cluster's connection {described}",
            reason="WaitingForConnectionSecret",
        )
    for key in KUBECONFIG_KEYS:
        encoded = secrets[0].string("data", key)
        if encoded is not None and _is_kubeconfig(encoded):
            return KubeconfigLookup([requirement], key=key)
    keys = " or ".join(f'"{k}"' for k in KUBECONFIG_KEYS)
    return KubeconfigLookup(
        [requirement],
        problem=f"waiting for the connection {described} to hold a kubeconfig under key {keys}",
    )


# A kubeconfig with client certificates is a few KiB; a larger value is checked every time rather
# than cached, so the cache holds at most 256 x 16 KiB.
_CACHED_SECRET_VALUE = 16 * 1024


def _is_kubeconfig(encoded: str) -> bool:
    if len(encoded) > _CACHED_SECRET_VALUE:
        return bool(holds_kubeconfig.__wrapped__(encoded))
    return holds_kubeconfig(encoded)


@functools.lru_cache(maxsize=256)
def holds_kubeconfig(encoded: str) -> bool:
    """Whether a Secret value (base64) is a kubeconfig; decided once per distinct value."""
    try:
        text = base64.b64decode(encoded, validate=True).decode()
    except (binascii.Error, ValueError):  # whatever the Secret holds
        return False
    return _KUBECONFIG_SHAPE.search(text) is not None
