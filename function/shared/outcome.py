"""What a composition core returns: the desired state and everything it has to say about it.

The cores build this plain data; the gRPC servicer is the only place that turns it into a
RunFunctionResponse, so the cores stay pure and testable without protobuf.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable
from typing import Any

from crossplane.function.resource import Condition

from function.shared.observed import ABSENT, View


class Severity(enum.Enum):
    NORMAL = "Normal"
    WARNING = "Warning"
    FATAL = "Fatal"


@dataclasses.dataclass(frozen=True, slots=True)
class Result:
    severity: Severity
    message: str


@dataclasses.dataclass(frozen=True, slots=True)
class Requirement:
    """A resource Crossplane must fetch and send back in required_resources[name]."""

    name: str
    api_version: str
    kind: str
    match_name: str
    namespace: str | None = None


@dataclasses.dataclass(slots=True)
class Desired:
    resource: dict[str, Any]
    ready: bool


@dataclasses.dataclass(slots=True)
class Outcome:
    resources: dict[str, Desired] = dataclasses.field(default_factory=dict)
    results: list[Result] = dataclasses.field(default_factory=list)
    conditions: list[Condition] = dataclasses.field(default_factory=list)
    requirements: list[Requirement] = dataclasses.field(default_factory=list)
    status: dict[str, Any] = dataclasses.field(default_factory=dict)
    # The XR's own readiness when the function decides it; None lets Crossplane derive it from
    # the composed resources' readiness.
    ready: bool | None = None

    def compose(self, key: str, resource: dict[str, Any], *, ready: bool) -> None:
        self.resources[key] = Desired(resource, ready)

    def normal(self, message: str) -> None:
        self.results.append(Result(Severity.NORMAL, message))

    def warning(self, message: str) -> None:
        self.results.append(Result(Severity.WARNING, message))

    def condition(self, type_: str, ok: bool, reason: str, message: str) -> None:
        """An XR condition; reason is PascalCase, message tells the user what is going on."""
        self.conditions.append(Condition(type_, "True" if ok else "False", reason, message))

    @property
    def fatal(self) -> Result | None:
        return next((r for r in self.results if r.severity is Severity.FATAL), None)

    @classmethod
    def failed(cls, message: str) -> Outcome:
        """The one FATAL result a core returns for bad input: no desired state at all."""
        return cls(results=[Result(Severity.FATAL, message)])


class Composite:
    """The observed XR as the cores need it: identity and the raw spec (validated by the core).

    The spec is converted from the request only when a core asks for it; spec_key, when the
    servicer supplies one, identifies its content exactly so a validated spec can be reused.
    """

    __slots__ = (
        "_load_spec",
        "_spec",
        "api_version",
        "kind",
        "name",
        "namespace",
        "spec_key",
        "status",
    )

    def __init__(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str,
        spec: Any = None,
        *,
        load_spec: Callable[[], Any] | None = None,
        spec_key: bytes | None = None,
        status: View = ABSENT,
    ) -> None:
        self.api_version, self.kind, self.name, self.namespace = api_version, kind, name, namespace
        self._spec, self._load_spec, self.spec_key = spec, load_spec, spec_key
        # The XR's observed status: what the function published on earlier reconciles.
        self.status = status

    @property
    def spec(self) -> Any:
        if self._load_spec is not None:
            self._spec, self._load_spec = self._load_spec(), None
        return self._spec
