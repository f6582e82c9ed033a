"""Several function processes behind one endpoint, as a runtime's Deployment with replicas.

Each process listens on its own loopback address (127.0.0.2, 127.0.0.3, ...) and the same port;
a NameServer resolves one name to all of them, and the active revision's endpoint names that
name with the NameServer as its DNS authority. Crossplane's gRPC client then spreads its calls
over the processes with `round_robin`, as it does over a Service's Pods.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Iterator
from pathlib import Path

from harness.fixtures import free_port, listening

from .dns import NameServer
from .runtime import REPLICAS_HOST, FunctionRuntime

# A function process listens within a second or two; this is for a loaded machine.
LISTEN_SECONDS = 60


@dataclasses.dataclass(frozen=True)
class Replicas:
    endpoint: str
    logs: list[Path]  # each process's --debug log
    names: list[str]  # each process's name in the harness's ProcessGroup


@contextlib.contextmanager
def replicas(runtime: FunctionRuntime, count: int) -> Iterator[Replicas]:
    """count function processes serving the active revision; afterwards the runtime's own
    process serves it again."""
    addresses = [f"127.0.0.{2 + i}" for i in range(count)]
    port = free_port()
    names = [f"function-replica-{i}" for i in range(count)]
    processes = runtime.plane.processes
    name_server = NameServer(REPLICAS_HOST, addresses).start()
    try:
        started = [
            processes.start(
                name,
                runtime.function_argv(f"{address}:{port}"),
                env=runtime.side_ports_env(name),
                cwd=runtime.repo,
                ready=functools.partial(listening, address, port),
            )
            for name, address in zip(names, addresses, strict=True)
        ]
        for name in names:
            # Fails at once, with its log, if a replica exits instead.
            processes.wait_ready(name, LISTEN_SECONDS)
        endpoint = f"dns://127.0.0.1:{name_server.port}/{REPLICAS_HOST}:{port}"
        runtime.point_at(endpoint)
        yield Replicas(endpoint, [m.log for m in started], names)
    finally:
        runtime.point_at(runtime.endpoint)
        for name in names:
            processes.stop(name)
        name_server.stop()
