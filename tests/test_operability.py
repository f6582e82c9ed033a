"""The console script as Prometheus and the kubelet see it: its metrics port counts exactly the
calls its log shows, the health service answers on the gRPC port and alone on the plaintext
probe port, turns NOT_SERVING the moment shutdown begins, and a side port turned off is not
opened at all."""

from __future__ import annotations

import signal
from pathlib import Path

import grpc
import psutil
import pytest
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from grpc_health.v1 import health_pb2, health_pb2_grpc

from function import health
from harness.e2e.calls import read_calls
from harness.fixtures import civo_xr, coreweave_xr, free_port, request
from tests.test_coreweave import CREDENTIALS, cluster_up
from tests.test_metrics import call_seconds_count, calls_total, counted, memo_answers, scrape
from tests.test_server import answers, serving

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def check(address: str, service: str = "") -> int:
    with grpc.insecure_channel(address) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=service), timeout=5
        )
    return int(reply.status)


def test_metrics_count_the_calls_the_log_shows(tmp_path: Path) -> None:
    metrics_port = free_port()
    calls = [
        request(coreweave_xr(), cluster_up()),
        request(coreweave_xr(), cluster_up(), CREDENTIALS),
        request(coreweave_xr(), cluster_up(), CREDENTIALS),
        request(civo_xr()),
    ]
    flags = ("--insecure", "--debug", f"--metrics-address=127.0.0.1:{metrics_port}")
    with serving(*flags) as (address, process):
        answers(address, *calls)
        text = scrape(f"http://127.0.0.1:{metrics_port}/metrics")
        process.terminate()
        log = tmp_path / "function.log"
        log.write_bytes(process.communicate(timeout=10)[0])

    logged = read_calls(log)
    assert len(logged) == len(calls)
    assert [c.memoised for c in logged] == [False, False, True, False]
    assert counted(text) == {
        # Every pass waits for the cluster's readiness: a Normal result each.
        calls_total("CoreWeaveCluster", "normal"): 3,
        calls_total("CivoCluster", "normal"): 1,
        call_seconds_count("CoreWeaveCluster"): 3,
        call_seconds_count("CivoCluster"): 1,
        memo_answers("CoreWeaveCluster", "hit"): 1,
        memo_answers("CoreWeaveCluster", "miss"): 2,
        memo_answers("CivoCluster", "miss"): 1,
    }


def test_health_answers_on_both_ports_and_only_health_on_the_probe_port() -> None:
    probe = f"127.0.0.1:{free_port()}"
    with serving("--insecure", f"--health-address={probe}") as (address, _):
        for where in (address, probe):
            for service in health.SERVICES:
                assert check(where, service) == SERVING, (where, service)
            with pytest.raises(grpc.RpcError) as unknown:
                check(where, "grpc.example.Unknown")
            assert unknown.value.code() == grpc.StatusCode.NOT_FOUND
        # The probe port is plaintext whatever --address serves: it must not serve RunFunction.
        with grpc.insecure_channel(probe) as channel, pytest.raises(grpc.RpcError) as refused:
            grpcv1.FunctionRunnerServiceStub(channel).RunFunction(
                request(coreweave_xr()), timeout=5
            )
        assert refused.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_health_turns_not_serving_when_shutdown_begins() -> None:
    probe = f"127.0.0.1:{free_port()}"
    with serving("--insecure", f"--health-address={probe}") as (_, process):
        with grpc.insecure_channel(probe) as channel:
            # A Watch is a call in flight: the server waits out its grace period for it, so the
            # change is seen while the process is still there.
            updates = health_pb2_grpc.HealthStub(channel).Watch(
                health_pb2.HealthCheckRequest(service=""), timeout=20
            )
            assert next(updates).status == SERVING
            process.send_signal(signal.SIGTERM)
            assert next(updates).status == NOT_SERVING
            assert process.poll() is None, "the function exited before its grace period"
        assert process.wait(timeout=15) == 0


@pytest.mark.parametrize("how", ["flags", "environment"])
def test_side_ports_turned_off_are_not_opened(how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if how == "environment":
        # Empty, not unset: how a DeploymentRuntimeConfig's env turns a side port off.
        monkeypatch.setenv("METRICS_ADDRESS", "")
        monkeypatch.setenv("HEALTH_ADDRESS", "")
    flags = ("--metrics-address=", "--health-address=") if how == "flags" else ()
    with serving("--insecure", *flags, side_ports_off=False) as (address, process):
        assert listening(process.pid) == {int(address.rsplit(":", 1)[1])}


def listening(pid: int) -> set[int]:
    return {
        c.laddr.port
        for c in psutil.Process(pid).net_connections(kind="tcp")
        if c.status == psutil.CONN_LISTEN
    }


def test_environment_sets_the_side_ports(monkeypatch: pytest.MonkeyPatch) -> None:
    metrics_port, health_port = free_port(), free_port()
    monkeypatch.setenv("METRICS_ADDRESS", f"127.0.0.1:{metrics_port}")
    monkeypatch.setenv("HEALTH_ADDRESS", f"127.0.0.1:{health_port}")
    flags = ("--insecure", "--metrics-address=127.0.0.1:0")
    with serving(*flags, side_ports_off=False) as (_, process):
        # A flag wins over its variable; the variable alone sets the other.
        assert check(f"127.0.0.1:{health_port}") == SERVING
        ports = listening(process.pid)
    assert metrics_port not in ports
    assert len(ports) == 3, ports
