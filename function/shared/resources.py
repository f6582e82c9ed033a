"""Building blocks both clouds compose with: references, deletion-order Usages, and the
"keep the live value of an immutable field" rule."""

from __future__ import annotations

from typing import Any, TypeVar

from function.shared.outcome import Outcome

USAGE_API_VERSION = "protection.crossplane.io/v1beta1"

T = TypeVar("T")


def resource_ref(api_version: str, kind: str, name: str) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "resourceRef": {"name": name}}


def usage(name: str, *, of: dict[str, Any], by: dict[str, Any]) -> dict[str, Any]:
    """A Usage that blocks deleting `of` until `by` is gone, so teardown runs in working order.

    replayDeletion re-issues the blocked delete as soon as `by` is gone instead of waiting for
    the garbage collector's backoff.
    """
    return {
        "apiVersion": USAGE_API_VERSION,
        "kind": "Usage",
        "metadata": {"name": name},
        "spec": {"of": of, "by": by, "replayDeletion": True},
    }


def keep_live(out: Outcome, live: T | None, wanted: T, warning: str) -> T:
    """The live value of an immutable field when the spec asks for another, with a Warning.

    Nothing is recreated behind the user's back: the user decides how to move (a new pool,
    a new cluster) and the message says how.
    """
    if live is not None and live != wanted:
        out.warning(warning)
        return live
    return wanted
