"""A request re-encoded as Crossplane puts it on the wire: every map's entries in a random order.

Crossplane computes a request's meta.tag from its deterministic encoding, but gRPC-go sends the
message with protobuf-go's default (non-deterministic) Marshal, which writes a map's entries in
Go's randomised map iteration order (google.golang.org/protobuf internal/impl/codec_map.go,
appendMap; google.golang.org/grpc encoding/proto). Every Struct is a map, so an XR's request sent
twice with the same content arrives as different bytes. tests/test_memo.py re-encodes a
converged request here to prove the memo answers such a repeat as a fresh composition would.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor

if TYPE_CHECKING:
    # A message class's DESCRIPTOR under protobuf's default (upb) implementation.
    from google._upb._message import Descriptor as UpbDescriptor

# Wire types (protobuf encoding): varint, length-delimited, and the fixed ones by their width.
_VARINT, _BYTES = 0, 2
_FIXED_WIDTH = {1: 8, 5: 4}  # 64-bit, 32-bit


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _fields(data: bytes) -> list[tuple[int, int, bytes, bytes]]:
    """(field number, wire type, key bytes, value) in wire order. A length-delimited field's
    value is its payload, without the length; any other field's is its encoded value."""
    found = []
    at = 0
    while at < len(data):
        key_start = at
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        key_bytes = data[key_start:at]
        if wire == _VARINT:
            _, end = _varint(data, at)
        elif wire in _FIXED_WIDTH:
            end = at + _FIXED_WIDTH[wire]
        elif wire == _BYTES:
            length, at = _varint(data, at)
            end = at + length
        else:
            raise ValueError(f"unsupported wire type {wire} in field {number}")
        found.append((number, wire, key_bytes, data[at:end]))
        at = end
    return found


def shuffled(data: bytes, descriptor: Descriptor | UpbDescriptor, rng: random.Random) -> bytes:
    """data, a message of type descriptor, with every map's entries in a random order (nested
    messages re-encoded the same way): equal to data as a message, as Crossplane sends it."""
    by_number: dict[int, Any] = {f.number: f for f in descriptor.fields}
    out: list[bytes] = []
    run: list[bytes] = []  # the current map's entries, contiguous on the wire
    run_number = -1

    def flush() -> None:
        rng.shuffle(run)
        out.extend(run)
        run.clear()

    for number, wire, key, value in _fields(data):
        field: Any = by_number.get(number)
        message = field is not None and field.type == FieldDescriptor.TYPE_MESSAGE
        if wire == _BYTES:
            body = shuffled(value, field.message_type, rng) if message else value
            encoded = key + _encode_varint(len(body)) + body
        else:
            encoded = key + value
        if run and number != run_number:
            flush()
        if message and field.message_type.GetOptions().map_entry:
            run.append(encoded)
            run_number = number
        else:
            out.append(encoded)
    flush()
    return b"".join(out)
