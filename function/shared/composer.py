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
# The condition that says whether the kubeconfig in status.secrets can be used.
CONDITION_ACCESS = "ClusterAccess"


class Composer:
    # The cloud API's limit on cluster and network names.
    cloud_name_limit: ClassVar[int]

    def __init__(self, xr: Composite, credentials: Credentials, observed: Observed) -> None:
        self.xr = xr
        self.observed = observed
        self.out = Outcome()
        self.cloud_name = cloud_name(xr.namespace, xr.name, self.cloud_name_limit)
        self.provider_config_ref = {"kind": credentials.type, "name": credentials.name}

    def compose(self) -> Outcome:
        """The cloud's composition; what composed() returns, before the shared rules."""
        raise NotImplementedError

    def composed(self) -> Outcome:
        """The cloud's composition with the rules both clouds share applied.

        An XR is never Ready without cluster access: consumers wait for Ready and then read
        the kubeconfig status.secrets names, and every composed resource can be Ready before
        the kubeconfig exists (the credentials Secret missing, or Civo's connection Secret not
        written yet). Once access is established, readiness is the composed resources' again.
        While one of them is not Ready, Crossplane's own verdict already says no and names it
        ("Unready resources: ..."); overriding it would drop that message.
        """
        out = self.compose()
        without_access = any(
            c.typ == CONDITION_ACCESS and c.status != "True" for c in out.conditions
        )
        if without_access and all(d.ready for d in out.resources.values()):
            out.ready = False
        return out

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
