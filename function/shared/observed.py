"""Read-only views over observed resources, kept as protobuf Structs.

Crossplane sends every observed composed resource whole; a reconcile needs a handful of fields
from each. Walking the Struct for just those fields avoids converting whole objects to dicts.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from google.protobuf import json_format
from google.protobuf import struct_pb2 as structpb

_MISSING = object()


def _to_python(value: structpb.Value) -> Any:
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
        return _normalise(json_format.MessageToDict(value.struct_value))
    if kind == "list_value":
        return _normalise(json_format.MessageToDict(value.list_value))
    return None


def _normalise(data: Any) -> Any:
    """Turn the floats MessageToDict produces for whole numbers back into ints."""
    if isinstance(data, float) and data.is_integer():
        return int(data)
    if isinstance(data, dict):
        return {k: _normalise(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_normalise(v) for v in data]
    return data


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
        if self._struct is None or not path:
            return _MISSING
        first = path[0]
        if not isinstance(first, str) or first not in self._struct.fields:
            return _MISSING
        value: structpb.Value = self._struct.fields[first]
        for step in path[1:]:
            kind = value.WhichOneof("kind")
            if isinstance(step, str) and kind == "struct_value":
                fields = value.struct_value.fields
                if step not in fields:
                    return _MISSING
                value = fields[step]
            elif isinstance(step, int) and kind == "list_value":
                values = value.list_value.values
                if not -len(values) <= step < len(values):
                    return _MISSING
                value = values[step]
            else:
                return _MISSING
        return value

    def get(self, *path: str | int, default: Any = None) -> Any:
        """The value at path as plain Python (dicts, lists, str, int, float, bool), or default."""
        value = self._value(path)
        if not isinstance(value, structpb.Value):
            return default
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

    def items(self, *path: str | int) -> Iterator[View]:
        """Each object in the list at path (non-objects are skipped)."""
        value = self._value(path)
        if isinstance(value, structpb.Value) and value.WhichOneof("kind") == "list_value":
            for item in value.list_value.values:
                if item.WhichOneof("kind") == "struct_value":
                    yield View(item.struct_value)

    def condition_status(self, condition_type: str) -> str:
        """status of the named condition: "True", "False" or "Unknown" when absent or garbled."""
        for condition in self.items("status", "conditions"):
            if condition.string("type") == condition_type:
                status = condition.string("status")
                return status if status in ("True", "False") else "Unknown"
        return "Unknown"

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

    @classmethod
    def from_dicts(cls, resources: Mapping[str, Mapping[str, Any]]) -> Observed:
        structs = {}
        for key, data in resources.items():
            struct = structpb.Struct()
            struct.update(dict(data))
            structs[key] = struct
        return cls(structs)

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
