"""Answer a converged XR's reconcile with its previous answer when nothing the core read changed.

A core is a pure function of the values it reads: the XR's identity and spec, the step input,
and fields of observed resources, required resources and the XR's status, all read through
View. While a core runs, the views below record every read (which object, which path, which
accessor) and what it returned; replay.py compiles them into a plan. The next request for the
same XR, in the same pass of Crossplane's requirements loop, with the same spec and step input
replays the plan against the new request: if each read returns what it returned before,
the core would take the same path and compose the same Outcome, so the response written last
time is reused byte for byte. Any difference (a condition, a live field, a required Secret) and
the core runs again. What the recorded reads never touch (metadata noise, resourceVersions,
managedFields) cannot make a reconcile miss, so the cost of a converged reconcile is the reads,
not the composing, however many XRs the function serves.
"""

from __future__ import annotations

import dataclasses
import hashlib
import zlib
from collections.abc import Iterator, Mapping
from typing import Any

from google.protobuf import struct_pb2 as structpb

from function.memo.replay import (
    CONDITION,
    GET,
    HAS,
    IS_OBJECT,
    OBSERVED_KEYS,
    REQUIRED_COUNT,
    STRING,
    Plan,
    Read,
    Source,
    Sources,
    SubtreeDigest,
    is_subtree,
)
from function.shared.cache import LRU
from function.shared.observed import Observed, View

# The memo holds one entry per XR and pass. Bounded by memory: an entry costs its packed response
# (under 1 KiB for an 8-pool XR) plus the results its checks want (about 3.5 KiB counted). Under
# round_robin every replica sees every XR, so one replica's memo must hold the whole fleet
# (docs/operations.md, "Memory", has what was measured to fit); --memo-mib sets another size.
MEMO_BYTES = 64 * 1024 * 1024
# One dictionary per core; the cores are few (tests swap in more).
_DICTIONARIES = 8
# zlib uses at most the last 32 KiB of a dictionary.
_DICTIONARY_BYTES = 32 * 1024
# Bytes one expected result costs beyond its text (a reference, an object header).
_WANT_BYTES = 64


# One pass of an XR's reconcile: apiVersion, kind, namespace, name, and the names of the
# required resources the request carries. Crossplane calls a function once per pass of its
# requirements loop (a converged CoreWeaveCluster: a first pass without the credentials, a
# second with them); each pass is answered from its own entry, or they would evict each other.
Pass = tuple[str, str, str, str, str]


# Every View reader a core can call, and the check the recorder logs for it (replay.py's _holds
# answers each check as View does). A reader View gains must be recorded, or a memo hit could
# replay an answer whose core would now read something else: tests/test_replay.py fails until
# it is here and RecordingView records it.
RECORDED_READERS = {
    "exists": IS_OBJECT,
    "get": GET,
    "string": STRING,
    "has": HAS,
    "condition_status": CONDITION,
}
# View's other public members, none of which reads past a recorded reader: `ready` is
# condition_status("Ready"), `child` a RecordingView of the subtree, `from_dict` a constructor.
UNRECORDED_MEMBERS = frozenset({"ready", "child", "from_dict"})


class Recorder:
    """The reads one core run made, in order."""

    __slots__ = ("reads",)

    def __init__(self) -> None:
        self.reads: list[Read] = []


class RecordingView(View):
    """A View that records every read made through it (and through views derived from it), by
    its whole path from the object's root."""

    __slots__ = ("_path", "_recorder", "_source")

    def __init__(
        self,
        struct: structpb.Struct | None,
        recorder: Recorder,
        source: Source,
        path: tuple[str | int, ...] = (),
    ) -> None:
        super().__init__(struct)
        self._recorder, self._source, self._path = recorder, source, path

    def _record(self, path: tuple[str | int, ...], check: str, extra: Any, result: Any) -> Any:
        if check == IS_OBJECT or (path and isinstance(path[0], str)):
            self._recorder.reads.append((self._source, self._path + path, check, extra, result))
        # else: a view (the object, or a child, which is one) answers an empty path, or one that
        # starts with a list index, as missing whatever it holds: nothing to check again.
        return result

    @property
    def exists(self) -> bool:
        return bool(self._record((), IS_OBJECT, None, View.exists.fget(self)))  # type: ignore[attr-defined]

    def get(self, *path: str | int, default: Any = None) -> Any:
        result = View.get(self, *path, default=default)
        value = self._value(path)
        # An object or list read whole is replayed as the digest of its serialization.
        seen = (
            SubtreeDigest.of(value)
            if isinstance(value, structpb.Value) and is_subtree(value)
            else result
        )
        self._record(path, GET, default, seen)
        return result

    def string(self, *path: str | int) -> str | None:
        result: str | None = self._record(path, STRING, None, View.string(self, *path))
        return result

    def has(self, *path: str | int) -> bool:
        return bool(self._record(path, HAS, None, View.has(self, *path)))

    def condition_status(
        self, condition_type: str, at: tuple[str, ...] = ("status", "conditions")
    ) -> str:
        result: str = self._record(
            at, CONDITION, condition_type, View.condition_status(self, condition_type, at)
        )
        return result

    def child(self, *path: str | int) -> View:
        plain = View.child(self, *path)
        if not path:
            return plain  # always absent: nothing read through it depends on the request
        return RecordingView(plain._struct, self._recorder, self._source, self._path + path)


