"""A DNS server for one name, so that one gRPC endpoint resolves to several function processes.

Crossplane dials a function's `status.endpoint` with gRPC's `round_robin` policy over every
address the name resolves to (in a cluster: a headless Service's Pods). gRPC's dns resolver
takes its DNS server from the target's authority, `dns://127.0.0.1:<port>/<name>:<port>`, so
this server answers for that name without touching the machine's resolver configuration: A
queries get the given IPv4 addresses, every other query for any name an empty NOERROR answer
(no AAAA addresses, no `_grpc_config` TXT service config).
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import struct
import threading

# Short: a test that changes the addresses should not wait on a cached answer.
TTL_SECONDS = 5
_TYPE_A, _CLASS_IN = 1, 1
_HEADER = struct.Struct("!HHHHHH")


def _question_end(query: bytes) -> int:
    """Offset just past the first question's name, type and class."""
    at = _HEADER.size
    while query[at] != 0:
        at += 1 + query[at]
    return at + 1 + 4


def _name(query: bytes) -> str:
    labels, at = [], _HEADER.size
    while query[at] != 0:
        labels.append(query[at + 1 : at + 1 + query[at]].decode("ascii", "replace"))
        at += 1 + query[at]
    return ".".join(labels).lower()


def answer(query: bytes, name: str, addresses: list[str]) -> bytes:
    """The response to one query."""
    ident, flags, _, _, _, _ = _HEADER.unpack_from(query)
    end = _question_end(query)
    qtype, qclass = struct.unpack_from("!HH", query, end - 4)
    records = b""
    count = 0
    if _name(query) == name.lower().rstrip(".") and (qtype, qclass) == (_TYPE_A, _CLASS_IN):
        for address in addresses:
            records += struct.pack("!HHHIH", 0xC00C, _TYPE_A, _CLASS_IN, TTL_SECONDS, 4)
            records += ipaddress.IPv4Address(address).packed
            count += 1
    # QR, authoritative, recursion available; the query's RD bit echoed; NOERROR.
    response_flags = 0x8000 | 0x0400 | (flags & 0x0100) | 0x0080
    return _HEADER.pack(ident, response_flags, 1, count, 0, 0) + query[_HEADER.size : end] + records


class NameServer:
    """Serves `name` -> `addresses` over UDP on 127.0.0.1 until stopped."""

    def __init__(self, name: str, addresses: list[str]) -> None:
        self.name, self.addresses = name, addresses
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.bind(("127.0.0.1", 0))
        self._socket.settimeout(0.2)
        self.port: int = self._socket.getsockname()[1]
        self.queries = 0
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="e2e-dns", daemon=True)

    def start(self) -> NameServer:
        self._thread.start()
        return self

    def _serve(self) -> None:
        while not self._stopping.is_set():
            try:
                query, peer = self._socket.recvfrom(512)
            except TimeoutError:
                continue
            except OSError:
                return
            with contextlib.suppress(IndexError, struct.error, OSError):
                self._socket.sendto(answer(query, self.name, self.addresses), peer)
                self.queries += 1

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=5)
        self._socket.close()
