"""The Configuration packages `make xpkg` builds (hack/configurations.py): no runtime, one layer
holding package.yaml (the package's metadata, its activation policy, the XRD and the Composition
calling the installed function dependency) and one holding the cloud's examples, each marked by
its io.crossplane.xpkg label, and nothing else."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
import yaml

from hack.configurations import CLOUDS, Cloud, load, packaged_composition
from tests.image.conftest import BUILD, ROOT, read_docker_archive
from tests.image.test_xpkg import (
    EXAMPLES_FILE,
    EXAMPLES_LAYER,
    PACKAGE_LAYER,
    by_kind_and_name,
    by_kind_namespace_and_name,
    layer_files,
    member_bytes,
)


def built(cloud: Cloud) -> Path:
    path = BUILD / cloud.package_file
    if not path.exists():
        pytest.skip(f"{path.relative_to(ROOT)} not found: run `make xpkg` (or `make image-test`)")
    return path


def expected_objects(cloud: Cloud) -> list[dict[str, Any]]:
    return [
        load(cloud.source / "crossplane.yaml"),
        load(cloud.source / "activation.yaml"),
        load(cloud.api / "definition.yaml"),
        packaged_composition(cloud),
    ]


def expected_examples(cloud: Cloud) -> list[dict[str, Any]]:
    files = [
        f for set_ in cloud.examples for f in sorted((ROOT / "examples" / set_).rglob("*.yaml"))
    ]
    return [doc for f in files for doc in yaml.safe_load_all(f.read_text()) if doc]


@pytest.mark.parametrize("cloud", CLOUDS, ids=lambda c: c.name)
def test_configuration_package_holds_its_api_and_examples_only(cloud: Cloud) -> None:
    xpkg = built(cloud)
    _, config, layers = read_docker_archive(xpkg)
    assert len(layers) == 2, "a Configuration has no runtime image"
    package_layer, examples_layer = (member_bytes(xpkg, layer) for layer in layers)
    assert config["config"]["Labels"] == {
        f"io.crossplane.xpkg:sha256:{hashlib.sha256(package_layer).hexdigest()}": PACKAGE_LAYER,
        f"io.crossplane.xpkg:sha256:{hashlib.sha256(examples_layer).hexdigest()}": EXAMPLES_LAYER,
    }
    files = layer_files(package_layer)
    assert list(files) == ["package.yaml"]
    # crank writes each object back from its Go type, which adds an empty status.
    packaged = [
        {k: v for k, v in d.items() if k != "status"}
        for d in yaml.safe_load_all(files["package.yaml"])
        if d
    ]
    assert by_kind_and_name(packaged) == by_kind_and_name(expected_objects(cloud))
    examples = layer_files(examples_layer)
    assert list(examples) == [EXAMPLES_FILE]
    shipped = [d for d in yaml.safe_load_all(examples[EXAMPLES_FILE]) if d]
    assert by_kind_namespace_and_name(shipped) == by_kind_namespace_and_name(
        expected_examples(cloud)
    )
