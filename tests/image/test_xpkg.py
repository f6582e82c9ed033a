"""The Function package: the runtime image's layers untouched, plus one layer holding
package.yaml (the package/ metadata and the step-input CRD) and one holding examples/ as
.up/examples.yaml, each marked by its io.crossplane.xpkg label, and nothing else; and the
upstream build command works from the repository root."""

from __future__ import annotations

import gzip
import hashlib
import io
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import yaml

from tests.image.conftest import ROOT, member, read_docker_archive

PACKAGE = ROOT / "package"
EXAMPLES = ROOT / "examples"
# What crank v2.2 labels each layer it adds with (internal/xpkg/name.go): the package's
# metadata and CRDs, and the examples registries and marketplaces show.
PACKAGE_LAYER, EXAMPLES_LAYER = "base", "upbound"
EXAMPLES_FILE = ".up/examples.yaml"
# Runtime settings the package must carry over from the image unchanged.
RUNTIME_KEYS = ("Entrypoint", "User", "Env", "ExposedPorts", "WorkingDir")


def member_bytes(archive_path: Path, name: str) -> bytes:
    with tarfile.open(archive_path) as archive:
        return bytes(member(archive, name).read())


def layer_files(compressed: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=gzip.GzipFile(fileobj=io.BytesIO(compressed))) as layer:
        files = {}
        for member in layer.getmembers():
            handle = layer.extractfile(member)
            files[member.name] = handle.read() if handle else b""
        return files


def documents(files: list[Path]) -> list[dict[str, Any]]:
    return [doc for f in files for doc in yaml.safe_load_all(f.read_text()) if doc]


def expected_package_objects() -> list[dict[str, Any]]:
    return documents([PACKAGE / "crossplane.yaml", *sorted(PACKAGE.glob("input/*.yaml"))])


def expected_examples() -> list[dict[str, Any]]:
    return documents(sorted(EXAMPLES.rglob("*.yaml")))


def in_order(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The objects sorted by what names them, so that two lists compare as sets of objects."""
    return sorted(
        objects,
        key=lambda o: (
            o["apiVersion"],
            o["kind"],
            o["metadata"].get("namespace", ""),
            o["metadata"]["name"],
        ),
    )


def check_package_layers(
    xpkg: Path,
    layers: list[str],
    config: dict[str, Any],
    objects: list[dict[str, Any]],
    examples_written: list[dict[str, Any]],
) -> None:
    """The package layer and the examples layer, in that order, each labelled by its digest:
    the package holding exactly `objects`, the examples exactly `examples_written`."""
    package_layer, examples_layer = (member_bytes(xpkg, layer) for layer in layers)
    assert config["config"]["Labels"] == {
        f"io.crossplane.xpkg:sha256:{hashlib.sha256(package_layer).hexdigest()}": PACKAGE_LAYER,
        f"io.crossplane.xpkg:sha256:{hashlib.sha256(examples_layer).hexdigest()}": EXAMPLES_LAYER,
    }
    files = layer_files(package_layer)
    assert list(files) == ["package.yaml"]
    # crank writes each object back from its Go type, which adds an empty CRD status.
    packaged = [
        {k: v for k, v in d.items() if k != "status"}
        for d in yaml.safe_load_all(files["package.yaml"])
        if d
    ]
    assert in_order(packaged) == in_order(objects)
    examples = layer_files(examples_layer)
    assert list(examples) == [EXAMPLES_FILE]
    # The examples as written (crank concatenates the files).
    shipped = [d for d in yaml.safe_load_all(examples[EXAMPLES_FILE]) if d]
    assert in_order(shipped) == in_order(examples_written)


def test_xpkg_is_the_runtime_image_plus_the_package_and_examples_layers(
    xpkg: Path, image_tar: Path
) -> None:
    config, layers = read_docker_archive(xpkg)
    runtime, runtime_layers = read_docker_archive(image_tar)
    assert len(layers) == len(runtime_layers) + 2
    assert config["rootfs"]["diff_ids"][:-2] == runtime["rootfs"]["diff_ids"]
    for package_layer, runtime_layer in zip(layers, runtime_layers, strict=False):
        assert member_bytes(xpkg, package_layer) == member_bytes(image_tar, runtime_layer)
    for key in RUNTIME_KEYS:
        assert config["config"].get(key) == runtime["config"].get(key), key
    check_package_layers(xpkg, layers[-2:], config, expected_package_objects(), expected_examples())


def test_upstream_build_command_works_from_the_repository_root(crank: str, tmp_path: Path) -> None:
    """`crossplane xpkg build -f package` with crank's default --examples-root=./examples packs
    examples/, and only that: the render stages in tests/stages/ are not examples."""
    output = tmp_path / "package.xpkg"
    done = subprocess.run(
        [crank, "xpkg", "build", "-f", "package", "-o", str(output)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    config, layers = read_docker_archive(output)
    assert len(layers) == 2
    check_package_layers(output, layers, config, expected_package_objects(), expected_examples())
