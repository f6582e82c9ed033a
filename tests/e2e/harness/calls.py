"""The function's calls as its --debug log records them, and what they say per reconcile.

At --debug the function logs one `composed` line per call: the XR, the required resources the
request carried, and whether its memo answered. Crossplane's requirements loop starts every
reconcile with a call that carries no required resources (this function declares no bootstrap
requirements), so such calls count the reconciles.
"""

from __future__ import annotations

import dataclasses
import datetime
import re
from pathlib import Path

# structlog's console renderer colours its output even into a file.
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_LINE = re.compile(r"^(?P<at>\S+) \[debug\s*\] composed\s+(?P<fields>.*)$")
_FIELD = re.compile(r"(\w+)=(\S+)")


@dataclasses.dataclass(frozen=True)
class Call:
    at: datetime.datetime
    xr: str  # kind/namespace/name
    required: tuple[str, ...]  # names of the required resources the request carried
    memoised: bool


def read_calls(log: Path) -> list[Call]:
    """Every call the log records, in order."""
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


@dataclasses.dataclass(frozen=True)
class Reconciles:
    calls: int
    reconciles: int  # calls that began a pass of the requirements loop
    memoised: int  # calls the memo answered

    @property
    def calls_per_reconcile(self) -> float:
        return self.calls / self.reconciles if self.reconciles else 0.0

    def __str__(self) -> str:
        return (
            f"{self.calls} calls in {self.reconciles} reconciles "
            f"({self.calls_per_reconcile:.2f} per reconcile), {self.memoised} answered by the memo"
        )


def reconciles_of(
    calls: list[Call], xr: str, start: datetime.datetime, end: datetime.datetime
) -> Reconciles:
    """What the calls for xr between start and end add up to."""
    mine = [c for c in calls if c.xr == xr and start <= c.at <= end]
    return Reconciles(
        calls=len(mine),
        reconciles=sum(1 for c in mine if not c.required),
        memoised=sum(1 for c in mine if c.memoised),
    )
