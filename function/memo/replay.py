"""Recorded reads compiled into a plan, and replayed against a new request.

A core's reads (recorded by the views in memo.py) are compiled per object into a trie of field
names with the checks hanging off it: every field on a path is looked up once however many
reads pass through it, a read repeated within one run is checked once, and a check compares
what the new request holds with what the core saw, without building any View. Subtrees the
core read as a whole (a live StorageClass, the autoscaling groups) are compared as digests of
their exact serialization, never converted to Python.

Replaying a plan answers exactly what re-running the same reads through View would: each check
below answers one of View's readers (memo.RECORDED_READERS names which), and
tests/test_replay.py fails on a reader the table lacks and compares every reader's replay with
View's own answer.
"""

from __future__ import annotations

import dataclasses
import hashlib
import sys
from collections.abc import Mapping
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2 as structpb

from function.shared.cache import LRU, PARSED_BYTES_PER_KEY_BYTE, content_key
from function.shared.observed import View, _to_python, condition_in

# Where a read came from: ("observed", key), ("status",) or ("required", name, index).
Source = tuple[str | int, ...]
# One read: its source, the whole path from the source's root, the check, its extra argument (a
# default or a condition type) and what it gave.
Read = tuple[Source, tuple[str | int, ...], str, Any, Any]

# Sources that are not objects: the required resources' presence and the observed keys.
REQUIRED_COUNT = "required-count"
OBSERVED_KEYS = "observed-keys"

# Checks, one per View accessor.
STRING = "string"  # View.string at the path
HAS = "has"  # View.has at the path
GET = "get"  # View.get at the path, extra = its default
IS_OBJECT = "exists"  # View.child(path).exists (the object itself at the root)
CONDITION = "condition"  # condition_status(extra) on the conditions list at the path

# Short strings recur across every XR of a fleet ("True", instance types): one copy of each.
_INTERNED_LENGTH = 64


class Digest(bytes):
    """A long string read, kept as its 16-byte BLAKE2b digest: equal digests are equal text in
    any practice, and a recorded kubeconfig or Secret value need not stay in memory."""

    @classmethod
    def of(cls, text: str) -> Digest:
        return cls(hashlib.blake2b(text.encode(), digest_size=16).digest())


class SubtreeDigest(bytes):
    """An object or list read whole, kept as the digest of its deterministic serialization."""

    @classmethod
    def of(cls, value: structpb.Value) -> SubtreeDigest:
        serialized = value.SerializeToString(deterministic=True)
        return cls(hashlib.blake2b(serialized, digest_size=16).digest())


def is_subtree(value: structpb.Value | None) -> bool:
    return value is not None and value.WhichOneof("kind") in ("struct_value", "list_value")


# A check compiled into a trie node: (check, extra, index of its wanted result).
Leaf = tuple[str, Any, int]
# A trie level: (field name, checks on that field's value, the level below it).
Trie = tuple[tuple[str, tuple[Leaf, ...], "Trie"], ...]
# Checks of one object: its source, the checks on the object itself, and the trie of its fields.
# Paths through list items are rare enough to be checked one by one: `stepwise`.
ObjectPlan = tuple[Source, tuple[Leaf, ...], Trie, tuple[tuple[tuple[str | int, ...], Leaf], ...]]
Plan = tuple[ObjectPlan, ...]

# Distinct plans are a few per kind and spec shape, each a few KiB; XRs of one fleet share them.
_PLANS: LRU[Plan] = LRU(2 * 1024 * 1024, cost=lambda key, _: len(key) * PARSED_BYTES_PER_KEY_BYTE)


def wanted(result: Any) -> Any:
    """What a replay must give again for a read that gave result, as the plan keeps it."""
    if isinstance(result, str):
        return sys.intern(result) if len(result) <= _INTERNED_LENGTH else Digest.of(result)
    return result


@dataclasses.dataclass
class _Node:
    leaves: list[Leaf] = dataclasses.field(default_factory=list)
    children: dict[str, _Node] = dataclasses.field(default_factory=dict)

    def frozen(self) -> Trie:
        return tuple(
            (name, tuple(child.leaves), child.frozen()) for name, child in self.children.items()
        )


