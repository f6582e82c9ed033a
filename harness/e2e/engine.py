"""The Crossplane engines the suite proves, from the version matrix, and what each one does
differently that a test asserts.

Every difference here was read from that Crossplane's source (github.com/crossplane/crossplane/v2
at the version named) and is asserted by the suite on the running engine, so a changed behaviour
fails a test rather than passing unnoticed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .binaries import Row, rows, versions

# Crossplane v2.2.0 stopped installing any object from a Function package: its FunctionRevision
# controller wraps the establisher in an empty filter ("The xpkg spec allows for CRDs to be
# included in function packages, but states that they will not be installed",
# internal/controller/pkg/revision/reconciler.go).
INSTALLS_FUNCTION_PACKAGE_CRDS_BEFORE = (2, 2, 0)
# Crossplane v2.4.0 tracks the resources each step required: it seeds the step's next first call
# with them and stops after that call when they already satisfy its requirements
# (composite/composition_functions.go, xfn/required_resources.go), and it watches them, so a
# changed one triggers a reconcile instead of waiting for the poll.
TRACKS_REQUIRED_RESOURCES_FROM = (2, 4, 0)


def _semver(version: str) -> tuple[int, int, int]:
    match = re.fullmatch(r"v(\d+)\.(\d+)\.(\d+)", version)
    if match is None:
        raise ValueError(f"not a Crossplane release version: {version!r}")
    return int(match[1]), int(match[2]), int(match[3])


@dataclass(frozen=True)
class Engine:
    version: str
    # The primary engine runs every test; the others only those marked `every_engine`.
    primary: bool
    # What runs under it, from the same matrix: named in every test ID.
    kubernetes: str = ""
    provider_kubernetes: str = ""
    provider_helm: str = ""

    @property
    def label(self) -> str:
        """How test IDs and summary lines name the engine: `crossplane-v2.4.0`."""
        return f"crossplane-{self.version}"

    @property
    def test_id(self) -> str:
        """How a test's ID names what it ran on: the engine and everything under it, so each
        line of `make e2e` says which versions it proved."""
        return (
            f"{self.label}+kubernetes-{self.kubernetes}"
            f"+provider-kubernetes-{self.provider_kubernetes}+provider-helm-{self.provider_helm}"
        )

    @property
    def installs_function_package_crds(self) -> bool:
        return _semver(self.version) < INSTALLS_FUNCTION_PACKAGE_CRDS_BEFORE

    @property
    def seeds_required_resources(self) -> bool:
        return _semver(self.version) >= TRACKS_REQUIRED_RESOURCES_FROM

    # Whether a changed required resource (a rotated credentials Secret) reconciles the XR at
    # once rather than at its next poll: the release that seeds them watches them.
    watches_required_resources = seeds_required_resources

    @property
    def row(self) -> Row:
        """Its row of the matrix: what harness/e2e/binaries.py locates its binaries by."""
        return Row(self.version, self.kubernetes, self.provider_kubernetes)

    def calls_per_converged_reconcile(self, requires_resources: bool) -> int:
        """The function calls one converged reconcile of an XR takes.

        Before v2.4 the requirements loop starts every reconcile with a call that carries no
        required resources, and calls again with what it asked for: two calls for an XR whose
        step requires resources. From v2.4 the first call already carries them, and Crossplane
        stops there when the answer asks for the same ones.
        """
        if requires_resources and not self.seeds_required_resources:
            return 2
        return 1


def engines() -> list[Engine]:
    matrix = rows()
    for row in matrix:
        _semver(row.crossplane)
    helm = versions()["PROVIDER_HELM_VERSION"]
    return [
        Engine(
            row.crossplane,
            primary=index == 0,
            kubernetes=row.kubernetes,
            provider_kubernetes=row.provider_kubernetes,
            provider_helm=helm,
        )
        for index, row in enumerate(matrix)
    ]
