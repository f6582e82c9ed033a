"""The servers a run starts: the function as the default install runs it (metrics on) and the
no-op floor.

Each is a subprocess on its own loopback port. The client sends and receives raw bytes over one
persistent channel per server, so it does no protobuf work inside a timed call.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import grpc
import psutil

from harness.fixtures import until_listening

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
    def __init__(self, name: str, argv: list[str], port: int, log: Path) -> None:
        self.name, self.argv, self.port, self.log_path = name, argv, port, log
        self.process: subprocess.Popen[bytes] | None = None
        self.channel: grpc.Channel | None = None
        self.call: Callable[..., bytes] | None = None
        self.ps: psutil.Process | None = None
        # Calls sent, answered or not: what the function's metrics must count.
        self.sent = 0
        self._sent_lock = threading.Lock()

    def start(self) -> None:
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT)
        self.ps = psutil.Process(self.process.pid)
        try:
            until_listening(self.process, self.port, seconds=START_TIMEOUT)
        except RuntimeError as error:
            raise RuntimeError(f"{self.name}: {error}; log: {self.log_tail()}") from None
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.port}", options=CLIENT_OPTIONS)
        grpc.channel_ready_future(self.channel).result(timeout=START_TIMEOUT)
        # No (de)serializers: bytes in, bytes out; the client does no protobuf work per call.
        self.call = self.channel.unary_unary(METHOD)

    def invoke(self, data: bytes) -> bytes:
        if self.call is None:
            raise RuntimeError(f"{self.name} is not started")
        # Concurrent callers share a server: += alone could lose a count between threads.
        with self._sent_lock:
            self.sent += 1
        return self.call(data, timeout=CALL_TIMEOUT)

    def cpu(self) -> float:
        if self.ps is None:
            return 0.0
        times = self.ps.cpu_times()
        return float(times.user + times.system)

    def memory(self) -> tuple[float, float]:
        """(peak RSS, current RSS) in MB: VmHWM and VmRSS from /proc/<pid>/status."""
        if self.process is None:
            return 0.0, 0.0
        values = {}
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
                key, _, rest = line.partition(":")
                if key in ("VmHWM", "VmRSS"):
                    values[key] = int(rest.split()[0]) / 1024
        if not values and self.ps is not None:
            rss = self.ps.memory_info().rss / MEGABYTE
            return rss, rss
        return values.get("VmHWM", 0.0), values.get("VmRSS", 0.0)

    def log_tail(self) -> str:
        with contextlib.suppress(OSError):
            return self.log_path.read_text(errors="replace")[-2000:]
        return ""

    def stop(self) -> None:
        if self.channel is not None:
            self.channel.close()
            self.channel = None
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def function_argv(port: int, metrics_port: int) -> list[str]:
    """The function serving metrics on metrics_port (loopback), as a pod does by default, without
    the health probe port."""
    return [
        str(FUNCTION_BIN),
        "--insecure",
        f"--address=127.0.0.1:{port}",
        f"--metrics-address=127.0.0.1:{metrics_port}",
        "--health-address=",
    ]


def noop_argv(port: int) -> list[str]:
    return [sys.executable, str(FLOORS), f"127.0.0.1:{port}"]
