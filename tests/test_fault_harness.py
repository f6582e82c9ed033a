"""The e2e fault harness's own pieces, without a control plane: a process killed and restarted
on the same command and port, the tarpit that plays an unreachable function, and the snapshot
comparison every fault and upgrade test asserts with."""

from __future__ import annotations

import http.client
import socket
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest.mock import Mock

import pytest

from harness.e2e.binaries import REPO
from harness.e2e.faults import Tarpit
from harness.e2e.kube import ApiError, WaitTimedOut, wait_for
from harness.e2e.pair import Snapshot, differences
from harness.e2e.processes import DIE_WITH_PYTEST, ProcessGroup
from harness.fixtures import (
    FIRST_PICKED_PORT,
    ephemeral_low,
    free_port,
    listening,
    pickable_ports,
)


@pytest.fixture
def group(tmp_path: Path) -> Iterator[ProcessGroup]:
    """A process group whose processes are all stopped after the test."""
    started = ProcessGroup(tmp_path / "logs")
    yield started
    started.stop_all()


def test_a_killed_process_restarts_with_its_command_on_its_port(
    group: ProcessGroup, tmp_path: Path
) -> None:
    port = free_port()
    argv = [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port)]
    first = group.start("web", argv, ready=lambda: listening("127.0.0.1", port))
    group.wait_ready("web", 30)
    pid = first.process.pid
    with pytest.raises(RuntimeError, match="web is still running; kill it first"):
        group.restart("web")

    group.kill("web")
    assert not group.running("web")
    assert first.process.returncode == -9
    assert not listening("127.0.0.1", port)

    group.restart("web")
    assert group.running("web")
    assert first.process.pid != pid, "the same Managed entry holds the new process"
    assert listening("127.0.0.1", port)
    log = (tmp_path / "logs" / "web.log").read_text()
    assert log.count("===== restarted by the e2e harness at ") == 1


def test_a_restart_that_exits_fails_at_once_with_its_log(
    group: ProcessGroup, tmp_path: Path
) -> None:
    marker = tmp_path / "started-once"
    port = free_port()
    # Serves the first time; exits with 3 when started again.
    script = (
        "import http.server, pathlib, sys\n"
        f"m = pathlib.Path({str(marker)!r})\n"
        "if m.exists():\n"
        "    print('refusing to start twice', flush=True); sys.exit(3)\n"
        "m.touch()\n"
        f"http.server.HTTPServer(('127.0.0.1', {port}), http.server.BaseHTTPRequestHandler)"
        ".serve_forever()\n"
    )
    group.start("once", [sys.executable, "-c", script], ready=lambda: listening("127.0.0.1", port))
    group.wait_ready("once", 30)
    group.kill("once")
    with pytest.raises(RuntimeError, match=r"(?s)once exited with 3.*refusing to start twice"):
        group.restart("once")


def test_processes_die_with_the_pytest_that_started_them(tmp_path: Path) -> None:
    """A SIGKILLed pytest leaves no component running (a parent-death signal, not a teardown)."""
    if not DIE_WITH_PYTEST:
        pytest.skip("util-linux setpriv is not installed: processes outlive a killed pytest")
    port = free_port()
    # A stand-in for pytest: starts a server through a ProcessGroup, says so, then waits.
    parent = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from harness.e2e.processes import ProcessGroup\n"
        f"group = ProcessGroup(Path({str(tmp_path / 'logs')!r}))\n"
        f"group.start('web', [sys.executable, '-m', 'http.server', '--bind', '127.0.0.1', "
        f"'{port}'])\n"
        "print('started', flush=True)\n"
        "time.sleep(60)\n"
    )
    stand_in = subprocess.Popen(
        [sys.executable, "-c", parent], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    try:
        assert stand_in.stdout is not None and stand_in.stdout.readline() == "started\n"
        wait_for("the server to listen", lambda: listening("127.0.0.1", port), 30)
        stand_in.kill()
        stand_in.wait()
        wait_for("the server to die with its parent", lambda: not listening("127.0.0.1", port), 30)
    finally:
        stand_in.kill()


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        # An API server restarting: refused, then a dropped keep-alive, then its answer.
        (
            (
                ConnectionRefusedError(111, "Connection refused"),
                http.client.RemoteDisconnected("Remote end closed connection"),
                {"status": "ok"},
            ),
            {"status": "ok"},
        ),
        # An error answer (a CRD not served yet), then a slow one, then its answer.
        ((ApiError(404, "GET", "/apis/x", "not found"), TimeoutError("timed out"), 3), 3),
        # A falsy answer is not done yet.
        (([], None, ["vpc"]), ["vpc"]),
    ],
    ids=["through-a-restart", "through-an-error-answer-and-a-timeout", "falsy-then-found"],
)
def test_wait_for_polls_through_what_a_restart_answers(
    outcomes: tuple[Any, ...], expected: Any
) -> None:
    # Each call of the probe gives the next outcome: a value it returns, or an error it raises.
    assert wait_for("the answer", Mock(side_effect=outcomes), 5, interval=0.01) == expected


