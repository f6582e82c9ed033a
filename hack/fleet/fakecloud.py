"""The harness's fake cloud (harness/e2e/fakeprovider.py) as the fleet uses it: its API
requests counted and its passes timed, to say how much of the API server's load and of the time
to Ready is the harness's own, and its loop slowed while the fleet is idle.

The fake providers walk every managed resource in one serial loop, 0.5 s apart, so that bring-up
moves about as fast as watch-driven providers would. A real provider reads a converged resource
from its informer cache and writes nothing; the fake's lists and reference reads would instead be
a large part of what the API server and etcd do in the idle window.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections.abc import Iterator
from typing import Any

from harness.e2e.controlplane import ControlPlane
from harness.e2e.fakeprovider import MANAGED_KINDS, FakeCloud
from harness.e2e.kube import Kube

# While the fleet is idle: a converged resource needs nothing from its provider, and this keeps
# the fake's requests a small part of the API server's work.
IDLE_LOOP_SECONDS = 10.0
# Each pass of the fake's loop begins by listing the first kind it manages.
PASS_START = MANAGED_KINDS[0].path()


class CountingKube(Kube):
    """The control plane's admin client, counting every request it sends and noting when each
    pass of the fake's loop begins."""

    def __init__(self, plane: ControlPlane) -> None:
        pki = plane.work / "pki"
        super().__init__(plane.api_port, plane.ca_file, pki / "admin.crt", pki / "admin.key")
        self._count = 0
        self._count_lock = threading.Lock()
        self._pass_starts: list[float] = []

    def pass_seconds(self, since: float, until: float) -> list[float]:
        """How long each pass that began between the two instants (monotonic) took, its wait
        included: how long a managed resource waited for its next step at most."""
        with self._count_lock:
            starts = [t for t in self._pass_starts if since <= t <= until]
        return [later - earlier for earlier, later in itertools.pairwise(starts)]

    @property
    def requests(self) -> int:
        with self._count_lock:
            return self._count

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = "application/json",
        query: dict[str, str] | None = None,
    ) -> Any:
        with self._count_lock:
            self._count += 1
            if method == "GET" and path == PASS_START:
                self._pass_starts.append(time.monotonic())
        return super().request(method, path, body, content_type, query)


@contextlib.contextmanager
def slowed(cloud: FakeCloud, seconds: float = IDLE_LOOP_SECONDS) -> Iterator[None]:
    """The fake cloud's loop waits `seconds` between passes inside the block (from the end of
    its current wait), its usual interval again after it."""
    usual = cloud.loop_interval_seconds
    cloud.loop_interval_seconds = seconds
    try:
        yield
    finally:
        cloud.loop_interval_seconds = usual
