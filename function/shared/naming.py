"""Deterministic names. Every name here is a public contract: changing one makes Crossplane
delete and recreate the real resource behind it."""

from __future__ import annotations

import functools
import hashlib
import re

from crossplane.function.resource import child_name

_NOT_NAME_CHARS = re.compile(r"[^a-z0-9-]+")
# Five hex digits, as child_name uses: one in a million collision odds among same-prefix names.
_HASH_CHARS = 5
# Names are computed when an XR is composed afresh (a converged reconcile is answered by the
# memo); a few hundred XRs' names. Arguments and results are bounded names (at most 253
# characters), so the count bounds the memory too: under 2 MiB.
_CACHED_NAMES = 4096


_NOT_DNS_LABEL_CHARS = re.compile(r"[^a-z0-9-]")
# Helm refuses a longer release name (chartutil.ValidateReleaseName, Helm v3): charts append
# suffixes to it in the names of what they create.
HELM_RELEASE_NAME_LIMIT = 53


@functools.lru_cache(maxsize=_CACHED_NAMES)
def composed_name(xr_name: str, *parts: str) -> str:
    """metadata.name of a composed resource: the SDK's child_name, at most 63 characters.

    A part may hold characters Kubernetes names refuse (a Civo pool called GPU_Pool): those
    become "-" and letters are lowered. The hash suffix is child_name's, taken over the original
    text, so names that differ only in such characters stay distinct; names that were valid
    already are unchanged.
    """
    name = child_name(xr_name, *parts)
    return _NOT_DNS_LABEL_CHARS.sub("-", name.lower())


@functools.lru_cache(maxsize=_CACHED_NAMES)
def cloud_name(namespace: str, name: str, limit: int) -> str:
    """A name for the cloud provider's own API, unique per XR namespace/name, at most limit chars.

    Provider APIs (CKS clusters and VPCs: 30 characters) are shared by every control plane of an
    org, so the XR's namespace is part of the hash even though it is not part of the text.
    """
    digest = hashlib.sha256(f"{namespace}/{name}".encode()).hexdigest()[:_HASH_CHARS]
    stem = _NOT_NAME_CHARS.sub("-", name.lower()).strip("-")
    stem = stem[: limit - _HASH_CHARS - 1].rstrip("-")
    return f"{stem}-{digest}" if stem else digest


def helm_release_name(release_object_name: str) -> str:
    """The Helm release name for a composed provider-helm Release: its own name (what
    provider-helm uses when no external name is set) while Helm accepts it, else a shorter one
    with a hash of the whole name, so long XR names still get distinct, valid releases."""
    if len(release_object_name) <= HELM_RELEASE_NAME_LIMIT:
        return release_object_name
    digest = hashlib.sha256(release_object_name.encode()).hexdigest()[:_HASH_CHARS]
    stem = release_object_name[: HELM_RELEASE_NAME_LIMIT - _HASH_CHARS - 1].rstrip("-")
    return f"{stem}-{digest}"
