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

# Python objects built from serialized data take many times its size (object headers, dicts,
# pydantic models): measured with tracemalloc on the bench's 8-pool specs, about 16 times.
PARSED_BYTES_PER_KEY_BYTE = 16


def content_key(data: Any) -> bytes | None:
    """The key for plain data, or None for data marshal cannot encode (never cached)."""
    try:
        return marshal.dumps(data)
    except ValueError:
        return None


class LRU(Generic[V]):
    """A least-recently-used map bounded by the memory its entries hold, not by their count:
    memory stays flat however many XRs a function serves and however large their objects."""

    __slots__ = ("_cost", "_entries", "_max_bytes", "_total")

    def __init__(self, max_bytes: int, cost: Callable[[bytes, V], int]) -> None:
        self._entries: OrderedDict[bytes, tuple[V, int]] = OrderedDict()
        self._max_bytes, self._cost, self._total = max_bytes, cost, 0

    def get(self, key: bytes) -> V | None:
        hit = self._entries.get(key)
        if hit is None:
            return None
        self._entries.move_to_end(key)
        return hit[0]

    def put(self, key: bytes, value: V) -> None:
        cost = self._cost(key, value)
        if cost > self._max_bytes:
            return  # would evict everything else and still not fit
        previous = self._entries.pop(key, None)
        if previous is not None:
            self._total -= previous[1]
        self._entries[key] = (value, cost)
        self._total += cost
        while self._total > self._max_bytes:
            _, (_, evicted) = self._entries.popitem(last=False)
            self._total -= evicted

    @property
    def held_bytes(self) -> int:
        return self._total

    def __len__(self) -> int:
        return len(self._entries)


class ParseCache(Generic[V]):
    """Validated specs by content: a converged XR's spec is validated once, not per reconcile.

    Remembers the `remembered` exception a parser raises too, and re-raises a copy, so no
    traceback piles up on a shared instance.
    """

    __slots__ = ("_remembered", "_results")

    def __init__(self, max_bytes: int, remembered: type[Exception]) -> None:
        # A validated value is a few pydantic models; a spec's serialized size times
        # PARSED_BYTES_PER_KEY_BYTE bounds what it holds.
        self._results: LRU[tuple[V | None, Exception | None]] = LRU(
            max_bytes, cost=lambda key, _: len(key) * PARSED_BYTES_PER_KEY_BYTE
        )
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
