"""What a platform team sets up before users create XRs: provider CRDs, the XRDs and
Compositions from apis/, provider configs and their credentials. (What CKS has in every cluster,
the NodePool CRD and the shared-vast StorageClass in manifests/, goes into each CKS cluster the
fake cloud creates: harness/e2e/workload.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.example_sets import documents
from harness.fixtures import credentials_secret

from . import kinds
from .controlplane import CROSSPLANE_NAMESPACE, ControlPlane
from .kube import Kind, is_true, wait_for

XR_NAMESPACE = "ml-team"
# Names the example XRs' spec.credentials point at.
COREWEAVE_CONFIG = "coreweave"
CIVO_CONFIG = "civo"
# The Secret the CoreWeave ProviderConfig reads the org token from.
CREDENTIALS_SECRET = "coreweave-credentials"
CIVO_CREDENTIALS_SECRET = "civo-credentials"
# CRDs and XRDs establish in a second or two; generous for a loaded machine.
ESTABLISH_SECONDS = 120
MANIFESTS = Path(__file__).resolve().parent / "manifests"
# The kinds a manifest file in this suite may hold, by apiVersion/kind.
KNOWN_KINDS = {
    (k.api_version, k.kind): k
    for k in (kinds.CRD, kinds.XRD, kinds.COMPOSITION, kinds.STORAGE_CLASS)
}


def apply_documents(plane: ControlPlane, path: Path) -> list[dict[str, Any]]:
    applied = []
    for doc in documents(path):
        kind = KNOWN_KINDS[(doc["apiVersion"], doc["kind"])]
        if kind == kinds.CRD:
            # provider-kubernetes' legacy cluster-scoped Object converts through a webhook
            # its package runtime would wire up; nothing here uses that API.
            doc["spec"].pop("conversion", None)
        applied.append(plane.api.apply(kind, doc))
    return applied


def wait_established(plane: ControlPlane, kind: Kind, names: list[str]) -> None:
    for name in names:

        def established(name: str = name) -> bool:
            return is_true(plane.api.get(kind, name), "Established")

        wait_for(f"{kind.kind} {name} to be Established", established, ESTABLISH_SECONDS)


def install_crds(plane: ControlPlane, directories: list[Path]) -> None:
    names = []
    for directory in directories:
        for path in sorted(directory.glob("*.yaml")):
            names += [crd["metadata"]["name"] for crd in apply_documents(plane, path)]
    wait_established(plane, kinds.CRD, names)


def install_apis(plane: ControlPlane, repo: Path, chart_repository: str) -> None:
    xrds = []
    for definition in sorted((repo / "apis").glob("*/definition.yaml")):
        xrds += [xrd["metadata"]["name"] for xrd in apply_documents(plane, definition)]
    wait_established(plane, kinds.XRD, xrds)
    wait_established(plane, kinds.CRD, xrds)
    for composition in sorted((repo / "apis").glob("*/composition.yaml")):
        for doc in documents(composition):
            plane.api.apply(kinds.COMPOSITION, mirrored(doc, chart_repository))


def mirrored(composition: dict[str, Any], chart_repository: str) -> dict[str, Any]:
    """The Composition as an air-gapped platform team edits it: the cluster-autoscaler chart
    from their own mirror (nothing here reaches kubernetes.github.io)."""
    for step in composition["spec"]["pipeline"]:
        autoscaler = step.get("input", {}).get("civo", {}).get("clusterAutoscaler")
        if autoscaler is not None:
            autoscaler["chartRepository"] = chart_repository
    return composition


def install_required_objects(plane: ControlPlane) -> None:
    """The XRs' namespace, and each cloud's ClusterProviderConfig reading its credentials
    Secret."""
    plane.api.apply(kinds.NAMESPACE, {"metadata": {"name": XR_NAMESPACE}})
    for kind, name, secret, token in (
        (kinds.COREWEAVE_PROVIDER_CONFIG, COREWEAVE_CONFIG, CREDENTIALS_SECRET, plane.org_token),
        (kinds.CIVO_PROVIDER_CONFIG, CIVO_CONFIG, CIVO_CREDENTIALS_SECRET, "civo-fake-token"),
    ):
        write_credentials(plane, secret, token)
        ref = {"name": secret, "namespace": CROSSPLANE_NAMESPACE, "key": "credentials"}
        spec = {"credentials": {"source": "Secret", "secretRef": ref}}
        plane.api.apply(kind, {"metadata": {"name": name}, "spec": spec})


def write_credentials(plane: ControlPlane, secret: str, token: str) -> None:
    """A cloud's credentials Secret as its provider reads it: `{"token": ...}` under
    `credentials`."""
    credentials = credentials_secret(token, namespace=CROSSPLANE_NAMESPACE)
    credentials["metadata"]["name"] = secret
    plane.api.apply(kinds.SECRET, credentials)
