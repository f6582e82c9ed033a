"""The machine's busiest moment during bring-up: memory in use and the load average, sampled by a
thread while the fleet comes up."""

from __future__ import annotations

import os
import threading

import psutil

# Often enough to catch the peak of a bring-up that takes minutes, cheap enough to be free.
INTERVAL_SECONDS = 5


class Peak:
    """Samples memory in use and the 1-minute load average until stopped; keeps the maxima."""

    def __init__(self) -> None:
        self.memory_used_bytes = 0
        self.load = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fleet-peak", daemon=True)

    def __enter__(self) -> Peak:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=INTERVAL_SECONDS * 2)

    def _run(self) -> None:
        while True:
            self.memory_used_bytes = max(self.memory_used_bytes, psutil.virtual_memory().used)
            self.load = max(self.load, os.getloadavg()[0])
            if self._stop.wait(INTERVAL_SECONDS):
                return
