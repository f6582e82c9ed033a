"""What the function counts about its own calls, served in the Prometheus text format.

Crossplane core already measures each call from its side (function_run_function_seconds,
function_run_function_request_total); these series say what happens inside: which kind is
slow, which answers are FATAL, how often the memo answers, which internal faults occur. Every
label value comes from a short fixed list, or from an exception's type name, so a scrape's size
stays bounded whatever the requests carry: no XR name, namespace, Secret or message is ever a
label.

The series are served on a plain-HTTP port of their own (--metrics-address), beside the gRPC
port whatever its transport security, as function-sdk-go serves its functions' metrics.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import threading
from collections.abc import Iterator
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    GCCollector,
    Metric,
    PlatformCollector,
    ProcessCollector,
    disable_created_metrics,
    start_http_server,
)
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from function import addresses

# The XR kinds a request can be labelled with; anything else a request names is "unsupported".
KINDS = ("CoreWeaveCluster", "CivoCluster", "unsupported")
# The worst severity among an answer's results ("none": it carries no result).
RESULTS = ("none", "normal", "warning", "fatal")
MEMO_OUTCOMES = ("hit", "miss")
# A memo hit takes about 50 µs in the function, a fresh composition about 1-5 ms (bench): the
# buckets resolve both, and a 10x slower call still lands in a bucket of its own.
CALL_SECONDS_BUCKETS = (
    0.000_05,
    0.000_1,
    0.000_25,
    0.000_5,
    0.001,
    0.002_5,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    1.0,
)
# The buckets' le labels, as the client library writes them ("+Inf": every call).
_BOUNDS = [floatToGoString(b) for b in CALL_SECONDS_BUCKETS] + ["+Inf"]  # type: ignore[no-untyped-call]
# function-sdk-go's default, and the port Crossplane declares as "metrics" on every package's
# runtime container.
DEFAULT_ADDRESS = ":8080"


class Metrics:
    """The function's series, in a registry of their own (beside the client library's process_*
    and python_* collectors), so that each test and each server counts from zero.

    Counted in plain dicts and lists, turned into series only when scraped: the client's own
    Counter and Histogram take a lock and touch several objects per update, which cost about
    25 µs per call inside a busy server (its caches cold after each composition; bench), plain
    counts about 10. Only the thread answering calls (the server's event loop) writes them; a
    scrape, from the HTTP thread, reads copies, and derives each histogram's count from its
    buckets so the two always agree.
    """

    def __init__(self) -> None:
        # Prometheus reads counter resets from the samples; the client's *_created series would
        # double the scrape for nothing (process-wide, as the client allows).
        disable_created_metrics()  # type: ignore[no-untyped-call]
        self.registry = CollectorRegistry(auto_describe=True)
        ProcessCollector(registry=self.registry)
        PlatformCollector(registry=self.registry)
        GCCollector(registry=self.registry)
        # Every series of a bounded label set exists from the start, at zero: a rate() over a
        # series that appears only with its first event misses that event.
        self.calls = dict.fromkeys(((k, r) for k in KINDS for r in RESULTS), 0)
        self.memo = dict.fromkeys(((k, o) for k in KINDS[:-1] for o in MEMO_OUTCOMES), 0)
        self.errors: dict[tuple[str, str], int] = {}
        # Per kind: calls per bucket (the first bound at or above the call's time; the last
        # slot, over every bound, is +Inf's alone), and the seconds they took.
        self.buckets = {k: [0] * (len(CALL_SECONDS_BUCKETS) + 1) for k in KINDS}
        self.seconds = dict.fromkeys(KINDS, 0.0)
        self.registry.register(_Series(self))

    def called(self, kind: str, result: str, seconds: float, memo: str | None) -> None:
        """One call answered: kind and result from KINDS and RESULTS; memo "hit", "miss", or
        None when no core took the call."""
        self.calls[kind, result] += 1
        self.buckets[kind][bisect.bisect_left(CALL_SECONDS_BUCKETS, seconds)] += 1
        self.seconds[kind] += seconds
        if memo is not None:
            self.memo[kind, memo] += 1

    def internal_error(self, kind: str, error: BaseException) -> None:
        key = (kind, type(error).__name__)
        self.errors[key] = self.errors.get(key, 0) + 1


def _counter(
    name: str, documentation: str, labels: tuple[str, ...], counts: dict[tuple[str, str], int]
) -> CounterMetricFamily:
    """A counter family of counts, read as a copy (the serving thread may add a key)."""
    family = CounterMetricFamily(name, documentation, labels=labels)
    for values, value in dict(counts).items():
        family.add_metric(values, value)
    return family


class _Series(Collector):
    """Metrics' counts as Prometheus series, built at each scrape."""

    def __init__(self, counts: Metrics) -> None:
        self.counts = counts

    def collect(self) -> Iterator[Metric]:
        counts = self.counts
        yield _counter(
            "inference_clusters_calls",
            "RunFunction calls answered, by the XR's kind and the worst severity the answer "
            "carries (internal faults are fatal).",
            ("kind", "result"),
            counts.calls,
        )
        seconds = HistogramMetricFamily(
            "inference_clusters_call_seconds",
            "Time each RunFunction call spent in the function, from the decoded request to the "
            "serialized answer.",
            labels=("kind",),
        )
        for kind in KINDS:
            per_bucket = list(counts.buckets[kind])
            cumulative = list(itertools.accumulate(per_bucket))
            seconds.add_metric(
                [kind], list(zip(_BOUNDS, cumulative, strict=True)), counts.seconds[kind]
            )
        yield seconds
        yield _counter(
            "inference_clusters_memo_answers",
            "Calls a composition core took, by whether the XR's previous answer was reused "
            "(hit) or the core composed afresh (miss).",
            ("kind", "outcome"),
            counts.memo,
        )
        yield _counter(
            "inference_clusters_internal_errors",
            "Calls that failed inside the function (answered FATAL), by exception type.",
            ("kind", "error_type"),
            counts.errors,
        )


@dataclasses.dataclass(frozen=True, slots=True)
class Endpoint:
    """A running metrics HTTP server."""

    server: Any  # prometheus_client's WSGI server
    thread: threading.Thread

    @property
    def port(self) -> int:
        port: int = self.server.server_port
        return port

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def serve(metrics: Metrics, address: str) -> Endpoint:
    """Serve metrics' registry at http://address/metrics from a daemon thread (raises OSError
    when the address cannot be bound)."""
    host, port = addresses.split(address)
    server, thread = start_http_server(port, addr=host, registry=metrics.registry)
    return Endpoint(server, thread)
