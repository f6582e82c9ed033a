"""Records every watch event of the XRs and the kinds they compose, to measure churn per XR and
stage, see whether Crossplane's watch circuit breaker opened, and check deletion order."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .kube import Kind, Kube
from .xr import COMPOSITE_LABEL, Composed


@dataclass(frozen=True)
class Change:
    at: float
    type: str
    kind: str
    namespace: str
    name: str
    composite: str
    resource_version: str
    conditions: tuple[tuple[str, str, str], ...]
    # The whole object minus metadata noise, kept to tell what an event changed.
    content: Any = None
    # Deleted, or its deletion begun (a deletionTimestamp, finalizers still holding it).
    deleting: bool = False


@dataclass
class Stage:
    name: str
    xr: str
    start: float
    end: float = float("inf")


# How long stop() waits for the watch threads, all together.
STOP_SECONDS = 5


@dataclass
class WatchLog:
    api: Kube
    changes: list[Change] = field(default_factory=list)
    stages: list[Stage] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    # Crossplane drops the composite label from a resource it is about to delete; its later
    # events still belong to the XR it was composed for.
    _composed_for: dict[tuple[str, str, str], str] = field(default_factory=dict)

    def start(self, watched: Iterable[Kind]) -> None:
        for kind in dict.fromkeys(watched):
            thread = threading.Thread(
                target=self._follow, args=(kind,), name=f"watch-{kind.plural}", daemon=True
            )
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        """Stops following. A thread blocked in a watch request sees the stop only when the
        request returns; the threads are daemons, so all of them together get STOP_SECONDS, not
        each (one at a time made every suite's teardown take most of a minute)."""
        self._stop.set()
        deadline = time.monotonic() + STOP_SECONDS
        for thread in self._threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))

    def write(self, path: Path) -> None:
        """Every recorded event, one per line, for reading after a run."""
        with self._lock:
            lines = [
                f"{c.at:.3f}\t{c.type}\t{c.kind}\t{c.namespace}/{c.name}\t{c.composite}\t"
                f"rv={c.resource_version}\t{c.conditions}"
                for c in self.changes
            ]
            stages = [f"{s.start:.3f}\tSTAGE\t{s.xr}\t{s.name}" for s in self.stages]
            # Every spec change after creation, with the new spec: what to look at first when
            # a composed resource churns (a function emitting something different each time).
            previous: dict[tuple[str, str, str], Any] = {}
            for c in self.changes:
                identity = (c.kind, c.namespace, c.name)
                spec = (c.content or {}).get("spec")
                if identity in previous and previous[identity] != spec and c.type == "MODIFIED":
                    lines.append(
                        f"{c.at:.3f}\tSPEC-CHANGE\t{c.kind}\t{c.namespace}/{c.name}\t"
                        f"rv={c.resource_version}\t{json.dumps(spec, sort_keys=True)[:2000]}"
                    )
                previous[identity] = spec
        path.write_text("\n".join(sorted(lines + stages)) + "\n")

    def _follow(self, kind: Kind) -> None:
        for event in self.api.watch(kind, self._stop):
            obj: dict[str, Any] = event["object"]
            meta = obj["metadata"]
            identity = (kind.kind, meta.get("namespace", ""), meta["name"])
            composite = (meta.get("labels") or {}).get(COMPOSITE_LABEL, "")
            with self._lock:
                if composite:
                    self._composed_for[identity] = composite
                else:
                    composite = self._composed_for.get(identity, "")
            conditions = tuple(
                (c.get("type", ""), c.get("status", ""), c.get("reason", ""))
                for c in (obj.get("status") or {}).get("conditions") or []
            )
            change = Change(
                at=time.monotonic(),
                type=event["type"],
                kind=kind.kind,
                namespace=meta.get("namespace", ""),
                name=meta["name"],
                composite=composite,
                resource_version=meta["resourceVersion"],
                conditions=conditions,
                content=_content(obj),
                deleting=event["type"] == "DELETED" or bool(meta.get("deletionTimestamp")),
            )
            with self._lock:
                self.changes.append(change)

    # --- stages --------------------------------------------------------------------------------

    def begin(self, xr: str, stage: str) -> None:
        now = time.monotonic()
        with self._lock:
            for open_stage in self.stages:
                if open_stage.xr == xr and open_stage.end == float("inf"):
                    open_stage.end = now
            self.stages.append(Stage(stage, xr, now))

    def end(self, xr: str) -> None:
        self.begin(xr, "(ended)")
        with self._lock:
            self.stages.pop()

    def of(self, xr: str, xr_kind: str) -> list[Change]:
        """Events of the XR itself and of everything it composes (by the composite label)."""
        with self._lock:
            return [
                c for c in self.changes if c.composite == xr or (c.kind == xr_kind and c.name == xr)
            ]

    def churn(self, xr: str, xr_kind: str) -> str:
        """A table, per stage of this XR: watch events on the XR, on composed resources, and
        whether the XR reported Responsive=False (WatchCircuitOpen) during it."""
        lines = [f"churn of {xr}: stage | XR events | composed events | breaker opened | by kind"]
        changes = self.of(xr, xr_kind)
        for stage in [s for s in self.stages if s.xr == xr]:
            inside = [c for c in changes if stage.start <= c.at < stage.end]
            on_xr = [c for c in inside if c.kind == xr_kind]
            composed = Counter(c.kind for c in inside if c.kind != xr_kind)
            breaker = any(
                cond[:2] == ("Responsive", "False") for c in on_xr for cond in c.conditions
            )
            lines.append(
                f"  {stage.name:<28} | {len(on_xr):>3} | {sum(composed.values()):>4} | "
                f"{'YES' if breaker else 'no':<3} | {dict(sorted(composed.items()))}"
            )
        return "\n".join(lines)

    def last_change_at(self, xr: str, xr_kind: str) -> float:
        changes = self.of(xr, xr_kind)
        return changes[-1].at if changes else 0.0

    def deletion_times(self, composed: Mapping[str, Composed]) -> dict[str, float]:
        """When each of these composed objects, by key, was first seen deleted; fails naming the
        ones whose deletion was never seen."""
        with self._lock:
            deleted = [c for c in self.changes if c.type == "DELETED"]
        seen = {
            key: next((c.at for c in deleted if (c.kind, c.name) == (ref.kind, ref.name)), None)
            for key, ref in composed.items()
        }
        times = {key: at for key, at in seen.items() if at is not None}
        assert times.keys() == seen.keys(), f"deletions not seen: {seen}"
        return times


