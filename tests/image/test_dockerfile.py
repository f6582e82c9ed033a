"""The Dockerfile (for users with Docker) cannot drift from `make image`: it states the same
runtime config, starts from the same Debian release with the same packages, and installs the
same wheels with the same script, so the same distributions land in /venv/fn."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from tests.image.conftest import ROOT, Image, read_docker_archive

DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
ROOTFS_SCRIPT = ROOT / "hack" / "image" / "rootfs.sh"
LOCK = ROOT / "hack" / "image" / "requirements.lock"
PYPROJECT = ROOT / "pyproject.toml"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the Dockerfile, continuation lines joined, comments dropped."""
    lines = [ln for ln in DOCKERFILE.read_text().splitlines() if not ln.lstrip().startswith("#")]
    joined = re.sub(r"\\\n", " ", "\n".join(lines))
    found = []
    for line in joined.splitlines():
        if line.strip():
            keyword, _, arguments = line.strip().partition(" ")
            found.append((keyword.upper(), " ".join(arguments.split())))
    return found


def only(keyword: str) -> str:
    (arguments,) = [a for k, a in instructions() if k == keyword]
    return arguments


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_dockerfile_states_the_runtime_config_of_make_image(image_tar: Path) -> None:
    config, _ = read_docker_archive(image_tar)
    runtime = config["config"]
    assert json.loads(only("ENTRYPOINT")) == runtime["Entrypoint"]
    assert only("USER") == runtime["User"]
    assert {f"{port}/tcp" for port in only("EXPOSE").split()} == set(runtime["ExposedPorts"])
    assert dict(item.split("=", 1) for item in only("ENV").split()) == dict(
        item.split("=", 1) for item in runtime["Env"]
    )


def test_dockerfile_starts_from_the_same_debian_release_and_packages(image: Image) -> None:
    base = only("ARG").split("=", 1)[1]
    os_release = dict(
        line.split("=", 1)
        for line in (image.rootfs / "etc/os-release").read_text().splitlines()
        if "=" in line
    )
    assert base == f"debian:{os_release['VERSION_CODENAME']}-slim"
    run = only("RUN")
    installed = re.search(r"apt-get install -y --no-install-recommends ([^&]+)&&", run)
    assert installed is not None, run
    included = re.search(r"--include=(\S+)", ROOTFS_SCRIPT.read_text())
    assert included is not None
    assert sorted(installed[1].split()) == sorted(included[1].split(","))


def test_dockerfile_installs_the_same_wheels_with_the_same_script() -> None:
    run = only("RUN")
    words = shlex.split(run)
    assert "--mount=type=bind,source=build/wheels,target=/tmp/wheels" in words
    assert (
        "--mount=type=bind,source=hack/image/install-venv.sh,target=/tmp/install-venv.sh" in words
    )
    assert "sh /tmp/install-venv.sh /tmp/wheels" in run
    assert "install-venv.sh" in ROOTFS_SCRIPT.read_text()
    admitted = {ln for ln in DOCKERIGNORE.read_text().splitlines() if ln.startswith("!")}
    assert admitted == {"!build/wheels/", "!build/wheels/*.whl", "!hack/image/install-venv.sh"}


def test_installed_distributions_are_the_locked_wheels_and_this_project(image: Image) -> None:
    """What install-venv.sh installs from build/wheels, in either build."""
    locked = [
        ln.split()[0] for ln in LOCK.read_text().splitlines() if ln and not ln.startswith("#")
    ]
    expected = {canonical(name): version for name, version in (pin.split("==") for pin in locked)}
    project = re.search(r'^name = "(.+)"\nversion = "(.+)"', PYPROJECT.read_text(), re.MULTILINE)
    assert project is not None
    expected[canonical(project[1])] = project[2]
    site_packages = next((image.rootfs / "venv/fn/lib").glob("python3.*/site-packages"))
    dists = [
        d.name.removesuffix(".dist-info").rpartition("-") for d in site_packages.glob("*.dist-info")
    ]
    installed = {canonical(name): version for name, _, version in dists}
    assert installed == expected
    venv_config = (image.rootfs / "venv/fn/pyvenv.cfg").read_text()
    assert re.search(r"^version = 3\.11\.\d+$", venv_config, re.MULTILINE), venv_config