def compile_reads(reads: list[Read]) -> tuple[Plan, tuple[Any, ...]]:
    """The reads as a plan (shared between XRs that read alike) and the results its checks
    must give again, indexed by the checks."""
    wants: list[Any] = []
    roots: dict[Source, _Node] = {}
    stepwise: dict[Source, list[tuple[tuple[str | int, ...], Leaf]]] = {}
    seen: set[tuple[Source, tuple[str | int, ...], str, str]] = set()
    for source, path, check, extra, result in reads:
        once = (source, path, check, repr(extra))
        if once in seen:
            continue  # the same read in one run gave the same result
        seen.add(once)
        leaf = (check, extra, len(wants))
        wants.append(wanted(result))
        root = roots.setdefault(source, _Node())
        if all(isinstance(step, str) for step in path):
            node = root
            for step in path:
                node = node.children.setdefault(str(step), _Node())
            node.leaves.append(leaf)
        else:
            stepwise.setdefault(source, []).append((path, leaf))
    plan = tuple(
        (source, tuple(root.leaves), root.frozen(), tuple(stepwise.get(source, ())))
        for source, root in roots.items()
    )
    key = content_key(plan)
    shared = _PLANS.get(key) if key is not None else None
    if shared is None:
        if key is not None:
            _PLANS.put(key, plan)
        shared = plan
    return shared, tuple(wants)


def _holds(value: structpb.Value | None, check: str, extra: Any, want: Any) -> bool:
    """Whether the check on the value at its path (None: nothing there) gives want."""
    got: Any
    if check == STRING:
        got = (value.string_value or None) if value is not None else None
        if isinstance(want, Digest):
            return got is not None and Digest.of(got) == want
        return bool(got == want)
    if check == CONDITION:
        return bool(condition_in(value, extra) == want)
    if check == HAS:
        return bool((value is not None and value.WhichOneof("kind") != "null_value") == want)
    if check == IS_OBJECT:
        return bool((value is not None and value.WhichOneof("kind") == "struct_value") == want)
    if value is not None and is_subtree(value):
        return isinstance(want, SubtreeDigest) and SubtreeDigest.of(value) == want
    got = _to_python(value) if value is not None else None
    return bool((extra if got is None else got) == want)


# A missing object: lookups in its fields find nothing (and never insert: only .get is used).
_NO_OBJECT = structpb.Struct()
_NO_FIELDS = _NO_OBJECT.fields


def _trie_holds(fields: Any, trie: Trie, wants: tuple[Any, ...]) -> bool:
    """Whether every check in trie holds on a Struct's fields."""
    for name, leaves, below in trie:
        value = fields.get(name)
        for check, extra, index in leaves:
            want = wants[index]
            if check == STRING:
                # _holds' STRING branch, inline: the commonest check, and the call it saves is
                # about 8 % of a CoreWeave replay (100 vs 108-119 µs in a hot loop).
                got = (value.string_value or None) if value is not None else None
                if got == want or (
                    isinstance(want, Digest) and got is not None and Digest.of(got) == want
                ):
                    continue
                return False
            if not _holds(value, check, extra, want):
                return False
        # A Value that holds no object reads as an empty one: its fields find nothing either.
        if below and not _trie_holds(
            value.struct_value.fields if value is not None else _NO_FIELDS, below, wants
        ):
            return False
    return True


def _value_at(struct: structpb.Struct | None, path: tuple[str | int, ...]) -> Any:
    value = View(struct)._value(path)
    return value if isinstance(value, structpb.Value) else None


@dataclasses.dataclass(frozen=True, slots=True)
class Sources:
    """Where replayed reads look in the new request."""

    observed: Mapping[str, fnv1.Resource]  # the request's observed resources, as sent
    status: View
    required: Mapping[str, list[View] | None]

    def struct(self, source: Source) -> structpb.Struct | None:
        kind = source[0]
        if kind == "observed":
            resource = self.observed.get(str(source[1]))
            return resource.resource if resource is not None else None
        if kind == "status":
            return self.status._struct
        items = self.required.get(str(source[1]))
        index = int(source[2])
        return items[index]._struct if items is not None and index < len(items) else None

    def replays(self, plan: Plan, wants: tuple[Any, ...]) -> bool:
        """Whether every check of plan gives the result wants holds for it."""
        for source, own, trie, stepwise in plan:
            kind = source[0]
            if kind == REQUIRED_COUNT:
                # Leaves (REQUIRED_COUNT, requirement name, index): None unresolved, else how many.
                for _, name, index in own:
                    items = self.required.get(name)
                    if (None if items is None else len(items)) != wants[index]:
                        return False
                continue
            if kind == OBSERVED_KEYS:
                if tuple(sorted(self.observed)) != wants[own[0][2]]:
                    return False
                continue
            struct = self.struct(source)
            # At an object's root only `exists` is recorded (memo.RecordingView._record: View
            # answers every other accessor there as missing, whatever the request holds).
            for _, _, index in own:
                if (struct is not None) != wants[index]:
                    return False
            if trie and not _trie_holds(
                struct.fields if struct is not None else _NO_FIELDS, trie, wants
            ):
                return False
            for path, (check, extra, index) in stepwise:
                if not _holds(_value_at(struct, path), check, extra, wants[index]):
                    return False
        return True
