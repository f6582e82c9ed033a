"""The real provider-helm, run on the host against the control plane's API server.

It reconciles the cluster-autoscaler Release every CivoCluster with an autoscaled pool composes,
through the helm ProviderConfig the function composes, that is through the Civo cluster's
connection Secret: a kubeconfig for that cluster's own kube-apiserver
(harness/e2e/workload.py). It pulls the chart from a chart repository the harness serves
(harness/e2e/charts.py) and trusts that repository's certificate through SSL_CERT_FILE.

Ports: none. hack/controlplane/build-provider-helm.sh links it with controller-runtime's metrics
address "0" (by default it would bind :8080, the port provider-kubernetes binds), it serves no
webhook and has no health-probe flag. provider-kubernetes binds 9443 and 8080
(harness/e2e/providerkubernetes.py). Its chart cache, relative to its working folder by
the same build, is this run's own.
"""

from __future__ import annotations

from .controlplane import STARTUP_SECONDS, ControlPlane

PROCESS_NAME = "provider-helm"
# After a Helm upgrade provider-helm leaves the Release Unavailable (it saw the old values) and
# observes it again only after --poll, 10 m by default: the CivoCluster is not Ready that long
# after every change to an autoscaled pool. What docs/troubleshooting.md recommends (1m) or, here, shorter.
POLL = "30s"
# provider-helm logs this once the namespaced Release CRD is served and it sets up the Release
# controller (its CRD gate); controller-runtime's own lines, such as "Starting workers", never
# reach its log (it sets controller-runtime's logger twice, and only the first, a discarding
# one, takes).
RELEASE_CONTROLLER_SET_UP = ("gvk is ready", '"helm.m.crossplane.io/v1beta1, Kind=Release"')


class ProviderHelm:
    def __init__(self, plane: ControlPlane) -> None:
        self.plane = plane
        self.work = plane.work / PROCESS_NAME

    def start(self, proxy: str) -> None:
        """Starts it with `proxy` as its HTTPS proxy: how it reaches public chart repositories
        (harness/e2e/proxy.py)."""
        plane = self.plane
        self.work.mkdir(parents=True, exist_ok=True)
        plane.processes.start(
            PROCESS_NAME,
            [str(plane.binaries.provider_helm), "--debug", f"--poll={POLL}"],
            env={
                "KUBECONFIG": str(plane.admin_kubeconfig),
                "SSL_CERT_FILE": str(plane.ca_file),
                "HTTPS_PROXY": proxy,
            },
            cwd=self.work,
            ready=self._release_controller_set_up,
            ready_within=STARTUP_SECONDS,
        )

    def _release_controller_set_up(self) -> bool:
        log = self.plane.processes.log_dir / f"{PROCESS_NAME}.log"
        return any(
            all(part in line for part in RELEASE_CONTROLLER_SET_UP)
            for line in log.read_text(errors="replace").splitlines()
        )

    def forget_charts(self) -> None:
        """Empties its chart cache, so the next install pulls again."""
        for archive in (self.work / "charts").glob("*.tgz"):
            archive.unlink()