def _content(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata", {})
    return {
        "labels": meta.get("labels"),
        "annotations": meta.get("annotations"),
        "finalizers": meta.get("finalizers"),
        "spec": obj.get("spec"),
        "status": obj.get("status"),
        "data": obj.get("data"),
    }


def without_breaker(content: dict[str, Any] | None) -> Any:
    """The object as it would be without Crossplane's circuit-breaker bookkeeping: the
    Responsive condition, and the observedGeneration/transition times that move with it."""
    if not content:
        return content
    status = dict(content.get("status") or {})
    status["conditions"] = sorted(
        (
            {k: v for k, v in c.items() if k not in ("lastTransitionTime", "observedGeneration")}
            for c in status.get("conditions") or []
            if c.get("type") != "Responsive"
        ),
        key=lambda c: str(c.get("type")),
    )
    return {**content, "status": status}


def explain(changes: list[Change], history: list[Change]) -> tuple[list[Change], list[Change]]:
    """Splits `changes` into real changes and circuit-breaker bookkeeping (an XR event whose
    only difference from that object's previous version is its Responsive condition)."""
    real, breaker = [], []
    for change in changes:
        previous = [
            h
            for h in history
            if h.kind == change.kind and h.name == change.name and h.at < change.at
        ]
        if (
            change.type == "MODIFIED"
            and previous
            and without_breaker(previous[-1].content) == without_breaker(change.content)
        ):
            breaker.append(change)
        else:
            real.append(change)
    return real, breaker
