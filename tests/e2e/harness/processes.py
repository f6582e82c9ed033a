"""Starts the control plane's processes, each logging to its own file, and stops every one of
them by PID: on normal exit, on a failure and on Ctrl-C (an atexit hook backs up the fixture's
teardown)."""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# A process gets this long to exit on SIGTERM (Crossplane and the API server drain first)...
TERM_GRACE_SECONDS = 10
# ...and this many log lines of each component are printed when a test fails.
LOG_TAIL_LINES = 40


@dataclass
class Managed:
    name: str
    process: subprocess.Popen[bytes]
    log: Path


class ProcessGroup:
    """The processes one control plane started, stopped in reverse order of starting."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self._managed: list[Managed] = []
        atexit.register(self.stop_all)

    def start(
        self,
        name: str,
        argv: Sequence[str],
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> Managed:
        log = self.log_dir / f"{name}.log"
        with log.open("ab") as sink:
            process = subprocess.Popen(
                list(argv),
                stdout=sink,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, **(env or {})},
                cwd=cwd,
                # Its own session: Ctrl-C reaches only pytest, whose teardown stops it in order.
                start_new_session=True,
            )
        managed = Managed(name, process, log)
        self._managed.append(managed)
        return managed

    def run(
        self,
        name: str,
        argv: Sequence[str],
        env: dict[str, str] | None = None,
        timeout: float = 300,
    ) -> subprocess.CompletedProcess[str]:
        """Runs a short-lived command to completion, logging like the long-running ones."""
        log = self.log_dir / f"{name}.log"
        result = subprocess.run(
            list(argv),
            capture_output=True,
            text=True,
            env={**os.environ, **(env or {})},
            timeout=timeout,
            check=False,
        )
        with log.open("a") as sink:
            sink.write(
                f"$ {' '.join(argv)}\n{result.stdout}{result.stderr}exit {result.returncode}\n"
            )
        return result

    def check_alive(self) -> None:
        for managed in self._managed:
            code = managed.process.poll()
            if code is not None:
                raise RuntimeError(
                    f"{managed.name} exited with {code}:\n{tail(managed.log, LOG_TAIL_LINES)}"
                )

    def stop(self, name: str) -> None:
        for managed in [m for m in self._managed if m.name == name]:
            _stop(managed.process)
            self._managed.remove(managed)

    def stop_all(self) -> None:
        while self._managed:
            _stop(self._managed.pop().process)

    def log_tails(self, lines: int = LOG_TAIL_LINES) -> str:
        parts = []
        for log in sorted(self.log_dir.glob("*.log")):
            parts.append(f"===== {log.name} (last {lines} lines) =====\n{tail(log, lines)}")
        return "\n".join(parts)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + TERM_GRACE_SECONDS
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    if process.poll() is None:
        process.kill()
        process.wait()


def tail(path: Path, lines: int) -> str:
    if not path.exists():
        return "(no log)"
    text = path.read_text(errors="replace").splitlines()
    return "\n".join(text[-lines:])
