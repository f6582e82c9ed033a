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

import dataclasses
import threading
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    disable_created_metrics,
    start_http_server,
)

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
# function-sdk-go's default, and the port Crossplane declares as "metrics" on every package's
# runtime container.
DEFAULT_ADDRESS = ":8080"


class Metrics:
    """The function's series, in a registry of their own (beside the client library's process_*
    and python_* collectors), so that each test and each server counts from zero."""

    def __init__(self) -> None:
        # Prometheus reads counter resets from the samples; the client's *_created series would
        # double the scrape for nothing (process-wide, as the client allows).
        disable_created_metrics()  # type: ignore[no-untyped-call]
        self.registry = CollectorRegistry(auto_describe=True)
        ProcessCollector(registry=self.registry)
        PlatformCollector(registry=self.registry)
        GCCollector(registry=self.registry)
        calls = Counter(
            "inference_clusters_calls",
            "RunFunction calls answered, by the XR's kind and the worst severity the answer "
            "carries (internal faults are fatal).",
            ("kind", "result"),
            registry=self.registry,
        )
        seconds = Histogram(
            "inference_clusters_call_seconds",
            "Time each RunFunction call spent in the function, from the decoded request to the "
            "serialized answer.",
            ("kind",),
            buckets=CALL_SECONDS_BUCKETS,
            registry=self.registry,
        )
        memo = Counter(
            "inference_clusters_memo_answers",
            "Calls a composition core took, by whether the XR's previous answer was reused "
            "(hit) or the core composed afresh (miss).",
            ("kind", "outcome"),
            registry=self.registry,
        )
        self._errors = Counter(
            "inference_clusters_internal_errors",
            "Calls that failed inside the function (answered FATAL), by exception type.",
            ("kind", "error_type"),
            registry=self.registry,
        )
        # Every series of a bounded label set exists from the start, at zero: a rate() over a
        # series that appears only with its first event misses that event.
        self._calls = {(k, r): calls.labels(k, r) for k in KINDS for r in RESULTS}
        self._seconds = {k: seconds.labels(k) for k in KINDS}
        self._memo = {(k, o): memo.labels(k, o) for k in KINDS[:-1] for o in MEMO_OUTCOMES}

    def called(self, kind: str, result: str, seconds: float, memo: str | None) -> None:
        """One call answered: kind and result from KINDS and RESULTS; memo "hit", "miss", or
        None when no core took the call."""
        self._calls[kind, result].inc()
        self._seconds[kind].observe(seconds)
        if memo is not None:
            self._memo[kind, memo].inc()

    def internal_error(self, kind: str, error: BaseException) -> None:
        self._errors.labels(kind, type(error).__name__).inc()


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