def test_wait_for_fails_naming_the_last_transport_error() -> None:
    refused = ConnectionRefusedError(111, "Connection refused")
    with pytest.raises(WaitTimedOut) as failed:
        wait_for("the API server", Mock(side_effect=refused), 0.05, interval=0.01)
    assert str(failed.value) == (
        "timed out after 0 s waiting for the API server; "
        "last: ConnectionRefusedError(111, 'Connection refused')"
    )


def test_a_nested_wait_that_timed_out_ends_the_outer_wait() -> None:
    def inner() -> bool:
        return bool(wait_for("the inner condition", lambda: False, 0.01, interval=0.01))

    with pytest.raises(WaitTimedOut, match="waiting for the inner condition"):
        wait_for("the outer condition", inner, 30, interval=0.01)


def test_an_assertion_in_a_probe_ends_the_wait_at_once() -> None:
    with pytest.raises(AssertionError, match="NodePool cpu is not in the cluster"):
        wait_for(
            "a snapshot", Mock(side_effect=AssertionError("NodePool cpu is not in the cluster")), 30
        )


def test_the_tarpit_takes_connections_and_never_answers() -> None:
    port = free_port()
    tarpit = Tarpit(port)
    assert tarpit.port == port
    context = ssl.create_default_context()
    try:
        with (
            socket.create_connection(("127.0.0.1", port), timeout=1) as raw,
            pytest.raises(TimeoutError),
        ):
            context.wrap_socket(raw, server_hostname="function-inference-clusters")
    finally:
        tarpit.close()
    assert not listening("127.0.0.1", port)


BEFORE: Snapshot = {
    "xr/vpc": ("uid-vpc", {"forProvider": {"zone": "US-EAST-04A"}}),
    "xr/nodepool-cpu": ("uid-pool", {"targetNodes": 1}),
}
WITH_GPU_POOL: Snapshot = {**BEFORE, "xr/nodepool-gpu": ("uid-gpu", {})}


@pytest.mark.parametrize(
    ("after", "new", "expected"),
    [
        pytest.param(dict(BEFORE), frozenset(), [], id="unchanged"),
        pytest.param(WITH_GPU_POOL, frozenset({"xr/nodepool-gpu"}), [], id="the expected new pool"),
        pytest.param(
            WITH_GPU_POOL, frozenset(), ["new: xr/nodepool-gpu"], id="an unexpected new object"
        ),
        pytest.param(
            dict(BEFORE),
            frozenset({"xr/nodepool-gpu"}),
            ["never made: xr/nodepool-gpu"],
            id="an expected object never made",
        ),
        pytest.param(
            {"xr/vpc": BEFORE["xr/vpc"]},
            frozenset(),
            ["gone: xr/nodepool-cpu"],
            id="an object gone",
        ),
        pytest.param(
            {**BEFORE, "xr/nodepool-cpu": ("uid-pool-2", {"targetNodes": 1})},
            frozenset(),
            ["re-created (new UID): xr/nodepool-cpu"],
            id="re-created",
        ),
        pytest.param(
            {**BEFORE, "xr/nodepool-cpu": ("uid-pool", {"targetNodes": 2})},
            frozenset(),
            ["changed: xr/nodepool-cpu"],
            id="changed in place",
        ),
    ],
)
def test_differences_name_every_change(
    after: Snapshot, new: frozenset[str], expected: list[str]
) -> None:
    assert differences(BEFORE, after, new) == expected


@pytest.mark.parametrize(
    ("below", "workers", "shares"),
    [
        (32768, 1, [range(10000, 32768)]),
        (32768, 2, [range(10000, 21384), range(21384, 32768)]),
        (32768, 9, [range(10000 + w * 2529, 10000 + (w + 1) * 2529) for w in range(9)]),
        (15000, 10, [range(10000 + w * 500, 10000 + (w + 1) * 500) for w in range(10)]),
    ],
)
def test_each_worker_picks_ports_of_its_own_below_the_ephemeral_range(
    below: int, workers: int, shares: list[range]
) -> None:
    assert [pickable_ports(below, workers, worker) for worker in range(workers)] == shares


def test_too_few_ports_below_the_ephemeral_range_is_an_error_that_says_so() -> None:
    with pytest.raises(RuntimeError) as raised:
        pickable_ports(12000, 8, 0)
    assert str(raised.value) == (
        "/proc/sys/net/ipv4/ip_local_port_range starts at 12000: too few ports below it for "
        "8 workers (each needs 500 from 10000)"
    )


def test_a_picked_port_is_bindable_and_no_outgoing_connection_can_take_it() -> None:
    picked = [free_port() for _ in range(50)]
    assert len(set(picked)) == len(picked), "a port handed out twice"
    assert all(FIRST_PICKED_PORT <= port < ephemeral_low() for port in picked), picked
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", picked[-1]))


def test_a_wait_on_an_exited_process_fails_at_once_with_its_log(group: ProcessGroup) -> None:
    quitter = [sys.executable, "-c", "print('port taken', flush=True); exit(4)"]
    group.start("quitter", quitter).process.wait()
    with pytest.raises(RuntimeError) as raised:
        wait_for("what it serves", lambda: group.check_running("quitter"), 600)
    assert str(raised.value).startswith("quitter exited with 4:\n")
    assert "port taken" in str(raised.value)
