"""The servers a run starts: the function as the default install runs it (metrics on) and the
no-op floor (`floors.py`).

Each is a subprocess on its own loopback port. The client sends and receives raw bytes over one
persistent channel per server, so it does no protobuf work inside a timed call.
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import grpc
import psutil

from harness.e2e.processes import LOG_TAIL_LINES, ProcessGroup, tail
from harness.fixtures import free_port, until_listening

METHOD = "/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction"
MEGABYTE = 1024 * 1024
# Far above any call's latency: a call that takes this long has hung.
CALL_TIMEOUT = 30.0
# Far above the function's cold start (about 0.2 s): a server that takes this long is broken.
START_TIMEOUT = 30.0
FUNCTION_BIN = Path(sys.executable).parent / "function"
FLOORS = Path(__file__).with_name("floors.py")
# Every server the serial and concurrent phases call, in their round-robin: the function and
# its floor.
ROLES = ("function", "noop")
LABELS = {"function": "function", "noop": "no-op floor"}

CLIENT_OPTIONS = [
    ("grpc.max_receive_message_length", 64 * MEGABYTE),
    ("grpc.max_send_message_length", 64 * MEGABYTE),
    ("grpc.initial_reconnect_backoff_ms", 10),
    ("grpc.min_reconnect_backoff_ms", 10),
    ("grpc.max_reconnect_backoff_ms", 50),
]


class Server:
    """A server started on its own loopback port (log_dir/<name>.log its output): the function
    as a pod runs it by default, metrics on (at metrics_port, on loopback) and without the health
    probe port, or the no-op floor (which serves no metrics)."""

    def __init__(self, name: str, log_dir: Path) -> None:
        self.name, self.port, self.metrics_port = name, free_port(), free_port()
        argv = [sys.executable, str(FLOORS), f"127.0.0.1:{self.port}"]
        if name == "function":
            argv = [str(FUNCTION_BIN), "--insecure", f"--address=127.0.0.1:{self.port}"]
            argv += [f"--metrics-address=127.0.0.1:{self.metrics_port}", "--health-address="]
        # Stopped by stop(), or at exit when it never started listening.
        self.processes = ProcessGroup(log_dir)
        managed = self.processes.start(name, argv)
        self.process, self.ps = managed.process, psutil.Process(managed.process.pid)
        # Calls sent, answered or not: what the function's metrics must count.
        self.sent = 0
        self._sent_lock = threading.Lock()
        written = functools.partial(tail, managed.log, LOG_TAIL_LINES)
        until_listening(self.process, self.port, seconds=START_TIMEOUT, written=written)
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.port}", options=CLIENT_OPTIONS)
        grpc.channel_ready_future(self.channel).result(timeout=START_TIMEOUT)
        # No (de)serializers: bytes in, bytes out; the client does no protobuf work per call.
        self.call: Callable[..., bytes] = self.channel.unary_unary(METHOD)

    def invoke(self, data: bytes) -> bytes:
        # Concurrent callers share a server: += alone could lose a count between threads.
        with self._sent_lock:
            self.sent += 1
        return self.call(data, timeout=CALL_TIMEOUT)

    def cpu(self) -> float:
        times = self.ps.cpu_times()
        return float(times.user + times.system)

    def memory(self) -> tuple[float, float]:
        """(peak RSS, current RSS) in MB: VmHWM and VmRSS from /proc/<pid>/status."""
        status = Path(f"/proc/{self.process.pid}/status").read_text().splitlines()
        kb = dict(line.split(":", 1) for line in status)
        return int(kb["VmHWM"].split()[0]) / 1024, int(kb["VmRSS"].split()[0]) / 1024

    def stop(self) -> None:
        self.channel.close()
        self.processes.stop_all()
