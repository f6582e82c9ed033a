"""Read-only views over observed resources, kept as protobuf Structs.

Crossplane sends every observed composed resource whole; a reconcile needs a handful of fields
from each. Walking the Struct for just those fields avoids converting whole objects to dicts.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from google.protobuf import struct_pb2 as structpb

from function.shared.cache import LRU, PARSED_BYTES_PER_KEY_BYTE

_MISSING = object()
# Observed subtrees a reconcile reads as plain Python (a live StorageClass, VPC prefixes,
# autoscaling groups), by their exact serialized content: a few hundred bytes each.
_PLAIN: LRU[Any] = LRU(4 * 1024 * 1024, cost=lambda key, _: len(key) * PARSED_BYTES_PER_KEY_BYTE)


def _to_python(value: structpb.Value) -> Any:
    """Plain Python for a Struct Value, walking only the subtree asked for."""
    kind = value.WhichOneof("kind")
    if kind == "string_value":
        return value.string_value
    if kind == "number_value":
        number = value.number_value
        # Struct carries every number as a double; counts and ports are integers in Kubernetes.
        return int(number) if number.is_integer() else number
    if kind == "bool_value":
        return value.bool_value
    if kind == "struct_value":
        return struct_to_python(value.struct_value)
    if kind == "list_value":
        return [_to_python(item) for item in value.list_value.values]
    return None


def struct_to_python(struct: structpb.Struct, exclude: str | None = None) -> dict[str, Any]:
    """A Struct as a dict (optionally without one top-level key), numbers as ints where whole."""
    return {k: _to_python(v) for k, v in struct.fields.items() if k != exclude}


def condition_in(conditions: structpb.Value | None, condition_type: str) -> str:
    """status of the named condition in a status.conditions list: "True", "False", or "Unknown"
    when absent or garbled."""
    if conditions is None or not conditions.HasField("list_value"):
        return "Unknown"
    for item in conditions.list_value.values:
        if not item.HasField("struct_value"):
            continue
        fields = item.struct_value.fields
        kind = fields.get("type")
        if kind is None or kind.string_value != condition_type:
            continue
        status = fields.get("status")
        value = status.string_value if status is not None else ""
        return value if value in ("True", "False") else "Unknown"
    return "Unknown"


def condition_of(observed: View, condition_type: str) -> dict[str, Any] | None:
    """The object's condition of that type, whole, as its controller last reported it."""
    conditions = observed.get("status", "conditions")
    for condition in conditions if isinstance(conditions, list) else []:
        if isinstance(condition, dict) and condition.get("type") == condition_type:
            return condition
    return None


class View:
    """A path-addressable view of one observed object (or an absent one)."""

    __slots__ = ("_struct",)

    def __init__(self, struct: structpb.Struct | None) -> None:
        self._struct = struct

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> View:
        if data is None:
            return cls(None)
        struct = structpb.Struct()
        struct.update(dict(data))
        return cls(struct)

    @property
    def exists(self) -> bool:
        return self._struct is not None

    def _value(self, path: tuple[str | int, ...]) -> structpb.Value | object:
        struct = self._struct
        if struct is None or not path:
            return _MISSING
        value: structpb.Value | None = None
        for step in path:
            if isinstance(step, str):
                if value is not None:
                    if not value.HasField("struct_value"):
                        return _MISSING
                    struct = value.struct_value
                # .get, never []: indexing a protobuf map inserts the missing key.
                value = struct.fields.get(step)
                if value is None:
                    return _MISSING
            else:
                if value is None or not value.HasField("list_value"):
                    return _MISSING
                values = value.list_value.values
                if not -len(values) <= step < len(values):
                    return _MISSING
                value = values[step]
        return value

    def get(self, *path: str | int, default: Any = None) -> Any:
        """The value at path as plain Python (dicts, lists, str, int, float, bool), or default.

        Objects and lists come from a cache shared between calls: treat them as read-only.
        """
        value = self._value(path)
        if not isinstance(value, structpb.Value):
            return default
        if value.HasField("struct_value") or value.HasField("list_value"):
            key = value.SerializeToString(deterministic=True)
            result = _PLAIN.get(key)
            if result is None:
                result = _to_python(value)
                _PLAIN.put(key, result)
            return result
        result = _to_python(value)
        return default if result is None else result

    def string(self, *path: str | int) -> str | None:
        value = self._value(path)
        if isinstance(value, structpb.Value) and value.WhichOneof("kind") == "string_value":
            return value.string_value or None
        return None

    def has(self, *path: str | int) -> bool:
        value = self._value(path)
        return isinstance(value, structpb.Value) and value.WhichOneof("kind") != "null_value"

    def child(self, *path: str | int) -> View:
        value = self._value(path)
        if isinstance(value, structpb.Value) and value.WhichOneof("kind") == "struct_value":
            return View(value.struct_value)
        return View(None)

    def condition_status(
        self, condition_type: str, at: tuple[str, ...] = ("status", "conditions")
    ) -> str:
        """status of the named condition in the conditions list at `at` (an object's own by
        default; an XR status view's is at ("conditions",)): "True", "False", or "Unknown" when
        absent or garbled."""
        conditions = self._value(at)
        return condition_in(
            conditions if isinstance(conditions, structpb.Value) else None, condition_type
        )

    @property
    def ready(self) -> bool:
        """Observed Ready=True, the only signal that a managed resource or Object is usable."""
        return self.condition_status("Ready") == "True"


ABSENT = View(None)


class Observed:
    """Observed composed resources by composition resource name."""

    __slots__ = ("_resources",)

    def __init__(self, resources: Mapping[str, structpb.Struct]) -> None:
        self._resources = resources

    def __getitem__(self, key: str) -> View:
        struct = self._resources.get(key)
        return View(struct) if struct is not None else ABSENT

    def __contains__(self, key: str) -> bool:
        return key in self._resources

    def keys(self) -> Iterator[str]:
        return iter(self._resources)


# Required resources by requirement name. None: Crossplane has not resolved the requirement yet
# (first pass of the requirements loop); []: resolved, nothing matched.
Required = Mapping[str, list[View] | None]
