"""The fake clouds' workload clusters: each Civo cluster and each CKS cluster the fake cloud
creates gets a real kube-apiserver of its own, on the control plane's etcd under a prefix of its
own, so it is a separate cluster that goes away, with everything in it, when the cloud deletes
the cluster, and that a test can stop as an outage stops a real one (`outage`, `recover`).

A Civo cluster's kubeconfig is what Civo hands out: the server, its CA and an admin client
certificate. As Civo does in every cluster, kube-system holds the `civo-api-access` Secret the
autoscaler reads; provider-helm installs the cluster-autoscaler chart into it.

A CKS cluster is reached as CKS is, with the kubeconfig the function writes: its endpoint and the
org token as bearer token (the API server knows the org tokens from its --token-auth-file). As
CKS does in every cluster, it serves the NodePool CRD and the shared-vast StorageClass; the fake
cloud plays CKS's NodePool controller in it.

Nothing runs pods here (no scheduler, no kubelet): Helm creates the Deployment, nothing runs it.
"""

from __future__ import annotations

import base64
import threading
from dataclasses import dataclass, field
from typing import Any

from harness.example_sets import documents
from harness.fixtures import free_port

from . import kinds
from .certs import issue
from .controlplane import ControlPlane, kubeconfig
from .kube import NO_ANSWER, Kube, is_true, serving
from .scene import MANIFESTS

# The CRD every CKS cluster serves NodePools with (harness/e2e/manifests/cks-nodepool-crd.yaml).
CKS_NODEPOOL_CRD = "nodepools.compute.coreweave.com"

# The Secret Civo puts in kube-system of every cluster, with the keys the chart's env reads.
CIVO_API_SECRET = "civo-api-access"
CIVO_API_URL = "https://api.civo.com"
KUBE_SYSTEM = "kube-system"
# What Helm's Secret storage driver labels each release revision with.
HELM_STORAGE_SELECTOR = "owner=helm"


@dataclass(frozen=True)
class LastLook:
    """What a cluster held when the cloud deleted it (None: its API server did not answer)."""

    # Helm release name -> status of its newest revision ("deployed", "failed", ...).
    helm_releases: dict[str, str] | None
    deployments: list[str] | None
    # CKS NodePools, which CKS deletes with the cluster.
    nodepools: list[str] | None


@dataclass
class Workload:
    cluster_id: str
    # "civo" or "cks".
    cloud: str
    process: str
    port: int
    api: Kube
    kubeconfig: dict[str, Any]
    seeded: bool = False


