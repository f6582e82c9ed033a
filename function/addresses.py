"""HOST:PORT addresses of the side ports (metrics, health probes), as the flags take them."""

from __future__ import annotations

# An empty host is every interface, as in Go's net.Listen (":8080").
EVERY_INTERFACE = "0.0.0.0"  # noqa: S104 - a pod's side ports serve every interface


def split(address: str) -> tuple[str, int]:
    """("0.0.0.0", 8080) for ":8080", ("::", 8080) for "[::]:8080", ("127.0.0.1", 9) for
    "127.0.0.1:9"; ValueError naming the address otherwise."""
    host, separator, port = address.rpartition(":")
    if not separator or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f'"{address}" is not HOST:PORT (e.g. ":8080" or "127.0.0.1:8080")')
    host = host.removeprefix("[").removesuffix("]")
    return host or EVERY_INTERFACE, int(port)


def for_grpc(address: str) -> str:
    """address as gRPC binds it: gRPC refuses an empty host (":8081")."""
    host, port = split(address)
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
