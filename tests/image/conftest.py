"""Fixtures for the built runtime image (build/image.tar) and Function package (build/*.xpkg).

The image is tested as Crossplane runs it, without a container runtime: its layer is unpacked
into a scratch root, and the entrypoint runs there with `unshare --mount --pid --fork` + `chroot
--userspec=2000:2000`, with the image config's environment, its own /proc, the host's /dev and,
when asked, a certificate folder mounted at /tls/server as Crossplane mounts its Secret.

Everything skips, saying why, when the artifacts are missing (`make image-test` builds them) or
when the tests cannot unshare and chroot (they need root).
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harness.fixtures import free_port, until_listening

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build"
IMAGE_TAR = BUILD / "image.tar"
XPKG = BUILD / "function-inference-clusters.xpkg"
# Where Crossplane mounts the function's server certificate Secret (TLS_SERVER_CERTS_DIR).
CERTS_MOUNT = "/tls/server"
# The entrypoint's own mount and PID namespaces, as a pod's; its process dies with unshare.
UNSHARE = ("unshare", "--mount", "--pid", "--fork", "--kill-child")
# A cold Python start in the image takes about a second; a busy CI machine may need more.
START_TIMEOUT = 30
# The SDK waits up to 5 s for in-flight calls on SIGTERM.
STOP_TIMEOUT = 15


def read_docker_archive(path: Path) -> tuple[dict[str, Any], list[str]]:
    """The config and layer member names of a one-image `docker save` tarball."""
    with tarfile.open(path) as archive:
        (manifest,) = json.load(member(archive, "manifest.json"))
        config = json.load(member(archive, manifest["Config"]))
    return config, list(manifest["Layers"])


def member(archive: tarfile.TarFile, name: str) -> Any:
    handle = archive.extractfile(name)
    assert handle is not None, f"{name} is not a file in the archive"
    return handle


@dataclass(frozen=True)
class Image:
    config: dict[str, Any]
    rootfs: Path

    @property
    def env(self) -> dict[str, str]:
        return dict(item.split("=", 1) for item in self.config["config"]["Env"])


def built(path: Path, target: str) -> Path:
    """A build artifact; the test skips, naming the make target, without it."""
    if not path.exists():
        pytest.skip(
            f"{path.relative_to(ROOT)} not found: run `make {target}` (or `make image-test`)"
        )
    return path


@pytest.fixture(scope="session")
def image_tar() -> Path:
    return built(IMAGE_TAR, "image")


@pytest.fixture(scope="session")
def xpkg() -> Path:
    return built(XPKG, "xpkg")


@pytest.fixture(scope="session")
def image(image_tar: Path, tmp_path_factory: pytest.TempPathFactory) -> Image:
    """The image config and its layer unpacked, owners and modes as in the image."""
    if os.geteuid() != 0:
        pytest.skip("running the image with unshare and chroot needs root")
    for tool in ("unshare", "chroot", "tar"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    config, layers = read_docker_archive(image_tar)
    rootfs = tmp_path_factory.mktemp("rootfs")
    with tarfile.open(image_tar) as archive:
        for layer in layers:
            unpack = subprocess.Popen(
                ["tar", "--extract", "--gzip", "--numeric-owner", f"--directory={rootfs}"],
                stdin=subprocess.PIPE,
            )
            assert unpack.stdin is not None
            with unpack.stdin:
                shutil.copyfileobj(member(archive, layer), unpack.stdin, 1 << 20)
            assert unpack.wait() == 0, f"tar could not unpack layer {layer}"
    (rootfs / CERTS_MOUNT.lstrip("/")).mkdir(parents=True)
    return Image(config, rootfs)


@dataclass
class Running:
    address: str
    pid: int
    """the function's own PID (PID 1 of its namespace, as in a pod)"""


def _namespace_child(unshare_pid: int) -> int | None:
    children = Path(f"/proc/{unshare_pid}/task/{unshare_pid}/children")
    with contextlib.suppress(OSError):
        pids = children.read_text().split()
        return int(pids[0]) if pids else None
    return None


@contextlib.contextmanager
def run_image(
    image: Image, *flags: str, env: dict[str, str] | None = None, certs: Path | None = None
) -> Iterator[Running]:
    """The image's entrypoint on a free loopback port, as UID/GID 2000 in its own mount and PID
    namespaces; stopped with SIGTERM, as Kubernetes stops a pod, which must end it cleanly."""
    port = free_port()
    root = shlex.quote(str(image.rootfs))
    mounts = [f"mount -t proc proc {root}/proc", f"mount --rbind /dev {root}/dev"]
    if certs is not None:
        mounts.append(f"mount --bind -o ro {shlex.quote(str(certs))} {root}{CERTS_MOUNT}")
    entrypoint = " ".join(shlex.quote(a) for a in image.config["config"]["Entrypoint"])
    user = image.config["config"]["User"]
    script = (
        " && ".join(mounts)
        + f" && exec chroot --userspec={user} {root} {entrypoint}"
        + f" --address=127.0.0.1:{port} "
        + " ".join(shlex.quote(f) for f in flags)
    )
    process = subprocess.Popen(
        [*UNSHARE, "sh", "-c", script],
        # Metrics and the health probe port are on by default; off unless a test sets them.
        env={**image.env, "METRICS_ADDRESS": "", "HEALTH_ADDRESS": "", **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    function_pid: int | None = None
    try:
        until_listening(process, port, seconds=START_TIMEOUT)
        function_pid = _namespace_child(process.pid)
        assert function_pid is not None, "unshare has no child process"
        try:
            yield Running(f"127.0.0.1:{port}", function_pid)
        except BaseException as failed:
            # What the function logged is the one account of a refused call or a dropped
            # handshake from its side (the cold .ci/run of 1a183f1 saw only a handshake reset).
            failed.add_note(f"the function's output:\n{_kill(process, function_pid)}")
            raise
        assert process.poll() is None, "the function died while serving"
        # unshare does not forward signals: stop the function itself, by its PID.
        os.kill(function_pid, signal.SIGTERM)
        output, _ = process.communicate(timeout=STOP_TIMEOUT)
        assert process.returncode == 0, (
            f"the function exited {process.returncode} on SIGTERM:\n{output.decode()}"
        )
    finally:
        if process.poll() is None:
            _kill(process, function_pid or _namespace_child(process.pid))


def _kill(process: subprocess.Popen[bytes], function_pid: int | None) -> str:
    """Kills the function and unshare; what the function printed.

    The function by its own PID: chroot's setuid clears the parent-death signal that unshare's
    --kill-child sets, so killing unshare alone leaves the function serving and holding the
    output pipe open, and reading it would wait forever (the warm .ci/run of 05bf17d hung there
    until CI's limit instead of reporting a failed test)."""
    if function_pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(function_pid, signal.SIGKILL)
    process.kill()
    output, _ = process.communicate(timeout=STOP_TIMEOUT)
    return output.decode()
