"""A DNS server for one name, so that one gRPC endpoint resolves to several function processes.

Crossplane dials a function's `status.endpoint` with gRPC's `round_robin` policy over every
address the name resolves to (in a cluster: a headless Service's Pods). gRPC's dns resolver
takes its DNS server from the target's authority, `dns://127.0.0.1:<port>/<name>:<port>`, so
this server answers for that name without touching the machine's resolver configuration: A
queries get the given IPv4 addresses, every other query for any name an empty NOERROR answer
(no AAAA addresses, no `_grpc_config` TXT service config).

The wire format and the UDP server are dnslib's; only the answer is ours.
"""

from __future__ import annotations

from dnslib import QTYPE, RR, A, DNSRecord
from dnslib.server import BaseResolver, DNSHandler, DNSLogger, DNSServer

# Short: a test that changes the addresses should not wait on a cached answer.
TTL_SECONDS = 5


# dnslib ships no type information, so to mypy its BaseResolver is Any.
class _OneName(BaseResolver):  # type: ignore[misc]
    def __init__(self, name: str, addresses: list[str]) -> None:
        self.name = name.lower().rstrip(".")
        self.addresses = addresses

    def resolve(self, request: DNSRecord, handler: DNSHandler) -> DNSRecord:
        reply = request.reply()
        question = request.q
        if str(question.qname).lower().rstrip(".") == self.name and question.qtype == QTYPE.A:
            for address in self.addresses:
                reply.add_answer(RR(question.qname, QTYPE.A, rdata=A(address), ttl=TTL_SECONDS))
        return reply


class NameServer:
    """Serves `name` -> `addresses` over UDP on 127.0.0.1 until stopped."""

    def __init__(self, name: str, addresses: list[str]) -> None:
        resolver = _OneName(name, addresses)
        # Quiet: dnslib logs every query and answer to stdout by default.
        self._server = DNSServer(
            resolver, address="127.0.0.1", port=0, logger=DNSLogger(logf=lambda _: None)
        )
        self.port: int = self._server.server.server_address[1]

    def start(self) -> NameServer:
        self._server.start_thread()
        return self

    def stop(self) -> None:
        self._server.stop()
        self._server.server.server_close()
