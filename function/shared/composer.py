"""What both clouds' composers share: the XR, what was observed, and the Outcome being built."""

from __future__ import annotations

from typing import ClassVar

from function.shared.naming import cloud_name, composed_name
from function.shared.observed import Observed
from function.shared.outcome import Composite, Outcome
from function.shared.readiness import ready_when_exists
from function.shared.resources import resource_ref, usage
from function.shared.validation import Credentials

# (apiVersion, kind, composition resource name) of a resource this XR composes.
ComposedRef = tuple[str, str, str]


class Composer:
    # The cloud API's limit on cluster and network names.
    cloud_name_limit: ClassVar[int]

    def __init__(self, xr: Composite, credentials: Credentials, observed: Observed) -> None:
        self.xr = xr
        self.observed = observed
        self.out = Outcome()
        self.cloud_name = cloud_name(xr.namespace, xr.name, self.cloud_name_limit)
        self.provider_config_ref = {"kind": credentials.type, "name": credentials.name}

    def name(self, *parts: str) -> str:
        return composed_name(self.xr.name, *parts)

    def compose_usage(self, key: str, *, of: ComposedRef, by: ComposedRef) -> None:
        """Block deleting `of` until `by` is gone; both are resources this XR composes."""
        self.out.compose(
            key,
            usage(
                self.name(key),
                of=resource_ref(of[0], of[1], self.name(of[2])),
                by=resource_ref(by[0], by[1], self.name(by[2])),
            ),
            ready=ready_when_exists(self.observed[key]),
        )
