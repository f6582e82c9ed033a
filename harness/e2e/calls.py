"""The function's calls per reconcile, from the two processes' own logs.

At --debug the function logs one `composed` line per call: the XR, the required resources the
request carried, and whether its memo answered. At --debug Crossplane logs `Reconciling` as each
reconcile of an XR begins, naming its composite controller and the request. Each call belongs to
the reconciles of its XR that began before it (controller-runtime never runs two reconciles of
one object at once; Crossplane logs whole seconds, so reconciles of one second count together),
so calls per reconcile are counted without assuming how an engine's requirements loop starts:
before v2.4 every reconcile begins with a call that carries no required resources; from v2.4 the
first call carries those the step required last time.
"""

from __future__ import annotations

import bisect
import dataclasses
import datetime
import json
import re
from pathlib import Path

from .kube import Kind

# structlog's console renderer colours its output even into a file.
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_LINE = re.compile(r"^(?P<at>\S+) \[debug\s*\] composed\s+(?P<fields>.*)$")
_FIELD = re.compile(r"(\w+)=(\S+)")
# controller-runtime's development zap encoder: time, level, logger, message, then JSON fields.
_CROSSPLANE_LINE = re.compile(
    r"^(?P<at>\d{4}-\d\d-\d\dT\S+)\t(?P<level>[A-Z]+)\t(?P<logger>\S+)\t(?P<message>[^\t]*)\t(?P<fields>\{.*\})$"
)


@dataclasses.dataclass(frozen=True)
class Call:
    at: datetime.datetime
    xr: str  # kind/namespace/name
    required: tuple[str, ...]  # names of the required resources the request carried
    memoised: bool


def read_calls(log: Path) -> list[Call]:
    """Every call the function's log records, in order."""
    calls = []
    for raw in log.read_text(errors="replace").splitlines():
        match = _LINE.match(_ANSI.sub("", raw))
        if match is None:
            continue
        fields = dict(_FIELD.findall(match["fields"]))
        required = fields.get("required", "-")
        calls.append(
            Call(
                at=datetime.datetime.fromisoformat(match["at"]),
                xr=fields.get("xr", ""),
                required=() if required == "-" else tuple(required.split(",")),
                memoised=fields.get("memo") == "hit",
            )
        )
    return calls


def read_reconciles(log: Path, kind: Kind, namespace: str, name: str) -> list[datetime.datetime]:
    """When each reconcile of one XR began, from Crossplane's --debug log, in order."""
    # Crossplane names the controller of an XR kind `composite/<XRD name>`.
    controller = f"composite/{kind.plural}.{kind.api_version.split('/', 1)[0]}"
    begun = []
    for raw in log.read_text(errors="replace").splitlines():
        match = _CROSSPLANE_LINE.match(raw)
        if match is None or match["message"] != "Reconciling":
            continue
        try:
            fields = json.loads(match["fields"])
        except json.JSONDecodeError:
            continue
        # The reconcile request, as Crossplane logs it:
        # `"request": {"name":"inference-east","namespace":"ml-team"}`.
        request = fields.get("request")
        if fields.get("controller") != controller or not isinstance(request, dict):
            continue
        if (str(request.get("namespace", "")), str(request.get("name", ""))) == (namespace, name):
            begun.append(datetime.datetime.fromisoformat(match["at"]))
    return sorted(begun)


@dataclasses.dataclass(frozen=True)
class Reconciles:
    # Per second of Crossplane's log in which reconciles began (it logs whole seconds): how many
    # began in it, and the calls they took together, in order.
    groups: tuple[tuple[int, int], ...]
    memoised: int  # of those calls, the ones the memo answered
    # Per group, how many of its calls fall in the very second its reconciles were logged in:
    # those may be the previous reconcile's (Crossplane logs whole seconds, the function
    # fractions; a reconcile logged at 11 may have begun at 11.7, after a call at 11.3 that
    # ended the one before). Not part of equality: it only widens every_reconcile_took.
    early: tuple[int, ...] = dataclasses.field(default=(), compare=False)

    @property
    def reconciles(self) -> int:
        return sum(began for began, _ in self.groups)

    @property
    def calls(self) -> int:
        return sum(calls for _, calls in self.groups)

    def every_reconcile_took(self, calls: int) -> bool:
        """Whether the calls can be attributed so that every reconcile took exactly `calls`:
        a group's early calls may go to the group before it, and the first group's to a
        reconcile that began before the window."""
        early = self.early or (0,) * len(self.groups)
        owed = 0  # calls the previous group still lacks: only this group's early calls fit
        for index, ((began, took), movable) in enumerate(zip(self.groups, early, strict=True)):
            if owed > movable:
                return False
            own, spare = took - owed, movable - owed
            needed = began * calls
            if index == 0 and own > needed:
                own -= min(spare, own - needed)
            if own > needed:
                return False
            owed = needed - own
        return owed == 0

    def __str__(self) -> str:
        shape = ", ".join(
            str(took) if began == 1 else f"{took} in {began} reconciles of one second"
            for began, took in self.groups
        )
        return (
            f"{self.calls} calls in {self.reconciles} reconciles (calls per reconcile: "
            f"{shape or 'none'}), {self.memoised} answered by the memo"
        )


def reconciles_of(
    calls: list[Call],
    begun: list[datetime.datetime],
    xr: str,
    start: datetime.datetime,
    end: datetime.datetime,
) -> Reconciles:
    """The calls of the reconciles of xr that began between start and end.

    A reconcile's calls are xr's calls from its beginning to the next reconcile's (or to the end
    of the logs, for the last one): read the logs a little after end, so that the last
    reconcile's calls are in them. Crossplane logs whole seconds, so reconciles that began in
    the same second are counted together, with the calls from that second on.
    """
    mine = sorted((c for c in calls if c.xr == xr), key=lambda c: c.at)
    times = [c.at for c in mine]
    seconds = sorted({b.replace(microsecond=0) for b in begun})
    groups: list[tuple[int, int]] = []
    early: list[int] = []
    memoised = 0
    for index, second in enumerate(seconds):
        if not start.replace(microsecond=0) <= second <= end:
            continue
        began = sum(1 for b in begun if b.replace(microsecond=0) == second)
        until = seconds[index + 1] if index + 1 < len(seconds) else None
        first = bisect.bisect_left(times, second)
        last = bisect.bisect_left(times, until) if until is not None else len(times)
        groups.append((began, last - first))
        next_second = second + datetime.timedelta(seconds=1)
        early.append(bisect.bisect_left(times, next_second, first, last) - first)
        memoised += sum(1 for c in mine[first:last] if c.memoised)
    return Reconciles(groups=tuple(groups), memoised=memoised, early=tuple(early))
