"""The Configuration packages `make xpkg` builds (hack/configurations.py): no runtime, one layer
holding package.yaml (the package's metadata, its activation policy, the XRD and the Composition
calling the installed function dependency) and one holding the cloud's examples, each marked by
its io.crossplane.xpkg label, and nothing else."""

from __future__ import annotations

import pytest

from hack.configurations import CLOUDS, Cloud, load, packaged_composition
from harness.package_names import configuration_package_file
from tests.image.conftest import BUILD, ROOT, built, read_docker_archive
from tests.image.test_xpkg import check_package_layers, documents


@pytest.mark.parametrize("cloud", CLOUDS, ids=lambda c: c.name)
def test_configuration_package_holds_its_api_and_examples_only(cloud: Cloud) -> None:
    xpkg = built(BUILD / configuration_package_file(cloud.name), "xpkg")
    config, layers = read_docker_archive(xpkg)
    assert len(layers) == 2, "a Configuration has no runtime image"
    objects = [
        load(cloud.source / "crossplane.yaml"),
        load(cloud.source / "activation.yaml"),
        load(cloud.api / "definition.yaml"),
        packaged_composition(cloud),
    ]
    folders = [ROOT / "examples" / example for example in cloud.examples]
    examples = documents([f for folder in folders for f in sorted(folder.rglob("*.yaml"))])
    check_package_layers(xpkg, layers, config, objects, examples)
