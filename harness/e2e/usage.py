"""CPU time and memory of the processes a ProcessGroup started, read from /proc with psutil.

Each process is found by the log its stdout writes to: ProcessGroup sends a process named
`<name>` to `<log_dir>/<name>.log`, so the log names the process and nothing else about the
group's bookkeeping is assumed. A process restarted under the same name is found again with
its new PID.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from pathlib import Path

import psutil

# ProcessGroup's processes inherit this process's stdout no further than Popen: fd 1 is the log.
STDOUT_FD = 1


@dataclasses.dataclass(frozen=True)
class Usage:
    """One process at one moment."""

    name: str
    pid: int
    # user + system, of the process itself (none of these fork workers).
    cpu_seconds: float
    rss_bytes: int
    # The kernel's high-water mark of the resident set (VmHWM) since the process started.
    peak_rss_bytes: int


def group_processes(log_dir: Path) -> dict[str, psutil.Process]:
    """Every live descendant of this process whose stdout is a log in log_dir, by process name."""
    found: dict[str, psutil.Process] = {}
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(OSError, psutil.Error):
            stdout = Path(os.readlink(f"/proc/{child.pid}/fd/{STDOUT_FD}"))
            if stdout.parent == log_dir and stdout.suffix == ".log" and child.is_running():
                found[stdout.stem] = child
    return found


def usage(name: str, process: psutil.Process) -> Usage | None:
    """What the process has used so far; None once it has exited."""
    try:
        with process.oneshot():
            times = process.cpu_times()
            rss = process.memory_info().rss
        return Usage(name, process.pid, times.user + times.system, rss, _peak_rss(process.pid))
    except psutil.Error:
        return None


def snapshot(log_dir: Path) -> dict[str, Usage]:
    """Usage of every live process of the group, by process name."""
    taken = {name: usage(name, process) for name, process in group_processes(log_dir).items()}
    return {name: used for name, used in taken.items() if used is not None}


def _peak_rss(pid: int) -> int:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0
