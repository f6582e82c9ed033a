"""The real provider-kubernetes, run on the host against the same API server.

It reconciles the Objects the function composes through the ProviderConfig the function
composes, that is through the kubeconfig Secret the function wrote: `server` is the local API
server (the fake cloud reports it as the CKS endpoint) and the bearer token is the org token,
which the API server knows from its --token-auth-file. That kubeconfig carries no CA (CKS serves
a publicly trusted certificate), so this process alone trusts the local CA, via SSL_CERT_FILE.
"""

from __future__ import annotations

import socket
from pathlib import Path

from harness.fixtures import free_port

from .certs import issue
from .controlplane import STARTUP_SECONDS, ControlPlane
from .kube import answers_ok
from .scene import install_crds

# controller-runtime's default webhook port (it serves a conversion webhook for its legacy
# cluster-scoped Object API) and metrics address: fixed in v1.2.1, the defaults of v1.3's
# --webhook-port and --metrics-bind-address. Every row binds them, so a worker has its own
# network namespace (harness/e2e/shards.py).
FIXED_PORTS = (9443, 8080)
PROCESS_NAME = "provider-kubernetes"


def port_taken(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("0.0.0.0", port))  # noqa: S104 (it binds all interfaces itself)
        except OSError:
            return True
    return False


class ProviderKubernetes:
    def __init__(self, plane: ControlPlane) -> None:
        self.plane = plane
        self.server_side_apply = True
        # The binary that runs: the row's, until upgrade() replaces it.
        self.binary = plane.binaries.provider_kubernetes

    def start(self, server_side_apply: bool = True, poll: str = "") -> None:
        """Starts it in server-side apply mode (its default) or client-side mode; `poll` (e.g.
        "15s") shortens its drift-check interval (default 10 m; 30 s while not Ready)."""
        taken = [port for port in FIXED_PORTS if port_taken(port)]
        if taken:
            raise RuntimeError(
                f"provider-kubernetes needs ports {FIXED_PORTS} (fixed in its code); taken: {taken}"
            )
        plane = self.plane
        certs = plane.work / "provider-kubernetes" / "tls"
        issue(plane.ca, "provider-kubernetes-webhook", server=True).write(certs)
        health_port = free_port()
        # kingpin spells a false boolean flag --no-<flag>; it rejects --flag=false.
        mode = "enable-server-side-apply" if server_side_apply else "no-enable-server-side-apply"
        plane.processes.start(
            PROCESS_NAME,
            [
                str(self.binary),
                "--debug",
                f"--{mode}",
                f"--health-probe-bind-addr=127.0.0.1:{health_port}",
                *([f"--poll={poll}"] if poll else []),
            ],
            env={
                "KUBECONFIG": str(plane.admin_kubeconfig),
                "TLS_SERVER_CERTS_DIR": str(certs),
                "SSL_CERT_FILE": str(plane.ca_file),
            },
            ready=lambda: answers_ok(f"http://127.0.0.1:{health_port}/readyz"),
            ready_within=STARTUP_SECONDS,
        )
        self.server_side_apply = server_side_apply

    def restart(self, server_side_apply: bool, poll: str = "") -> None:
        self.plane.processes.stop(PROCESS_NAME)
        self.start(server_side_apply, poll)

    def upgrade(self, binary: Path, crds: Path) -> None:
        """As a package upgrade does it: the running provider stops, the new release's CRDs
        replace the old ones (server-side apply), and the new release starts in the same mode."""
        self.plane.processes.stop(PROCESS_NAME)
        install_crds(self.plane, [crds])
        self.binary = binary
        self.start(self.server_side_apply)
