"""The function's Prometheus series, scraped from its HTTP endpoint after a known mix of calls:
exact counts per kind and result, memo hits and misses, internal errors by type, and label
values that stay bounded whatever a request carries."""

from __future__ import annotations

import copy
import threading
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from function import addresses, metrics, runner
from harness.fixtures import ORG_TOKEN, civo_xr, coreweave_xr, request
from tests.test_memo import converged_civo, converged_coreweave

Sample = tuple[str, tuple[tuple[str, str], ...]]
# A runner and the URL its metrics are scraped from.
Endpoint = tuple[runner.FunctionRunner, str]


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    """A runner counting into fresh metrics, served on a free loopback port."""
    counted = metrics.Metrics()
    served = metrics.serve(counted, "127.0.0.1:0")
    try:
        yield runner.FunctionRunner(metrics=counted), f"http://127.0.0.1:{served.port}/metrics"
    finally:
        served.close()


def scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as reply:  # noqa: S310 - a loopback URL
        assert reply.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        return str(reply.read().decode())


def samples(text: str) -> dict[Sample, float]:
    """Every sample of the function's own series, by name and sorted labels."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name.startswith("inference_clusters_"):
                found[sample.name, tuple(sorted(sample.labels.items()))] = sample.value
    return found


def counted(text: str) -> dict[Sample, float]:
    """The counters' non-zero samples and the histograms' counts (their sums vary)."""
    return {
        key: value
        for key, value in samples(text).items()
        if value and (key[0].endswith("_total") or key[0].endswith("_seconds_count"))
    }


def calls_total(kind: str, result: str) -> Sample:
    return "inference_clusters_calls_total", (("kind", kind), ("result", result))


def call_seconds_count(kind: str) -> Sample:
    return "inference_clusters_call_seconds_count", (("kind", kind),)


def memo_answers(kind: str, outcome: str) -> Sample:
    return "inference_clusters_memo_answers_total", (("kind", kind), ("outcome", outcome))


def mixed_calls() -> list[fnv1.RunFunctionRequest]:
    """One call of each kind of answer the function gives, in the order a test sends them."""
    coreweave = request(*converged_coreweave())
    civo_inputs = converged_civo()
    renamed = copy.deepcopy(civo_inputs[0])
    # The inline System pool cannot be renamed: a Warning, the rest composed.
    renamed["spec"]["nodePools"][0]["name"] = "system-b"
    unnamed = coreweave_xr()
    del unnamed["metadata"]["namespace"]
    return [
        coreweave,  # converged: no result, composed
        coreweave,  # the same again: answered by the memo
        request(civo_xr()),  # a first reconcile: Normal "waiting for the Civo cluster"
        request(renamed, *civo_inputs[1:]),
        request(unnamed),  # FATAL before any core runs
        request({**coreweave_xr(), "kind": "GKECluster"}),  # FATAL: no core for it
    ]


def test_a_known_mix_of_calls_is_counted_exactly(endpoint: Endpoint) -> None:
    served, url = endpoint
    calls = mixed_calls()
    # The endpoint's servicer has a memo of its own (not the one the fixtures converged
    # through): which calls it answers depends on this test's calls only.
    for req in calls:
        served.reply(req)
    assert counted(scrape(url)) == {
        calls_total("CoreWeaveCluster", "none"): 2,
        calls_total("CoreWeaveCluster", "fatal"): 1,
        calls_total("CivoCluster", "normal"): 1,
        calls_total("CivoCluster", "warning"): 1,
        calls_total("unsupported", "fatal"): 1,
        call_seconds_count("CoreWeaveCluster"): 3,
        call_seconds_count("CivoCluster"): 2,
        call_seconds_count("unsupported"): 1,
        memo_answers("CoreWeaveCluster", "hit"): 1,
        memo_answers("CoreWeaveCluster", "miss"): 1,
        memo_answers("CivoCluster", "miss"): 2,
    }
    seconds = samples(scrape(url))
    # Every call took some time in the function, and none took a second.
    for kind in metrics.KINDS:
        total = seconds["inference_clusters_call_seconds_sum", (("kind", kind),)]
        assert 0 < total < 1, (kind, total)


def test_an_internal_fault_is_fatal_and_counted_by_its_type(
    endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    served, url = endpoint

    def broken(*_: Any) -> Any:
        raise KeyError(ORG_TOKEN)  # its text must not become a label either

    key = next(k for k in runner.CORES if k[1] == "CivoCluster")
    monkeypatch.setitem(runner.CORES, key, broken)
    answer = fnv1.RunFunctionResponse.FromString(served.reply(request(civo_xr())))
    assert [r.severity for r in answer.results] == [fnv1.SEVERITY_FATAL]
    text = scrape(url)
    assert counted(text) == {
        calls_total("CivoCluster", "fatal"): 1,
        call_seconds_count("CivoCluster"): 1,
        (
            "inference_clusters_internal_errors_total",
            (("error_type", "KeyError"), ("kind", "CivoCluster")),
        ): 1,
    }
    assert ORG_TOKEN not in text


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [
        ("infrastructure.modelplane.ai/v1alpha1", "CoreWeaveClusterX"),
        ("infrastructure.modelplane.ai/v2", "CoreWeaveCluster"),  # a supported kind elsewhere
        ("", ""),
        ("x" * 300, 'Kind{with="labels"}\n'),
    ],
    ids=["unknown-kind", "other-version", "none", "hostile"],
)
def test_labels_stay_bounded_whatever_a_request_names(
    endpoint: Endpoint, api_version: str, kind: str
) -> None:
    served, url = endpoint
    xr = {**coreweave_xr(), "apiVersion": api_version, "kind": kind}
    xr["metadata"] = {**xr["metadata"], "name": "team-secret-name", "namespace": "team-private"}
    served.reply(request(xr))
    text = scrape(url)
    assert counted(text) == {
        calls_total("unsupported", "fatal"): 1,
        call_seconds_count("unsupported"): 1,
    }
    for private in ("team-secret-name", "team-private", "GPU", "US-EAST-04A"):
        assert private not in text


def test_every_bounded_series_exists_from_the_start(endpoint: Endpoint) -> None:
    """A rate() over a series that appears with its first event would miss that event."""
    _, url = endpoint
    found = samples(scrape(url))
    assert {s for s in found if s[0] == "inference_clusters_calls_total"} == {
        calls_total(kind, result) for kind in metrics.KINDS for result in metrics.RESULTS
    }
    assert {s for s in found if s[0] == "inference_clusters_memo_answers_total"} == {
        memo_answers(kind, outcome)
        for kind in ("CoreWeaveCluster", "CivoCluster")
        for outcome in metrics.MEMO_OUTCOMES
    }
    assert set(found.values()) == {0.0}
    # The client library's own series are served too; no *_created series double the scrape.
    text = scrape(url)
    for series in ("process_cpu_seconds_total", "process_resident_memory_bytes", "python_info"):
        assert f"\n{series}" in text
    assert "_created" not in text


def test_without_metrics_nothing_is_counted_or_timed(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_clock() -> float:
        raise AssertionError("a runner without metrics read the clock")

    # The runner reads time.perf_counter through its own `import time`: the module patched here.
    monkeypatch.setattr(time, "perf_counter", no_clock)
    answer = runner.FunctionRunner().reply(request(civo_xr()))
    assert fnv1.RunFunctionResponse.FromString(answer).results[0].severity == (fnv1.SEVERITY_NORMAL)


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        (":8080", ("0.0.0.0", 8080)),  # noqa: S104 - what the function binds for ":8080"
        ("127.0.0.1:9", ("127.0.0.1", 9)),
        ("[::]:8080", ("::", 8080)),
        ("[::1]:0", ("::1", 0)),
    ],
)
def test_addresses_are_host_and_port(address: str, expected: tuple[str, int]) -> None:
    assert addresses.split(address) == expected


@pytest.mark.parametrize("address", ["8080", "localhost", ":http", ":65536", "host:"])
def test_an_address_without_a_port_is_refused(address: str) -> None:
    with pytest.raises(ValueError) as refused:
        addresses.split(address)
    assert str(refused.value) == f'"{address}" is not HOST:PORT (e.g. ":8080" or "127.0.0.1:8080")'


def test_each_call_time_lands_in_the_first_bucket_at_or_above_it() -> None:
    counted = metrics.Metrics()
    # A bound itself belongs to its bucket (le: less than or equal), as Prometheus reads it.
    for seconds in (0.00001, 0.00005, 0.00006, 0.001, 0.3, 1.0, 7.5):
        counted.called("CivoCluster", "none", seconds, "hit")
    found = samples(generate_latest(counted.registry).decode())
    buckets = {
        dict(labels)["le"]: value
        for (name, labels), value in found.items()
        if name == "inference_clusters_call_seconds_bucket"
        and dict(labels)["kind"] == "CivoCluster"
    }
    assert buckets == {
        "5e-05": 2,
        "0.0001": 3,
        "0.00025": 3,
        "0.0005": 3,
        "0.001": 4,
        "0.0025": 4,
        "0.005": 4,
        "0.01": 4,
        "0.025": 4,
        "0.05": 4,
        "0.1": 4,
        "0.25": 4,
        "1.0": 6,
        "+Inf": 7,
    }
    kind = (("kind", "CivoCluster"),)
    assert found["inference_clusters_call_seconds_count", kind] == 7
    assert found["inference_clusters_call_seconds_sum", kind] == pytest.approx(8.80112)


def test_a_scrape_during_calls_is_consistent() -> None:
    """Calls are counted on the serving thread while the HTTP thread scrapes: a histogram's
    count is always its +Inf bucket, and no counter goes backwards."""
    counted = metrics.Metrics()
    done = threading.Event()

    def serve_calls() -> None:
        while not done.is_set():
            counted.called("CoreWeaveCluster", "none", 0.0002, "hit")

    caller = threading.Thread(target=serve_calls)
    caller.start()
    try:
        last = 0.0
        for _ in range(200):
            found = samples(generate_latest(counted.registry).decode())
            kind = (("kind", "CoreWeaveCluster"),)
            count = found["inference_clusters_call_seconds_count", kind]
            assert count == found["inference_clusters_call_seconds_bucket", (*kind, ("le", "+Inf"))]
            assert count >= last
            last = count
    finally:
        done.set()
        caller.join()
    assert last > 0
