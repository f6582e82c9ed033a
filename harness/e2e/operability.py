"""A function process as Prometheus and the kubelet see it: its metrics scraped, its health
probed, on the side ports the harness gives every function process it starts."""

from __future__ import annotations

import dataclasses
import time
import urllib.request
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client.parser import text_string_to_metric_families

from harness.fixtures import free_port

from .calls import read_calls
from .certs import KeyPair, issue

# Crossplane core's series deploy/monitoring.yaml's rules read, as v2.1.0-v2.4.0 define them
# (internal/xfn/function_runner_metrics.go); tests/test_deploy.py checks the rules use no other.
CROSSPLANE_CORE_SERIES = frozenset(
    {
        "function_run_function_request_total",
        "function_run_function_response_total",
        "function_run_function_seconds_bucket",
        "function_run_function_seconds_sum",
        "function_run_function_seconds_count",
    }
)
# ProcessGroup writes one of these into a log before each start or restart of its process.
HARNESS_MARKER = "===== "
# Calls arrive every poll interval at rest; a scrape and a log read disagree only when one lands
# between them, so a few tries always find a quiet moment.
CONSISTENT_TRIES = 10


@dataclasses.dataclass(frozen=True)
class SidePorts:
    """The loopback ports of a function process's metrics and plaintext health service."""

    metrics: int
    health: int

    @classmethod
    def free(cls) -> SidePorts:
        return cls(free_port(), free_port())

    def env(self) -> dict[str, str]:
        """As a DeploymentRuntimeConfig sets them: variables, which releases before 0.2.0
        ignore (they serve neither)."""
        return {
            "METRICS_ADDRESS": f"127.0.0.1:{self.metrics}",
            "HEALTH_ADDRESS": f"127.0.0.1:{self.health}",
        }


@dataclasses.dataclass(frozen=True)
class Counted:
    calls: int
    memo_hits: int


def scrape(ports: SidePorts | int) -> str:
    """The metrics text served on a function's side ports (or on a loopback port)."""
    port = ports.metrics if isinstance(ports, SidePorts) else ports
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        return str(reply.read().decode())


def series_about(text: str, label: str, value: str) -> set[str]:
    """The sample names in a scrape that carry label=value."""
    return {
        sample.name
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.labels.get(label) == value
    }


def counted(text: str) -> Counted:
    """All calls and memo hits a scrape counts, over every kind and result."""
    calls = hits = 0.0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "inference_clusters_calls_total":
                calls += sample.value
            elif (
                sample.name == "inference_clusters_memo_answers_total"
                and sample.labels["outcome"] == "hit"
            ):
                hits += sample.value
    return Counted(int(calls), int(hits))


def logged(log: Path) -> Counted:
    """The calls the process's current run logged (after the harness's last start marker)."""
    text = log.read_text(errors="replace")
    current = text[text.rfind(HARNESS_MARKER) :] if HARNESS_MARKER in text else text
    run = log.with_suffix(".current-run")
    run.write_text(current)
    calls = read_calls(run)
    return Counted(len(calls), sum(1 for c in calls if c.memoised))


def counts_match_log(ports: SidePorts, log: Path) -> Counted:
    """What the metrics count, once equal to what the log shows (an AssertionError naming both
    when they differ while no call arrives in between)."""
    for _ in range(CONSISTENT_TRIES):
        before = counted(scrape(ports))
        shown = logged(log)
        after = counted(scrape(ports))
        if before == after:
            assert before == shown, f"metrics count {before}, the log shows {shown} ({log.name})"
            return before
        time.sleep(0.5)
    raise AssertionError(f"calls kept arriving for {CONSISTENT_TRIES} scrapes of {log.name}")


def health_status(channel: grpc.Channel) -> int:
    reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
    return int(reply.status)


def assert_serving(ports: SidePorts, grpc_address: str, root: KeyPair, server_name: str) -> None:
    """SERVING on the plaintext probe port, as the kubelet asks, and on the mTLS gRPC port to a
    client with a certificate from Crossplane's CA, as Crossplane's own clients hold."""
    serving = health_pb2.HealthCheckResponse.SERVING
    with grpc.insecure_channel(f"127.0.0.1:{ports.health}") as channel:
        assert health_status(channel) == serving, "the probe port is not SERVING"
    client = issue(root, "crossplane", client=True)
    credentials = grpc.ssl_channel_credentials(root.cert_pem, client.key_pem, client.cert_pem)
    options = [("grpc.ssl_target_name_override", server_name)]
    with grpc.secure_channel(grpc_address, credentials, options=options) as channel:
        assert health_status(channel) == serving, "the mTLS gRPC port is not SERVING"
