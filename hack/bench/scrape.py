"""Scraping the function's /metrics as Prometheus would, while the bench calls it.

A daemon thread GETs the endpoint every SCRAPE_INTERVAL_S from the first measured call to the
last, so the function pays for being scraped as it would in a pod, inside the CPU per
call the bench measures. The audit: no scrape's inference_clusters_calls_total (summed over
kind and result) runs ahead of the calls the bench had sent or goes back, and the last scrape,
taken after the last call, counts exactly the calls sent.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading

from prometheus_client.parser import text_string_to_metric_families

from hack.bench.servers import Server
from harness.e2e import operability

# The scrape_interval of Prometheus' example configuration, and the shortest interval commonly
# set on a ServiceMonitor: the most a real Prometheus asks of the function.
SCRAPE_INTERVAL_S = 15.0
# Prometheus' default scrape_timeout, and harness/e2e/operability.scrape's: a scrape that takes
# longer is a failed scrape.
SCRAPE_TIMEOUT_S = 10.0
CALLS_TOTAL = "inference_clusters_calls_total"
MEMO_TOTAL = "inference_clusters_memo_answers_total"


@dataclasses.dataclass(frozen=True, slots=True)
class Scrape:
    calls_counted: float  # inference_clusters_calls_total, summed over every series
    calls_sent: int  # by the bench when the scrape had returned: at least those counted
    memo: tuple[float, float]  # inference_clusters_memo_answers_total: (hits, misses), all kinds


def sum_series(text: str, name: str, labels: dict[str, str] | None = None) -> float:
    """The sum of a metric's samples in a scrape, over those matching every given label."""
    wanted = (labels or {}).items()
    total = 0.0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in wanted):
                total += sample.value
    return total


def scrape(server: Server) -> Scrape:
    """One GET of the server's /metrics (OSError or ValueError when it fails)."""
    text = operability.scrape(server.metrics_port)
    # Read after the answer: every call the function had counted was sent before.
    sent = server.sent
    hits, misses = (sum_series(text, MEMO_TOTAL, {"outcome": o}) for o in ("hit", "miss"))
    return Scrape(sum_series(text, CALLS_TOTAL), sent, (hits, misses))


@dataclasses.dataclass
class Audit:
    """The scrapes of one run, and whether they counted the calls the bench sent."""

    periodic: list[Scrape] = dataclasses.field(default_factory=list)
    final: Scrape | None = None  # after the last call
    failures: list[str] = dataclasses.field(default_factory=list)

    def problems(self) -> list[str]:
        found = [f"scrape failed: {failure}" for failure in self.failures]
        counts = [s.calls_counted for s in self.periodic]
        if any(later < earlier for earlier, later in itertools.pairwise(counts)):
            found.append(f"{CALLS_TOTAL} went back between scrapes")
        found.extend(
            f"a scrape counted {s.calls_counted:.0f} calls when {s.calls_sent} had been sent"
            for s in self.periodic
            if s.calls_counted > s.calls_sent
        )
        if self.final is None:
            found.append("no scrape after the last call")
        elif self.final.calls_counted != self.final.calls_sent:
            found.append(
                f"the last scrape counted {self.final.calls_counted:.0f} calls, "
                f"the bench sent {self.final.calls_sent}"
            )
        return found


class Scraper(threading.Thread):
    """Scrapes a server's metrics every SCRAPE_INTERVAL_S from a daemon thread, started at once,
    until finish()."""

    def __init__(self, server: Server) -> None:
        super().__init__(name="metrics-scraper", daemon=True)
        self.server, self.audit, self._stopping = server, Audit(), threading.Event()
        self.start()

    def run(self) -> None:
        # As Prometheus does: the first scrape one interval in, not at once.
        while not self._stopping.wait(SCRAPE_INTERVAL_S):
            taken = self._take()
            if taken is not None:
                self.audit.periodic.append(taken)

    def _take(self) -> Scrape | None:
        try:
            return scrape(self.server)
        except (OSError, ValueError) as error:
            self.audit.failures.append(f"{type(error).__name__}: {error}")
            return None

    def stop(self) -> None:
        self._stopping.set()
        self.join(timeout=SCRAPE_TIMEOUT_S * 2)

    def finish(self) -> Audit:
        """Stop the thread, then scrape once more: call after the server's last call."""
        self.stop()
        self.audit.final = self._take()
        return self.audit
