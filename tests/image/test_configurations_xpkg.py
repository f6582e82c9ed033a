"""The Configuration packages `make xpkg` builds (hack/configurations.py): no runtime, one layer
holding package.yaml (the package's metadata, its activation policy, the XRD and the Composition
calling the installed function dependency) and one holding the cloud's examples, each marked by
its io.crossplane.xpkg label, and nothing else."""

from __future__ import annotations

from typing import Any

import pytest

from hack.configurations import CLOUDS, Cloud, load, packaged_composition
from tests.image.conftest import BUILD, ROOT, built, read_docker_archive
from tests.image.test_xpkg import check_package_layers, documents


def expected_objects(cloud: Cloud) -> list[dict[str, Any]]:
    return [
        load(cloud.source / "crossplane.yaml"),
        load(cloud.source / "activation.yaml"),
        load(cloud.api / "definition.yaml"),
        packaged_composition(cloud),
    ]


def expected_examples(cloud: Cloud) -> list[dict[str, Any]]:
    folders = [ROOT / "examples" / example for example in cloud.examples]
    return documents([f for folder in folders for f in sorted(folder.rglob("*.yaml"))])


@pytest.mark.parametrize("cloud", CLOUDS, ids=lambda c: c.name)
def test_configuration_package_holds_its_api_and_examples_only(cloud: Cloud) -> None:
    xpkg = built(BUILD / cloud.package_file, "xpkg")
    _, config, layers = read_docker_archive(xpkg)
    assert len(layers) == 2, "a Configuration has no runtime image"
    check_package_layers(xpkg, layers, config, expected_objects(cloud), expected_examples(cloud))