class RecordingObserved(Observed):
    __slots__ = ("_recorder",)

    def __init__(self, resources: Mapping[str, structpb.Struct], recorder: Recorder) -> None:
        super().__init__(resources)
        self._recorder = recorder

    def __getitem__(self, key: str) -> View:
        return RecordingView(self._resources.get(key), self._recorder, ("observed", key))

    def __contains__(self, key: object) -> bool:
        return key in tuple(self.keys())

    def keys(self) -> Iterator[str]:
        keys = tuple(sorted(self._resources))
        self._recorder.reads.append(((OBSERVED_KEYS,), (), OBSERVED_KEYS, None, keys))
        return iter(keys)


class RecordingRequired(Mapping[str, "list[View] | None"]):
    """Required resources by requirement name, recording which were resolved and how many."""

    def __init__(self, required: Mapping[str, list[View] | None], recorder: Recorder) -> None:
        self._required, self._recorder = required, recorder

    def __getitem__(self, name: str) -> list[View] | None:
        items = self._required.get(name)
        count = None if items is None else len(items)
        self._recorder.reads.append(((REQUIRED_COUNT,), (), REQUIRED_COUNT, name, count))
        if name not in self._required:
            raise KeyError(name)
        if items is None:
            return None
        return [
            RecordingView(item._struct, self._recorder, ("required", name, index))
            for index, item in enumerate(items)
        ]

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._required))

    def __len__(self) -> int:
        return len(self._required)


@dataclasses.dataclass(frozen=True, slots=True)
class Entry:
    """One XR's last answer and what it depended on."""

    core: object  # the core that composed it
    spec_digest: bytes  # of the XR's spec, serialized
    config: object  # the validated step input; parsed inputs are shared, so `is` compares
    plan: Plan
    wants: tuple[Any, ...]
    response: bytes  # the response fields the core's Outcome wrote, compressed
    dictionary: bytes  # the zlib dictionary it was compressed with (shared, see Memo.pack)
    keys: frozenset[str]  # its composed resource keys
    counts: tuple[int, int, str]  # resources, results, worst severity: the log line, metrics

    def unpacked(self) -> bytes:
        return zlib.decompressobj(zdict=self.dictionary).decompress(self.response)

    @property
    def size(self) -> int:
        """Bytes it holds, about: its response and the results its checks want (the plan and
        the dictionary are shared)."""
        wants = sum(
            _WANT_BYTES + (len(repr(want)) if isinstance(want, str | bytes | tuple) else 0)
            for want in self.wants
        )
        return len(self.response) + len(self.spec_digest) + wants


class Memo:
    """The last answer per XR and pass of the requirements loop, bounded by memory."""

    def __init__(self, max_bytes: int) -> None:
        self._entries: LRU[Entry] = LRU(max_bytes, cost=lambda key, entry: len(key) + entry.size)
        self._dictionaries: dict[object, bytes] = {}

    def pack(self, core: object, response: bytes) -> tuple[bytes, bytes]:
        """response compressed, and the dictionary to unpack it with.

        A core's largest response so far (a converged XR's, usually) is the dictionary for its
        later ones: XRs of one kind differ mostly in names, so a fleet member's response packs
        to a fraction of what it packs to alone. Entries keep the dictionary they were packed
        with.
        """
        dictionary = self._dictionaries.get(core)
        if dictionary is None or len(dictionary) < min(len(response), _DICTIONARY_BYTES):
            if dictionary is None and len(self._dictionaries) >= _DICTIONARIES:
                self._dictionaries.pop(next(iter(self._dictionaries)))
            dictionary = self._dictionaries[core] = response[-_DICTIONARY_BYTES:]
        packer = zlib.compressobj(zdict=dictionary)
        return packer.compress(response) + packer.flush(), dictionary

    def lookup(
        self,
        xr: Pass,
        core: object,
        spec_key: bytes,
        config: object,
        new: Sources,
    ) -> Entry | None:
        """The XR's last answer if the same core, spec, step input and reads would give it."""
        entry = self._entries.get(_key(xr))
        if (
            entry is None
            or entry.core is not core
            or entry.config is not config
            or entry.spec_digest != spec_digest(spec_key)
        ):
            return None
        return entry if new.replays(entry.plan, entry.wants) else None

    def remember(self, xr: Pass, entry: Entry) -> None:
        self._entries.put(_key(xr), entry)

    def __len__(self) -> int:
        return len(self._entries)


def spec_digest(spec_key: bytes) -> bytes:
    """A spec's identity in 16 bytes instead of its whole serialization (a cryptographic digest:
    no two specs met in practice share one)."""
    return hashlib.blake2b(spec_key, digest_size=16).digest()


def _key(xr: Pass) -> bytes:
    return "\x00".join(xr).encode()
