"""The packages a Configuration depends on, built and served the way a registry serves them.

The Configuration packages (configurations/, built by hack/configurations.py) name their
dependencies by public references: the function at xpkg.upbound.io/modelplane, the providers at
xpkg.upbound.io/upbound and ghcr.io/fabioaraujopt. None of those registries can be reached
here, so the suite pushes a package for each to its own registry under the same repository path
and has Crossplane rewrite the public prefixes to it with ImageConfigs, as a platform team with a
registry mirror does. The provider packages carry the real providers' metadata (SafeStart
included) and CRDs: provider-kubernetes' and provider-helm's from the modules their binaries are
built from, provider-coreweave's and provider-civo's from ../shared/crds (their runtimes are the
fake cloud's). With `--package-runtime=External` Crossplane runs none of them; the suite does.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import yaml

from harness.example_sets import documents
from harness.package_names import (
    CONFIGURATION_CLOUDS,
    configuration_package_file,
    declared,
    dependency_name,
)

from . import kinds
from .binaries import REPO, provider_kubernetes, release_order, rows, versions
from .controlplane import ControlPlane
from .kube import Kind, is_true, wait_for
from .runtime import (
    FUNCTION_NAME,
    INSTALL_SECONDS,
    MAKE_XPKG_OUTPUT,
    build_xpkg,
    package_version,
    push,
    report_runtime_status,
    reports,
    write_tls_secret,
)
from .suite import SHARED_CRDS

# The public registry prefixes the Configuration packages name, each mirrored in the suite's
# registry under the same path: the function's (examples/configurations.yaml has users rewrite
# it to their own registry) and the providers'.
FUNCTION_PREFIX = "xpkg.upbound.io/modelplane/"
PROVIDER_PREFIXES = ("xpkg.upbound.io/upbound/", "ghcr.io/fabioaraujopt/")


@dataclasses.dataclass(frozen=True)
class ProviderPackage:
    package: str  # the public reference, without a tag, as a Configuration names it
    version: str
    crds: Path  # the folder of its CRD files
    # The real crossplane.yaml; None: written here, SafeStart as the provider's source declares.
    meta: Path | None = None

    @property
    def name(self) -> str:
        """metadata.name of its crossplane.yaml: the package's last path segment."""
        return self.package.rsplit("/", 1)[1]

    def local(self, registry_port: int) -> str:
        return f"127.0.0.1:{registry_port}/{self.package.split('/', 1)[1]}:{self.version}"


