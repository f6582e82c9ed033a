"""The Function package: the runtime image's layers untouched, plus exactly one layer holding
package.yaml (the package/ metadata and the step-input CRD), marked by the io.crossplane.xpkg
label, and nothing else; and the upstream build command works from the repository root."""

from __future__ import annotations

import gzip
import hashlib
import io
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import yaml

from tests.image.conftest import ROOT, read_docker_archive

PACKAGE = ROOT / "package"
# Runtime settings the package must carry over from the image unchanged.
RUNTIME_KEYS = ("Entrypoint", "User", "Env", "ExposedPorts", "WorkingDir")


def member_bytes(archive_path: Path, name: str) -> bytes:
    with tarfile.open(archive_path) as archive:
        handle = archive.extractfile(name)
        assert handle is not None
        return handle.read()


def layer_files(compressed: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=gzip.GzipFile(fileobj=io.BytesIO(compressed))) as layer:
        files = {}
        for member in layer.getmembers():
            handle = layer.extractfile(member)
            files[member.name] = handle.read() if handle else b""
        return files


def expected_package_objects() -> list[dict[str, Any]]:
    files = [PACKAGE / "crossplane.yaml", *sorted(PACKAGE.glob("input/*.yaml"))]
    return [doc for f in files for doc in yaml.safe_load_all(f.read_text()) if doc]


def by_kind_and_name(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(objects, key=lambda o: (o["kind"], o["metadata"]["name"]))


def check_package_layer(xpkg: Path, layer: str, config: dict[str, Any]) -> None:
    compressed = member_bytes(xpkg, layer)
    digest = hashlib.sha256(compressed).hexdigest()
    assert config["config"]["Labels"] == {f"io.crossplane.xpkg:sha256:{digest}": "base"}
    files = layer_files(compressed)
    assert list(files) == ["package.yaml"]
    # crank writes each object back from its Go type, which adds an empty CRD status.
    packaged = [
        {k: v for k, v in d.items() if k != "status"}
        for d in yaml.safe_load_all(files["package.yaml"])
        if d
    ]
    assert by_kind_and_name(packaged) == by_kind_and_name(expected_package_objects())


def test_xpkg_is_the_runtime_image_plus_one_package_layer(xpkg: Path, image_tar: Path) -> None:
    _, config, layers = read_docker_archive(xpkg)
    _, runtime, runtime_layers = read_docker_archive(image_tar)
    assert len(layers) == len(runtime_layers) + 1
    assert config["rootfs"]["diff_ids"][:-1] == runtime["rootfs"]["diff_ids"]
    for package_layer, runtime_layer in zip(layers, runtime_layers, strict=False):
        assert member_bytes(xpkg, package_layer) == member_bytes(image_tar, runtime_layer)
    for key in RUNTIME_KEYS:
        assert config["config"].get(key) == runtime["config"].get(key), key
    check_package_layer(xpkg, layers[-1], config)


def test_upstream_build_command_works_from_the_repository_root(crank: str, tmp_path: Path) -> None:
    """`crossplane xpkg build -f package` with crank's default --examples-root=./examples: the
    render fixtures in example/ must not be picked up as package examples."""
    output = tmp_path / "package.xpkg"
    done = subprocess.run(
        [crank, "xpkg", "build", "-f", "package", "-o", str(output)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    _, config, layers = read_docker_archive(output)
    assert len(layers) == 1
    check_package_layer(output, layers[0], config)
