"""A compiled plan replays exactly what re-running the same reads through View would give.

The memo answers from an XR's last response whenever the plan holds, so a plan that held where
View would read something else would send a stale answer. Hypothesis draws two objects that
share most of their shape and a core's worth of reads; the plan recorded on the first must hold
on the second exactly when every read gives the same result on both.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import struct_pb2 as structpb
from hypothesis import given, settings
from hypothesis import strategies as st

from function.memo.memo import RECORDED_READERS, UNRECORDED_MEMBERS, Recorder, RecordingView
from function.memo.replay import Sources, compile_reads
from function.shared import observed
from function.shared.observed import View
from hack import example_stages
from harness.example_sets import example_sets

NAMES = ["spec", "status", "conditions", "atProvider", "id", "manifest", "type", "status"]
LONG = "k" * 80  # kept as a digest, not as text

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from(["", "True", "False", "Ready", "Synced", LONG, LONG + "x"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(NAMES), inner, max_size=4),
    ),
    max_leaves=12,
)
objects = st.dictionaries(st.sampled_from(NAMES), values, max_size=5)
paths = st.lists(st.one_of(st.sampled_from(NAMES), st.integers(-1, 2)), max_size=4).map(tuple)
# (accessor, child path, path or condition type, default)
Script = list[tuple[str, Any, Any, Any]]
Object = dict[str, Any] | None
reads = st.lists(
    st.tuples(
        # Every recorded reader (the memo's table), and condition_status at another path.
        st.sampled_from([*sorted(RECORDED_READERS), "condition_at"]),
        paths,
        st.one_of(paths, st.sampled_from(["Ready", "Synced"])),
        st.sampled_from([None, "fallback", 0]),
    ),
    max_size=12,
)


def run_reads(view: View, script: Script) -> list[Any]:
    """What a core reading script through view would see."""
    seen: list[Any] = []
    for accessor, child_path, arg, default in script:
        target = view.child(*child_path) if child_path else view
        if accessor in ("string", "has"):
            seen.append(getattr(target, accessor)(*arg) if isinstance(arg, tuple) else None)
        elif accessor == "get":
            seen.append(target.get(*arg, default=default) if isinstance(arg, tuple) else None)
        elif accessor == "exists":
            seen.append(target.exists)
        elif accessor == "condition_at":
            at = arg if isinstance(arg, tuple) else ("conditions",)
            seen.append(target.condition_status("Ready", at=at))
        elif accessor == "condition_status":
            seen.append(target.condition_status(arg) if isinstance(arg, str) else None)
        else:
            raise AssertionError(f"a reader this test does not drive: {accessor}")
    return seen


def struct(data: Object) -> structpb.Struct | None:
    return View.from_dict(data)._struct if data is not None else None


def replays_on(first: Object, second: Object, script: Any) -> tuple[bool, bool]:
    """(whether the plan recorded on first holds on second, whether View reads alike)."""
    recorder = Recorder()
    run_reads(RecordingView(struct(first), recorder, ("status",)), script)
    plan, wants = compile_reads(recorder.reads)
    holds = Sources({}, View(struct(second)), {}).replays(plan, wants)
    alike = run_reads(View(struct(first)), script) == run_reads(View(struct(second)), script)
    return holds, alike


@settings(max_examples=400, deadline=None)
@given(first=objects, second=objects, script=reads)
def test_plan_holds_exactly_when_view_reads_alike(
    first: dict[str, Any], second: dict[str, Any], script: Any
) -> None:
    holds, alike = replays_on(first, second, script)
    assert holds == alike


@settings(max_examples=200, deadline=None)
@given(first=objects, script=reads)
def test_plan_holds_on_the_object_it_was_recorded_on(first: dict[str, Any], script: Any) -> None:
    assert replays_on(first, first, script) == (True, True)


CONDITIONS = {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}

# (first, second, reads, whether the plan holds): the edges a generator finds rarely.
EDGES: list[tuple[Object, Object, Script, bool]] = [
    (CONDITIONS, None, [("exists", (), (), None)], False),
    (None, None, [("string", (), ("spec",), None)], True),
    (CONDITIONS, {"status": {"conditions": []}}, [("condition_status", (), "Ready", None)], False),
    (
        CONDITIONS,
        {"status": {"conditions": [{"type": "Ready", "status": "Maybe"}]}},
        [("condition_status", (), "Synced", None)],
        True,
    ),
    (
        {"spec": {"id": LONG}},
        {"spec": {"id": LONG + "x"}},
        [("string", (), ("spec", "id"), 0)],
        False,
    ),
    ({"spec": {"id": [1, 2]}}, {"spec": {"id": [1, 2.0]}}, [("get", (), ("spec", "id"), 0)], True),
    ({"spec": {"id": [1, 2]}}, {"spec": {"id": [2, 1]}}, [("get", (), ("spec", "id"), 0)], False),
    ({"spec": {"id": None}}, {"spec": {}}, [("get", ("spec",), ("id",), "fallback")], True),
    ({"spec": {"id": None}}, {"spec": {}}, [("has", ("spec",), ("id",), None)], True),
    ({"spec": {"id": ""}}, {"spec": {}}, [("has", (), ("spec", "id"), None)], False),
    (
        {"spec": {"id": [{"a": 1}]}},
        {"spec": {"id": [{"a": 2}]}},
        [("get", (), ("spec", "id", 0, "a"), 0)],
        False,
    ),
]


@pytest.mark.parametrize(("first", "second", "script", "holds"), EDGES)
def test_plan_edges(first: Any, second: Any, script: Any, holds: bool) -> None:
    assert replays_on(first, second, script) == (holds, holds)


def public_members(cls: type) -> set[str]:
    return {name for name in vars(cls) if not name.startswith("_")}


def test_every_reader_of_view_is_recorded() -> None:
    """A reader View gains fails here until the memo's table names it and RecordingView records
    it; the property tests above then drive it (run_reads refuses one it does not know)."""
    assert public_members(View) == set(RECORDED_READERS) | UNRECORDED_MEMBERS
    assert set(RECORDED_READERS) | {"child"} <= public_members(RecordingView)
    script = [
        (reader, (), "Ready" if reader == "condition_status" else ("status",), None)
        for reader in sorted(RECORDED_READERS)
    ]
    recorder = Recorder()
    run_reads(RecordingView(struct(CONDITIONS), recorder, ("status",)), script)
    assert sorted({check for _, _, check, _, _ in recorder.reads}) == sorted(
        set(RECORDED_READERS.values())
    )


def test_no_composition_mutates_what_view_get_hands_out(tmp_path: Path) -> None:
    """View.get hands out objects and lists from a cache shared between calls and XRs, which
    compose code may put into desired state. Every example set is taken through its whole life
    (hack/example_stages.py's reconciles, its files written under tmp_path); then each cached
    value is still exactly what its bytes decode to: no composition changed one in place."""
    observed._PLAIN._entries.clear()
    for example in example_sets():
        example_stages.generate(dataclasses.replace(example, stages=tmp_path / example.name))
    cached = observed._PLAIN._entries
    assert cached, "no composition read an object or list through View.get"
    for key, (value, _) in cached.items():
        assert value == observed._to_python(structpb.Value.FromString(key)), key[:80]
