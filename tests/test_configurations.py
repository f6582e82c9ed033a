"""The Configuration packages (configurations/<cloud>/, built by hack/configurations.py): what
each depends on matches what this release is and what `make e2e` proves, its activation policy
activates exactly the managed-resource kinds its Composition composes, and its Composition is
apis/' own but for the name it calls the function by."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest
import yaml

from hack.configurations import (
    CLOUDS,
    HAND_INSTALLED_FUNCTION,
    Cloud,
    function_dependency,
    load,
    packaged_composition,
)
from harness.doc_commands import code_blocks
from harness.e2e.binaries import release_order, versions
from harness.e2e.packages import proven_provider_kubernetes
from harness.example_sets import ROOT, documents, example_sets
from harness.package_names import CONFIGURATION_CLOUDS, dependency_name
from harness.validator import shared_crds_dir

RELEASE = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
FUNCTION_PACKAGE = "xpkg.upbound.io/modelplane/function-inference-clusters"
# The name the package manager installs it under (dependency_name(FUNCTION_PACKAGE)).
INSTALLED_FUNCTION = "modelplane-function-inference-clusters"
# The provider packages each cloud depends on, and the range each admits: provider-kubernetes
# from the oldest to the newest release make e2e runs, so a fresh install resolves to a proven
# one; provider-helm from the release make e2e runs up to Modelplane's v1.4, which cannot be
# built here (docs/versions.md); the cloud providers from the first release with the
# namespaced kinds.
_PROVEN_KUBERNETES = sorted(proven_provider_kubernetes(), key=release_order)
PROVIDERS = {
    "coreweave": {
        "ghcr.io/fabioaraujopt/provider-coreweave": ">=v0.1.0",
        "xpkg.upbound.io/upbound/provider-kubernetes": (
            f">={_PROVEN_KUBERNETES[0]}, <={_PROVEN_KUBERNETES[-1]}"
        ),
    },
    "civo": {
        "xpkg.upbound.io/upbound/provider-civo": ">=v0.1.0",
        "xpkg.upbound.io/upbound/provider-helm": f">={versions()['PROVIDER_HELM_VERSION']}, <v1.5.0",
    },
}
BY_NAME = {cloud.name: cloud for cloud in CLOUDS}
EXAMPLES = ROOT / "examples"


def meta(cloud: Cloud) -> dict[str, Any]:
    return load(cloud.source / "crossplane.yaml")


def test_every_cloud_has_a_configuration() -> None:
    folders = sorted(p.name for p in (ROOT / "configurations").iterdir() if p.is_dir())
    assert folders == sorted(BY_NAME)
    # The e2e install pushes what the build builds.
    assert tuple(BY_NAME) == CONFIGURATION_CLOUDS


@pytest.mark.parametrize("cloud", CLOUDS, ids=lambda c: c.name)
def test_it_depends_on_this_release_of_the_function(cloud: Cloud) -> None:
    major, minor, _ = (int(part) for part in RELEASE.split("."))
    assert function_dependency(cloud) == {
        "apiVersion": "pkg.crossplane.io/v1",
        "kind": "Function",
        "package": FUNCTION_PACKAGE,
        "version": f">=v{RELEASE}, <v{major}.{minor + 1}.0",
    }


@pytest.mark.parametrize("cloud", CLOUDS, ids=lambda c: c.name)
def test_it_depends_on_the_providers_its_composition_needs(cloud: Cloud) -> None:
    providers = [d for d in meta(cloud)["spec"]["dependsOn"] if d["kind"] != "Function"]
    assert {d["package"]: d["version"] for d in providers} == PROVIDERS[cloud.name]
    assert all(
        d["apiVersion"] == "pkg.crossplane.io/v1" and d["kind"] == "Provider" for d in providers
    )


@pytest.mark.parametrize("cloud", CLOUDS, ids=lambda c: c.name)
def test_it_needs_the_crossplane_the_function_needs(cloud: Cloud) -> None:
    function_meta = load(ROOT / "package" / "crossplane.yaml")
    assert meta(cloud)["spec"]["crossplane"] == function_meta["spec"]["crossplane"]


def managed_kinds() -> dict[tuple[str, str], str]:
    """(group, kind) -> CRD name of every managed-resource kind in ../shared/crds."""
    crds = shared_crds_dir()
    if crds is None:
        pytest.skip("../shared/crds not found: the managed-resource kinds are unknown")
    found = {}
    for path in crds.rglob("*.yaml"):
        crd = yaml.safe_load(path.read_text())
        if "managed" in (crd["spec"]["names"].get("categories") or []):
            found[(crd["spec"]["group"], crd["spec"]["names"]["kind"])] = crd["metadata"]["name"]
    return found


def composed_managed_kinds(cloud: Cloud) -> set[str]:
    """The CRD names of the managed resources every rendered stage of the cloud's example sets
    composes."""
    managed = managed_kinds()
    kinds = {
        (doc["apiVersion"].split("/")[0], doc["kind"])
        for example in example_sets()
        if example.name in cloud.examples
        for doc in documents(example.stages / "rendered")
    }
    return {managed[kind] for kind in kinds if kind in managed}


@pytest.mark.parametrize("cloud", CLOUDS, ids=lambda c: c.name)
def test_its_activation_policy_activates_exactly_what_its_composition_composes(
    cloud: Cloud,
) -> None:
    policy = load(cloud.source / "activation.yaml")
    assert policy["apiVersion"] == "apiextensions.crossplane.io/v1alpha1"
    assert policy["kind"] == "ManagedResourceActivationPolicy"
    assert sorted(policy["spec"]["activate"]) == sorted(composed_managed_kinds(cloud))


@pytest.mark.parametrize("cloud", CLOUDS, ids=lambda c: c.name)
def test_its_composition_is_the_apis_own_calling_the_installed_dependency(cloud: Cloud) -> None:
    by_hand = load(cloud.api / "composition.yaml")
    packaged = packaged_composition(cloud)
    assert [s["functionRef"]["name"] for s in by_hand["spec"]["pipeline"]] == [
        HAND_INSTALLED_FUNCTION
    ]
    assert [s["functionRef"]["name"] for s in packaged["spec"]["pipeline"]] == [INSTALLED_FUNCTION]
    for step in packaged["spec"]["pipeline"]:
        step["functionRef"]["name"] = HAND_INSTALLED_FUNCTION
    assert packaged == by_hand


@pytest.mark.parametrize(
    ("package", "name"),
    [
        # The examples of Crossplane's own resolver tests and of Upbound's Configurations.
        (FUNCTION_PACKAGE, INSTALLED_FUNCTION),
        (
            "xpkg.crossplane.io/crossplane-contrib/function-patch-and-transform",
            "crossplane-contrib-function-patch-and-transform",
        ),
        ("ghcr.io/fabioaraujopt/provider-coreweave", "fabioaraujopt-provider-coreweave"),
        ("127.0.0.1:5000/modelplane/function-inference-clusters", INSTALLED_FUNCTION),
        ("localhost/team/fn", "team-fn"),
        # No registry: Docker Hub's, and the whole path is the repository.
        ("crossplane/provider-aws", "crossplane-provider-aws"),
        # At most 63 characters, a DNS label's limit.
        ("example.com/org/" + "a" * 66, "org-" + "a" * 59),
    ],
)
def test_the_dependency_name_is_crossplanes(package: str, name: str) -> None:
    assert dependency_name(package) == name


def test_the_install_example_names_this_releases_packages() -> None:
    """examples/configurations.yaml: the function under its dependency name, at this release,
    with examples/function-runtime.yaml's runtime config; provider-helm with its poll; each
    Configuration at this release."""
    installed = documents(EXAMPLES / "configurations.yaml")
    docs = {(d["kind"], d["metadata"]["name"]): d for d in installed}
    [runtime_config] = documents(EXAMPLES / "function-runtime.yaml")
    helm = "xpkg.upbound.io/upbound/provider-helm"
    assert sorted(docs) == [
        ("Configuration", "inference-clusters-civo"),
        ("Configuration", "inference-clusters-coreweave"),
        ("DeploymentRuntimeConfig", "provider-helm"),
        ("Function", dependency_name(FUNCTION_PACKAGE)),
        ("ImageConfig", "modelplane-packages"),
        ("Provider", dependency_name(helm)),
    ]
    # provider-helm under the name the Civo Configuration installs it as, at the version make
    # e2e runs (the lowest its range accepts: the package manager keeps it rather than pull the
    # newest), polling every minute.
    assert docs[("Provider", dependency_name(helm))]["spec"] == {
        "package": f"{helm}:{versions()['PROVIDER_HELM_VERSION']}",
        "runtimeConfigRef": {"name": "provider-helm"},
    }
    helm_runtime = docs[("DeploymentRuntimeConfig", "provider-helm")]["spec"]["deploymentTemplate"]
    assert helm_runtime["spec"]["template"]["spec"]["containers"] == [
        {"name": "package-runtime", "args": ["--poll=1m"]}
    ]
    function = docs[("Function", dependency_name(FUNCTION_PACKAGE))]
    assert function["spec"] == {
        "package": f"{FUNCTION_PACKAGE}:v{RELEASE}",
        "runtimeConfigRef": {"name": runtime_config["metadata"]["name"]},
    }
    for cloud in CLOUDS:
        name = meta(cloud)["metadata"]["name"]
        assert docs[("Configuration", f"inference-clusters-{cloud.name}")]["spec"] == {
            "package": f"xpkg.upbound.io/modelplane/{name}:v{RELEASE}"
        }
    assert docs[("ImageConfig", "modelplane-packages")]["spec"]["matchImages"] == [
        {"prefix": "xpkg.upbound.io/modelplane/"}
    ]


def test_the_readmes_composition_is_the_packaged_one_without_its_input() -> None:
    [block] = code_blocks((ROOT / "README.md").read_text(), "## In a Composition", "yaml")
    shown = yaml.safe_load(block)
    packaged = packaged_composition(BY_NAME["coreweave"])
    for step in packaged["spec"]["pipeline"]:
        del step["input"]
    assert shown == packaged
