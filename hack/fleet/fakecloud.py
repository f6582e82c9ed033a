"""The harness's fake cloud (harness/e2e/fakeprovider.py) as the fleet uses it: its loop slowed
while the fleet is idle.

The fake providers walk every managed resource in one serial loop, 0.5 s apart, so that bring-up
moves about as fast as watch-driven providers would. A real provider reads a converged resource
from its informer cache and writes nothing; the fake's lists and reference reads would instead be
a large part of what the API server and etcd do in the idle window.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from harness.e2e.fakeprovider import FakeCloud

# While the fleet is idle: a converged resource needs nothing from its provider, and this keeps
# the fake's requests a small part of the API server's work.
IDLE_LOOP_SECONDS = 10.0


@contextlib.contextmanager
def slowed(cloud: FakeCloud) -> Iterator[None]:
    """The fake cloud's loop waits IDLE_LOOP_SECONDS between passes inside the block (from the
    end of its current wait), its usual interval again after it."""
    usual = cloud.loop_interval_seconds
    cloud.loop_interval_seconds = IDLE_LOOP_SECONDS
    try:
        yield
    finally:
        cloud.loop_interval_seconds = usual
