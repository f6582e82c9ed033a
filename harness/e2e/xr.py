"""Reading an XR and what it composed, as the API server has them."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from harness.example_sets import documents, example_set

from .kube import Kind, Kube, condition

RESOURCE_NAME = "crossplane.io/composition-resource-name"
COMPOSITE_LABEL = "crossplane.io/composite"
# Where a provider records the cloud's ID (or name) of what it manages.
EXTERNAL_NAME = "crossplane.io/external-name"


@dataclass(frozen=True)
class Composed:
    kind: str
    name: str
    uid: str
    deleting: bool
    # What the function composed: the spec, or a Secret's data.
    content: Any = None


def example_xr(
    example: str, name: str = "", pools: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The committed example XR of that set (examples/<set>/xr.yaml), named `name` and with
    these pools where given."""
    manifest = documents(example_set(example).xr)[0]
    if name:
        manifest["metadata"]["name"] = name
    if pools is not None:
        manifest["spec"]["nodePools"] = pools
    return manifest


def composed(api: Kube, xr: str, namespace: str, kinds: tuple[Kind, ...]) -> dict[str, Composed]:
    """Every object composed for this XR, by composition resource key."""
    found: dict[str, Composed] = {}
    for kind in kinds:
        for obj in api.list(kind, namespace, labels=f"{COMPOSITE_LABEL}={xr}"):
            meta = obj["metadata"]
            key = (meta.get("annotations") or {}).get(RESOURCE_NAME, "")
            found[key] = Composed(
                kind.kind,
                meta["name"],
                meta["uid"],
                bool(meta.get("deletionTimestamp")),
                obj.get("spec", obj.get("data")),
            )
    return found


def reason(obj: dict[str, Any] | None, kind: str) -> str:
    return str(condition(obj, kind).get("reason", ""))


def secret_text(secret: dict[str, Any] | None, key: str) -> str:
    return base64.b64decode(((secret or {}).get("data") or {}).get(key, "")).decode()


def external_name(api: Kube, xr: str, namespace: str, kind: Kind, key: str) -> str:
    """The external name a provider gave the object composed under `key`."""
    ref = composed(api, xr, namespace, (kind,))[key]
    obj = api.get(kind, ref.name, namespace)
    assert obj is not None, f"{kind.kind} {namespace}/{ref.name} is gone"
    return str(obj["metadata"]["annotations"][EXTERNAL_NAME])
