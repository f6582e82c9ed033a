"""The fake Civo clusters' own Kubernetes: each Civo cluster the fake cloud creates gets a real
kube-apiserver of its own, on the control plane's etcd under a prefix of its own, so it is a
separate cluster that provider-helm installs the cluster-autoscaler chart into, and that goes
away, with everything in it, when the cloud deletes the cluster.

Its kubeconfig is what Civo hands out: the server, its CA and an admin client certificate. As
Civo does in every cluster, kube-system holds the `civo-api-access` Secret the autoscaler reads.
Nothing runs pods here (no scheduler, no kubelet): Helm creates the Deployment, nothing runs it.
"""

from __future__ import annotations

import base64
import threading
from dataclasses import dataclass, field
from typing import Any

from harness.fixtures import free_port

from . import kinds
from .certs import issue
from .controlplane import ControlPlane, kubeconfig
from .kube import Kube, serving

# The Secret Civo puts in kube-system of every cluster, with the keys the chart's env reads.
CIVO_API_SECRET = "civo-api-access"
CIVO_API_URL = "https://api.civo.com"
KUBE_SYSTEM = "kube-system"
# What Helm's Secret storage driver labels each release revision with.
HELM_STORAGE_SELECTOR = "owner=helm"


@dataclass(frozen=True)
class LastLook:
    """What a cluster held when the cloud deleted it."""

    # Helm release name -> status of its newest revision ("deployed", "failed", ...).
    helm_releases: dict[str, str]
    deployments: list[str]


@dataclass
class Workload:
    cluster_id: str
    process: str
    port: int
    api: Kube
    kubeconfig: dict[str, Any]
    seeded: bool = False

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.port}"


@dataclass
class WorkloadClusters:
    plane: ControlPlane
    last_looks: dict[str, LastLook] = field(default_factory=dict)
    _clusters: dict[str, Workload] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def serving(self, cluster_id: str, region: str) -> Workload | None:
        """The cluster, once its API server answers and Civo's Secret is in it; starts its API
        server on the first call (the fake cloud's cluster stays BUILDING until then)."""
        with self._lock:
            workload = self._clusters.get(cluster_id) or self._start(cluster_id)
        if not workload.seeded:
            if not self.plane.processes.ready_now(workload.process):
                return None
            _seed(workload, region)
            workload.seeded = True
        return workload

    def get(self, cluster_id: str) -> Workload:
        with self._lock:
            found = self._clusters.get(cluster_id)
            known = sorted(self._clusters)
        if found is None:
            raise LookupError(f"the fake cloud runs no Civo cluster {cluster_id}; it runs {known}")
        return found

    def delete(self, cluster_id: str) -> None:
        """What deleting a Civo cluster does to what runs in it: a last look, then it is gone."""
        with self._lock:
            workload = self._clusters.pop(cluster_id, None)
        if workload is None:
            return
        if workload.seeded:
            self.last_looks[cluster_id] = _look(workload.api)
        self.plane.processes.stop(workload.process)

    def _start(self, cluster_id: str) -> Workload:
        plane = self.plane
        assert plane.ca is not None
        port = free_port()
        process = f"civo-cluster-{cluster_id}"
        pki = plane.work / "pki"
        api = Kube(port, plane.ca_file, pki / "admin.crt", pki / "admin.key")
        plane.processes.start(
            process, plane.apiserver_argv(port, f"/civo/{cluster_id}"), ready=lambda: serving(api)
        )
        admin = issue(
            plane.ca, f"civo-{cluster_id}-admin", organization="system:masters", client=True
        )
        user = {
            "client-certificate-data": _b64(admin.cert_pem),
            "client-key-data": _b64(admin.key_pem),
        }
        config = kubeconfig(f"https://127.0.0.1:{port}", plane.ca.cert_pem, user)
        workload = Workload(cluster_id, process, port, api, config)
        self._clusters[cluster_id] = workload
        return workload


def _seed(workload: Workload, region: str) -> None:
    workload.api.apply(
        kinds.SECRET,
        {
            "metadata": {"name": CIVO_API_SECRET, "namespace": KUBE_SYSTEM},
            "stringData": {
                "api-key": f"civo-e2e-key-{workload.cluster_id}",
                "api-url": CIVO_API_URL,
                "cluster-id": workload.cluster_id,
                "region": region,
            },
        },
    )


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
    """Helm release name -> the status of its newest revision."""
    return {name: status for name, (_, status) in helm_revisions(api).items()}


def _look(api: Kube) -> LastLook:
    deployments = [d["metadata"]["name"] for d in api.list(kinds.DEPLOYMENT, KUBE_SYSTEM)]
    return LastLook(helm_releases(api), sorted(deployments))


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()
