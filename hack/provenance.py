"""What a report says it measured: the CPU it ran on and the commit of the function it ran.

The bench (`hack/bench/`) and the fleet (`hack/fleet/`) both head their reports with these.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown CPU"


def _git(*args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True, env=env
    )
    return done.stdout


def commit() -> str:
    """HEAD's short hash, and how many files under function/ differ from it: a figure measured
    on uncommitted code says so."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        head = _git("rev-parse", "--short=12", "HEAD").strip()
        # GIT_OPTIONAL_LOCKS=0: `git status` must not rewrite the index (others work here too).
        unlocked = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
        changed = _git("status", "--porcelain", "--", "function", env=unlocked).splitlines()
        return head + (f" (+{len(changed)} uncommitted file(s) under function/)" if changed else "")
    return "unknown"
