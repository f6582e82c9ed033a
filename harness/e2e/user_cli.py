"""The command line a user has: the real kubectl and crossplane CLIs, pointed at a control plane,
for tests that run the docs' commands as written."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from .binaries import REPO
from .controlplane import ControlPlane


def user_environment(plane: ControlPlane, home: Path) -> dict[str, str]:
    """The environment the commands run in: kubectl and `crossplane` (crank is that CLI) on the
    PATH, the control plane's admin kubeconfig."""
    bin_dir = home / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name, binary in (
        ("kubectl", plane.binaries.kubectl),
        ("crossplane", plane.binaries.crank),
    ):
        (bin_dir / name).unlink(missing_ok=True)
        (bin_dir / name).symlink_to(binary)
    return {
        "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "KUBECONFIG": str(plane.admin_kubeconfig),
        "LANG": "C.UTF-8",
    }


def run_as_user(
    script: str,
    env: dict[str, str],
    timeout: float = 300,
    meanwhile: Callable[[], object] | None = None,
) -> str:
    """Runs the commands with bash (-e: a failed one fails them all) from the repository's root,
    as a user following the docs does, calling `meanwhile` every second while they run (what
    the control plane's runtime does for what they install); their output."""
    process = subprocess.Popen(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + timeout
    while process.poll() is None:
        if time.monotonic() > deadline:
            process.kill()
            break
        if meanwhile is not None:
            meanwhile()
        time.sleep(1)
    output = process.communicate()[0]
    assert process.returncode == 0, (
        f"the commands failed ({process.returncode}):\n{script}\n{output}"
    )
    return output
