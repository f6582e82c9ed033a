"""Small content-keyed caches for the hot path.

A converged XR is reconciled again and again with the same spec and produces the same desired
objects; these caches let such a reconcile skip re-validation and re-encoding. Keys are the
marshal encoding of plain data (fast C code, exact: equal bytes mean equal content), so a cache
can never answer for different content.
"""

from __future__ import annotations

import copy
import marshal
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Generic, TypeVar

V = TypeVar("V")


def content_key(data: Any) -> bytes | None:
    """The key for plain data, or None for data marshal cannot encode (never cached)."""
    try:
        return marshal.dumps(data)
    except ValueError:
        return None


class LRU(Generic[V]):
    """A bounded least-recently-used map; memory stays flat however many XRs a function serves."""

    __slots__ = ("_entries", "_size")

    def __init__(self, size: int) -> None:
        self._entries: OrderedDict[bytes, V] = OrderedDict()
        self._size = size

    def get(self, key: bytes) -> V | None:
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def put(self, key: bytes, value: V) -> None:
        self._entries[key] = value
        if len(self._entries) > self._size:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)


class ParseCache(Generic[V]):
    """Validated specs by content: a converged XR's spec is validated once, not per reconcile.

    Remembers the `remembered` exception a parser raises too, and re-raises a copy, so no
    traceback piles up on a shared instance.
    """

    __slots__ = ("_remembered", "_results")

    def __init__(self, size: int, remembered: type[Exception]) -> None:
        self._results: LRU[tuple[V | None, Exception | None]] = LRU(size)
        self._remembered = remembered

    def parse(self, key: bytes | None, load: Callable[[], Any], parser: Callable[[Any], V]) -> V:
        """parser(load()), or the remembered outcome for content with this key."""
        if key is None:
            return parser(load())
        hit = self._results.get(key)
        if hit is None:
            try:
                hit = (parser(load()), None)
            except self._remembered as raised:
                hit = (None, raised)
            self._results.put(key, hit)
        value, problem = hit
        if problem is not None:
            raise copy.copy(problem)
        return value  # type: ignore[return-value]
