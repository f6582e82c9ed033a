"""The previous release (hack/release/previous.env): its source as committed, exported from main's
history, and its Function package built from that source, both cached by commit outside the
clone (~/.cache/function-inference-clusters/releases/<version>-<commit>/).

The package is built as `make xpkg` builds it: the release's own `make image` (its Debian root
filesystem, its wheels), then crank packs the release's package/ folder with that image. The
External runtime serves the release's source with this checkout's environment, which is only
that release if both lock the same dependencies: checked, and refused otherwise.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import tarfile
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .binaries import REPO, cache_root
from .runtime import FUNCTION_NAME

PREVIOUS_ENV = REPO / "hack" / "release" / "previous.env"
# What the function runs with: the same in both releases, or this environment is not theirs.
DEPENDENCY_FILES = ("hack/image/requirements.lock",)
# The release's `make image` with cached Debian packages takes about a minute; cold, a few.
BUILD_SECONDS = 900


@dataclass(frozen=True)
class Release:
    version: str
    commit: str
    source: Path  # the release's files, as committed
    package: Path  # its Function package, runtime image embedded


def pinned() -> tuple[str, str]:
    """(version, commit) of the previous release, as hack/release/previous.env pins it."""
    found = dict(re.findall(r"^([A-Z_]+)=(\S+)$", PREVIOUS_ENV.read_text(), re.MULTILINE))
    if set(found) != {"PREVIOUS_RELEASE", "PREVIOUS_RELEASE_COMMIT"}:
        raise ValueError(f"{PREVIOUS_ENV}: expected PREVIOUS_RELEASE and its commit, got {found}")
    return found["PREVIOUS_RELEASE"], found["PREVIOUS_RELEASE_COMMIT"]


def previous_release(crank: Path) -> Release:
    version, commit = pinned()
    home = cache_root() / "releases" / f"{version}-{commit[:12]}"
    release = Release(version, commit, home / "source", home / f"{FUNCTION_NAME}.xpkg")
    if not release.source.is_dir():
        home.mkdir(parents=True, exist_ok=True)
        source = Path(tempfile.mkdtemp(prefix="source.", dir=home))
        export(commit, source)
        # Only a complete export ever appears under the final name.
        source.rename(release.source)
    _check_same_dependencies(release)
    if not release.package.exists():
        _build_package(release, crank)
    return release


def export(commit: str, destination: Path) -> None:
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", commit],
        capture_output=True,
        check=False,
    )
    if archive.returncode != 0:
        raise RuntimeError(
            f"cannot export commit {commit} from main's history "
            f"(a shallow clone?): {archive.stderr.decode()}"
        )
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(destination, filter="data")


def _check_same_dependencies(release: Release) -> None:
    """Refuses a release whose locked wheels (or declared dependencies) this environment does not
    hold exactly. Wheels only the newer checkout locks are allowed: the older release's code
    never imports them (0.1.0 knows neither prometheus-client nor grpcio-health-checking)."""
    differ = [f for f in DEPENDENCY_FILES if not _locked(release.source / f) <= _locked(REPO / f)]
    if not _declared(release.source) <= _declared(REPO):
        differ.append("pyproject.toml dependencies")
    if differ:
        raise RuntimeError(
            f"release {release.version} locks other dependencies ({', '.join(differ)}): "
            "serving its source from this environment would not be that release"
        )


def _locked(lock: Path) -> set[str]:
    lines = (line.split("#", 1)[0].strip() for line in lock.read_text().splitlines())
    return {line for line in lines if line}


def _declared(root: Path) -> set[str]:
    with (root / "pyproject.toml").open("rb") as handle:
        return set(tomllib.load(handle)["project"]["dependencies"])


def _build_package(release: Release, crank: Path) -> None:
    _run(release, "make image", ["make", "-C", str(release.source), "image"], BUILD_SECONDS)
    # The release's examples/, as its `make xpkg` packs them (release 0.1.0 has none,
    # and crank then adds no examples layer).
    partial = release.package.with_suffix(".partial")
    _run(
        release,
        "crank xpkg build",
        [
            str(crank),
            "xpkg",
            "build",
            f"--package-root={release.source / 'package'}",
            f"--embed-runtime-image-tarball={release.source / 'build' / 'image.tar'}",
            f"--examples-root={release.source / 'examples'}",
            f"--package-file={partial}",
        ],
    )
    partial.rename(release.package)
    # The image is in the package now; the release's build folder is not kept twice.
    shutil.rmtree(release.source / "build", ignore_errors=True)


def _run(release: Release, step: str, argv: list[str], timeout: float | None = None) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"release {release.version}: {step} failed:\n{done.stderr[-3000:]}")


if __name__ == "__main__":
    # `make previous-release`: built before the suite starts, because the suite's workers run in
    # network namespaces of their own (shards.py), where pip and Debian's mirrors are out of reach.
    from .binaries import crank

    built = previous_release(crank() or Path("crank"))
    print(f"previous release {built.version}: {built.package}")