@dataclass
class WorkloadClusters:
    plane: ControlPlane
    last_looks: dict[str, LastLook] = field(default_factory=dict)
    _clusters: dict[str, Workload] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def serving(self, cluster_id: str, cloud: str, region: str) -> Workload | None:
        """The cluster, once its API server answers and holds what that cloud puts in every
        cluster; starts its API server on the first call (the fake cloud's cluster stays
        BUILDING, or STATUS_CREATING, until then)."""
        with self._lock:
            workload = self._clusters.get(cluster_id) or self._start(cluster_id, cloud)
        if not workload.seeded and self.plane.processes.ready_now(workload.process):
            workload.seeded = (
                _seed_cks(workload) if workload.cloud == "cks" else _seed_civo(workload, region)
            )
        return workload if workload.seeded else None

    def outage(self, cluster_id: str) -> None:
        """The cluster's API server stops answering (killed, as a control-plane outage ends it);
        what is in it stays, on etcd."""
        self.plane.processes.kill(self.get(cluster_id).process)

    def recover(self, cluster_id: str) -> None:
        """The cluster's API server answers again, with everything it held."""
        self.plane.processes.restart(self.get(cluster_id).process)

    def answering(self, cloud: str) -> list[Workload]:
        """That cloud's clusters whose API server runs (not in an outage) and is seeded."""
        with self._lock:
            found = [w for w in self._clusters.values() if w.cloud == cloud and w.seeded]
        return [w for w in found if self.plane.processes.running(w.process)]

    def running(self) -> list[str]:
        """The IDs of the clusters the cloud has not deleted."""
        with self._lock:
            return sorted(self._clusters)

    def get(self, cluster_id: str) -> Workload:
        with self._lock:
            found = self._clusters.get(cluster_id)
            known = sorted(self._clusters)
        if found is None:
            raise LookupError(f"the fake cloud runs no Civo cluster {cluster_id}; it runs {known}")
        return found

    def delete(self, cluster_id: str) -> None:
        """What deleting a cluster does to what runs in it: a last look, then it is gone."""
        with self._lock:
            workload = self._clusters.pop(cluster_id, None)
        if workload is None:
            return
        if workload.seeded:
            self.last_looks[cluster_id] = _look(workload.api)
        self.plane.processes.stop(workload.process)

    def _start(self, cluster_id: str, cloud: str) -> Workload:
        plane = self.plane
        port = free_port()
        process = f"{cloud}-cluster-{cluster_id}"
        pki = plane.work / "pki"
        api = Kube(port, plane.ca_file, pki / "admin.crt", pki / "admin.key")
        argv = plane.apiserver_argv(port, f"/{cloud}/{cluster_id}")
        if cloud == "cks":  # reached with the org token as bearer token
            argv.append(f"--token-auth-file={plane.tokens_file}")
        plane.processes.start(process, argv, ready=lambda: serving(api))
        admin = issue(
            plane.ca, f"{cloud}-{cluster_id}-admin", organization="system:masters", client=True
        )
        user = {
            "client-certificate-data": base64.b64encode(admin.cert_pem).decode(),
            "client-key-data": base64.b64encode(admin.key_pem).decode(),
        }
        config = kubeconfig(f"https://127.0.0.1:{port}", plane.ca.cert_pem, user)
        workload = Workload(cluster_id, cloud, process, port, api, config)
        self._clusters[cluster_id] = workload
        return workload


def _seed_cks(workload: Workload) -> bool:
    """The NodePool CRD and the shared-vast StorageClass, as in every CKS cluster; True once the
    CRD is served."""
    for doc in documents(MANIFESTS / "cks-nodepool-crd.yaml"):
        workload.api.apply(kinds.CRD, doc)
    for doc in documents(MANIFESTS / "shared-vast-storageclass.yaml"):
        workload.api.apply(kinds.STORAGE_CLASS, doc)
    crd = workload.api.get(kinds.CRD, CKS_NODEPOOL_CRD)
    return is_true(crd, "Established")


def _seed_civo(workload: Workload, region: str) -> bool:
    string_data = {
        "api-key": f"civo-e2e-key-{workload.cluster_id}",
        "api-url": CIVO_API_URL,
        "cluster-id": workload.cluster_id,
        "region": region,
    }
    metadata = {"name": CIVO_API_SECRET, "namespace": KUBE_SYSTEM}
    workload.api.apply(kinds.SECRET, {"metadata": metadata, "stringData": string_data})
    return True


def helm_revisions(api: Kube) -> dict[str, tuple[int, str]]:
    """Helm release name -> (newest revision, its status: "deployed", "failed", ...), from Helm's
    Secret storage in kube-system."""
    newest: dict[str, tuple[int, str]] = {}
    for secret in api.list(kinds.SECRET, KUBE_SYSTEM, labels=HELM_STORAGE_SELECTOR):
        labels = secret["metadata"].get("labels") or {}
        revision = int(labels.get("version", "0"))
        name = labels.get("name", "")
        if revision >= newest.get(name, (0, ""))[0]:
            newest[name] = (revision, labels.get("status", ""))
    return dict(sorted(newest.items()))


def helm_releases(api: Kube) -> dict[str, str]:
    return {name: status for name, (_, status) in helm_revisions(api).items()}


def _look(api: Kube) -> LastLook:
    try:
        deployments = [d["metadata"]["name"] for d in api.list(kinds.DEPLOYMENT, KUBE_SYSTEM)]
        pools = [p["metadata"]["name"] for p in api.list(kinds.CKS_NODEPOOL)]
        return LastLook(helm_releases(api), sorted(deployments), sorted(pools))
    except NO_ANSWER:
        # Deleted during an outage: what it held is gone with it, unseen.
        return LastLook(None, None, None)