def real_meta(module: str, version: str) -> Path:
    """A provider's own package metadata, from its module's source in the Go module cache, where
    building its binary left it."""
    cache = subprocess.run(
        ["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=False
    ).stdout.strip()
    meta = Path(cache) / f"{module}@{version}" / "package" / "crossplane.yaml"
    if not cache or not meta.is_file():
        raise RuntimeError(f"{meta} not found: run `make controlplane`, which downloads {module}")
    return meta


# Provider releases newer than any make e2e proves, which the suite's registry serves beside the
# proven ones so that the install shows what the package manager picks when a registry has
# them, as the public one does (provider-kubernetes v1.4.1 and provider-helm v1.4.1 are
# published, and neither builds here). Each stand-in carries the metadata and CRDs of the
# newest proven release under the newer tag: the package manager picks by tag alone.
UNTESTED_NEWER = {"provider-kubernetes": "v1.4.1", "provider-helm": "v1.4.1"}


def proven_provider_kubernetes() -> list[str]:
    """Every provider-kubernetes the matrix runs, oldest last as in MATRIX_ROWS."""
    return list(dict.fromkeys(row.provider_kubernetes for row in rows()))


def newest(versions_: list[str]) -> str:
    return max(versions_, key=release_order)


def provider_packages(shared_crds: Path, helm_crds: Path) -> list[ProviderPackage]:
    """Every provider package the suite's registry serves: each provider-kubernetes of the
    matrix, provider-helm, the untested newer stand-ins, and the cloud providers."""
    helm_version = versions()["PROVIDER_HELM_VERSION"]

    def kubernetes(version: str, tag: str) -> ProviderPackage:
        _, crds = provider_kubernetes(version)
        meta = real_meta("github.com/crossplane-contrib/provider-kubernetes", version)
        return ProviderPackage("xpkg.upbound.io/upbound/provider-kubernetes", tag, crds, meta)

    def helm(tag: str) -> ProviderPackage:
        meta = real_meta("github.com/crossplane-contrib/provider-helm", helm_version)
        return ProviderPackage("xpkg.upbound.io/upbound/provider-helm", tag, helm_crds, meta)

    def cloud(package: str, crds: str) -> ProviderPackage:
        return ProviderPackage(package, "v0.1.0", shared_crds / crds)

    proven = proven_provider_kubernetes()
    return [
        *(kubernetes(version, version) for version in proven),
        kubernetes(newest(proven), UNTESTED_NEWER["provider-kubernetes"]),
        helm(helm_version),
        helm(UNTESTED_NEWER["provider-helm"]),
        cloud("ghcr.io/fabioaraujopt/provider-coreweave", "coreweave"),
        cloud("xpkg.upbound.io/upbound/provider-civo", "civo"),
    ]


def _meta(provider: ProviderPackage) -> dict[str, Any]:
    if provider.meta is not None:
        meta: dict[str, Any] = yaml.safe_load(provider.meta.read_text())
        return meta
    return {
        "apiVersion": "meta.pkg.crossplane.io/v1",
        "kind": "Provider",
        "metadata": {"name": provider.name},
        "spec": {"capabilities": ["SafeStart"]},
    }


def build_provider(plane: ControlPlane, provider: ProviderPackage) -> Path:
    """The provider's package, runtime-less: its metadata and CRDs."""
    stage = plane.work / "packages" / provider.name
    if stage.exists():
        shutil.rmtree(stage)
    (stage / "crds").mkdir(parents=True)
    (stage / "examples").mkdir()
    (stage / "crossplane.yaml").write_text(yaml.safe_dump(_meta(provider)))
    for crd in sorted(provider.crds.glob("*.yaml")):
        shutil.copy(crd, stage / "crds" / crd.name)
    output = plane.work / "packages" / f"{provider.name}-{provider.version}.xpkg"
    return build_xpkg(plane, f"xpkg-build-{provider.name}", stage, stage / "examples", output)


def mirror_public_registries(plane: ControlPlane, prefixes: tuple[str, ...]) -> None:
    for prefix in prefixes:
        name = "mirror-" + prefix.rstrip("/").replace("/", "-").replace(".", "-")
        mirror = f"127.0.0.1:{plane.registry_port}/{prefix.split('/', 1)[1]}"
        spec = {"matchImages": [{"prefix": prefix}], "rewriteImage": {"prefix": mirror}}
        plane.api.apply(kinds.IMAGE_CONFIG, {"metadata": {"name": name}, "spec": spec})


def report_runtime(
    plane: ControlPlane, kind: Kind, revision: dict[str, Any], endpoint: str | None = None
) -> bool:
    """What an External runtime reports for a provider or function revision, so that Crossplane
    establishes its objects and calls it healthy: a TLS server Secret signed by Crossplane's
    root CA (the establisher reads its tls.crt), status.tlsServerSecretName, the `endpoint`
    Crossplane dials a function at (if given) and RuntimeHealthy. True once the revision carries
    them all; a write that lost a race is retried next time."""
    name = revision["metadata"]["name"]
    wanted = {"tlsServerSecretName": f"{name}-tls-server"[:253]}
    if endpoint is not None:
        wanted["endpoint"] = endpoint
    if reports(revision, wanted):
        return True
    write_tls_secret(plane, wanted["tlsServerSecretName"], name, (name,))
    report_runtime_status(plane, kind, revision, wanted)
    return False


# The label naming the package a revision belongs to.
PARENT_PACKAGE = "pkg.crossplane.io/package"
# What the suite applies of examples/configurations.yaml, by kind (its ImageConfig names a
# registry the suite's own ImageConfigs stand in for).
USER_APPLIED = {
    "DeploymentRuntimeConfig": kinds.DEPLOYMENT_RUNTIME_CONFIG,
    "Function": kinds.FUNCTION,
    "Provider": kinds.PROVIDER,
    "Configuration": kinds.CONFIGURATION,
}
PACKAGE_KINDS = ("Function", "Provider", "Configuration")


# The XRDs (and XR CRDs and Compositions) the Configurations install, by name.
API_NAMES = [
    f"{plural}.infrastructure.modelplane.ai" for plural in ("coreweaveclusters", "civoclusters")
]


def identities(plane: ControlPlane) -> dict[str, str]:
    """The UIDs of the XRDs, the XR CRDs they made and the Compositions."""
    found = {}
    for kind in (kinds.XRD, kinds.CRD, kinds.COMPOSITION):
        for name in API_NAMES:
            obj = plane.api.get(kind, name) or {}
            found[f"{kind.kind}/{name}"] = obj.get("metadata", {}).get("uid", "missing")
    return found


def configuration_file(repo: Path, cloud: str) -> Path:
    return repo / "build" / configuration_package_file(cloud)


def function_file(repo: Path) -> Path:
    return repo / MAKE_XPKG_OUTPUT


def serve_providers(plane: ControlPlane, shared_crds: Path) -> None:
    """Pushes the provider packages to the suite's registry and has Crossplane pull every
    package named under their public prefixes from there, as from a registry mirror."""
    for provider in provider_packages(shared_crds, plane.binaries.provider_helm_crds):
        push(plane, build_provider(plane, provider), provider.local(plane.registry_port))
    mirror_public_registries(plane, PROVIDER_PREFIXES)


def brought_by_configurations(repo: Path) -> set[str]:
    """The packages installing the Configurations brings: what examples/configurations.yaml
    creates, and every dependency, by the name the package manager gives it."""
    created = {
        doc["metadata"]["name"]
        for doc in documents(repo / "examples" / "configurations.yaml")
        if doc["kind"] in PACKAGE_KINDS
    }
    return created | {
        dependency_name(d["package"]) for cloud in CONFIGURATION_CLOUDS for d in declared(cloud)
    }


def report_package_runtimes(
    plane: ControlPlane, brought: set[str], function_endpoint: str | None = None
) -> bool:
    """Plays the External runtime for the revisions of the `brought` packages (the function's
    served at `function_endpoint`, where a function already runs): True once each of those
    packages exists, Installed and Healthy. One look; call it until it is True."""
    reported = [
        report_runtime(
            plane, kind, revision, function_endpoint if kind is kinds.FUNCTION_REVISION else None
        )
        for kind in (kinds.PROVIDER_REVISION, kinds.FUNCTION_REVISION)
        for revision in plane.api.list(kind)
        if revision["metadata"].get("labels", {}).get(PARENT_PACKAGE) in brought
    ]
    packages = {
        p["metadata"]["name"]: p
        for kind in (kinds.CONFIGURATION, kinds.PROVIDER, kinds.FUNCTION)
        for p in plane.api.list(kind)
        if p["metadata"]["name"] in brought
    }
    return (
        all(reported)
        and set(packages) == brought
        and all(is_true(p, "Healthy") and is_true(p, "Installed") for p in packages.values())
    )


def install_configurations(plane: ControlPlane, function_endpoint: str | None = None) -> float:
    """Serves every package the Configurations depend on from the suite's registry, has
    Crossplane rewrite the public prefixes to it, installs both Configurations as a user does
    (a Configuration naming each package) and plays the runtime for the packages they bring
    (the function's revision served at `function_endpoint`, where a function already runs);
    returns the seconds from the Configurations' creation until every package is Healthy.
    Packages installed before (a Function installed by hand) are left as they are."""
    version = f"v{package_version()}"
    serve_providers(plane, SHARED_CRDS)
    port = plane.registry_port
    push(plane, function_file(REPO), f"127.0.0.1:{port}/modelplane/{FUNCTION_NAME}:{version}")
    for cloud in CONFIGURATION_CLOUDS:
        push(plane, configuration_file(REPO, cloud), configuration_reference(port, cloud, version))
    mirror_public_registries(plane, (FUNCTION_PREFIX,))
    # As examples/configurations.yaml has a user install them: the runtime config of
    # examples/function-runtime.yaml, the function pre-created under its dependency name, then
    # the Configurations by their public references (the suite's ImageConfigs stand in for the
    # example's, which names registry.example.com).
    for doc in documents(REPO / "examples" / "function-runtime.yaml"):
        if doc["kind"] == "DeploymentRuntimeConfig":
            plane.api.apply(kinds.DEPLOYMENT_RUNTIME_CONFIG, doc)
    started = time.monotonic()
    for doc in documents(REPO / "examples" / "configurations.yaml"):
        if doc["kind"] in USER_APPLIED:
            plane.api.apply(USER_APPLIED[doc["kind"]], doc)
    brought = brought_by_configurations(REPO)
    wait_for(
        "both Configurations and what they depend on Installed and Healthy",
        lambda: report_package_runtimes(plane, brought, function_endpoint),
        INSTALL_SECONDS,
        interval=1,
    )
    return time.monotonic() - started


def configuration_reference(registry_port: int, cloud: str, version: str) -> str:
    return (
        f"127.0.0.1:{registry_port}/modelplane/configuration-inference-clusters-{cloud}:{version}"
    )
