"""Starts the control plane's processes, each logging to its own file, and stops every one of
them by PID: on normal exit, on a failure and on Ctrl-C (an atexit hook backs up the fixture's
teardown). A process can also be killed as a crash kills it and brought back with the same
command, as a Pod's container restarts (harness/e2e/faults.py).

Built on the standard library's subprocess, which is the library for this; what is ours is what a
control plane under test needs and no process library gives together: one log file per component
that survives restarts with a marker per start, a restart that replays the exact command and
waits on the component's own readiness probe, the parent-death signal that keeps a killed run from
leaving processes behind, and log tails for failure messages. (psutil, already a dependency, reads
the processes' CPU and memory in usage.py; it starts and stops nothing.)"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .kube import wait_for

# A process gets this long to exit on SIGTERM (Crossplane and the API server drain first)...
TERM_GRACE_SECONDS = 10
# ...and this many log lines of each component are printed when a test fails.
LOG_TAIL_LINES = 40
# A restarted component is ready again within seconds; this is for a loaded 2-core machine.
RESTART_SECONDS = 120
# Each process gets SIGTERM when pytest dies, even by SIGKILL (Linux's parent-death signal,
# set by util-linux's setpriv, which then execs the command under the same PID): otherwise a
# killed run leaves a control plane behind, holding provider-kubernetes' fixed ports.
DIE_WITH_PYTEST = ["setpriv", "--pdeathsig", "TERM", "--"] if shutil.which("setpriv") else []


@dataclass
class Managed:
    name: str
    process: subprocess.Popen[bytes]
    log: Path
    # What started it, to start it again the same way after a crash.
    argv: list[str]
    env: dict[str, str]
    cwd: Path | None
    # Whether it is ready (serving), if its owner said how to tell.
    ready: Callable[[], bool] | None = None


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
        ready: Callable[[], bool] | None = None,
        ready_within: float = 0,
    ) -> Managed:
        """Starts a process; `ready` tells when it serves, for restart() to wait on, and for
        this call too if `ready_within` gives it seconds to."""
        log = self.log_dir / f"{name}.log"
        # A name started again (an upgrade's new release) appends to the same log: the marker
        # tells one run's lines from the last's (harness/e2e/operability.py).
        process = _spawn(argv, env, cwd, log, "===== started")
        managed = Managed(name, process, log, list(argv), env or {}, cwd, ready)
        self._managed.append(managed)
        if ready_within:
            self.wait_ready(name, ready_within)
        return managed

    def kill(self, name: str) -> None:
        """SIGKILL, as an OOM kill or a node loss ends a process: no drain, no cleanup."""
        managed = self._one(name)
        managed.process.kill()
        managed.process.wait()

    def restart(self, name: str) -> None:
        """Starts a killed (or exited) process again with the same command and environment, on
        the same ports, and waits until it is ready."""
        managed = self._one(name)
        if managed.process.poll() is None:
            raise RuntimeError(f"{name} is still running; kill it first")
        managed.process = _spawn(
            managed.argv, managed.env, managed.cwd, managed.log, "\n===== restarted"
        )
        self.wait_ready(name, RESTART_SECONDS)

    def wait_ready(self, name: str, timeout: float) -> None:
        """Waits until the process's `ready` probe passes; fails at once if it exits."""
        if self._one(name).ready is not None:
            wait_for(f"{name} ready", lambda: self.ready_now(name), timeout)

    def ready_now(self, name: str) -> bool:
        """Whether the process's `ready` probe passes now; fails at once if it has exited."""
        managed = self._one(name)
        _raise_if_exited(managed)
        assert managed.ready is not None
        return managed.ready()

    def running(self, name: str) -> bool:
        return self._one(name).process.poll() is None

    def _one(self, name: str) -> Managed:
        found = [m for m in self._managed if m.name == name]
        if len(found) != 1:
            raise RuntimeError(f"{len(found)} processes named {name!r} are managed")
        return found[0]

    def check_running(self, name: str) -> None:
        """Raises, with the end of its log, if the process has exited: a wait on what it does
        fails at once instead of at its deadline."""
        _raise_if_exited(self._one(name))

    def run(
        self,
        name: str,
        argv: Sequence[str],
        env: dict[str, str] | None = None,
        timeout: float = 300,
        check: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        """Runs a short-lived command to completion, logging like the long-running ones; with
        `check`, a failed one raises with its output."""
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
        if check and result.returncode != 0:
            raise RuntimeError(f"{name} failed:\n{result.stdout}{result.stderr}")
        return result

    def check_alive(self) -> None:
        for managed in self._managed:
            _raise_if_exited(managed)

    def stop(self, name: str) -> None:
        for managed in [m for m in self._managed if m.name == name]:
            _stop(managed.process)
            self._managed.remove(managed)

    def stop_all(self) -> None:
        while self._managed:
            _stop(self._managed.pop().process)

    def log_tails(self, lines: int = LOG_TAIL_LINES) -> str:
        return "\n".join(
            f"===== {log.name} (last {lines} lines) =====\n{tail(log, lines)}"
            for log in sorted(self.log_dir.glob("*.log"))
        )


def _raise_if_exited(managed: Managed) -> None:
    code = managed.process.poll()
    if code is not None:
        raise RuntimeError(
            f"{managed.name} exited with {code}:\n{tail(managed.log, LOG_TAIL_LINES)}"
        )


def _spawn(
    argv: Sequence[str], env: dict[str, str] | None, cwd: Path | None, log: Path, marker: str
) -> subprocess.Popen[bytes]:
    with log.open("ab") as sink:
        sink.write(f"{marker} by the e2e harness at {time.time():.3f} =====\n".encode())
        # Before the process writes to the same file.
        sink.flush()
        return subprocess.Popen(
            [*DIE_WITH_PYTEST, *argv],
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
            cwd=cwd,
            # Its own session: Ctrl-C reaches only pytest, whose teardown stops it in order.
            start_new_session=True,
        )


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=TERM_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def tail(path: Path, lines: int) -> str:
    if not path.exists():
        return "(no log)"
    text = path.read_text(errors="replace").splitlines()
    return "\n".join(text[-lines:])
