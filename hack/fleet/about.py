"""What the report says a run ran on: the machine, and the version of everything that ran."""

from __future__ import annotations

import contextlib
import os
import platform
import subprocess
from pathlib import Path

import psutil

from tests.e2e.harness.binaries import REPO, versions
from tests.e2e.harness.engine import Engine
from tests.e2e.harness.runtime import package_version


def machine() -> dict[str, str]:
    model = "unknown CPU"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    return {
        "CPU": model,
        "cores": str(os.cpu_count()),
        "RAM": f"{psutil.virtual_memory().total / 1024**3:.1f} GiB",
        "load average (1/5/15 min) at the start": load,
    }


def _commit() -> str:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        commit = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        # GIT_OPTIONAL_LOCKS=0: `git status` must not rewrite the index (others work here too).
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--", "function"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
        ).stdout.splitlines()
        return commit + (f" (+{len(changed)} uncommitted files under function/)" if changed else "")
    return "unknown"


def software(engine: Engine) -> dict[str, str]:
    pinned = versions()
    return {
        "function": f"{package_version()} from the working tree at {_commit()}",
        "Crossplane": engine.version,
        "Kubernetes": pinned["KUBE_VERSION"],
        "etcd": pinned["ETCD_VERSION"],
        "provider-kubernetes": pinned["PROVIDER_KUBERNETES_VERSION"],
        "provider-helm": pinned["PROVIDER_HELM_VERSION"],
        "Python": platform.python_version(),
    }
