"""The control plane: etcd, kube-apiserver, kube-controller-manager (garbage collector and
namespace controllers: Crossplane deletes composed resources through ownerReferences), the
Crossplane core with its Usage webhook, and an OCI registry. All on 127.0.0.1 with free ports,
certificates generated per run, every file under one work folder."""

from __future__ import annotations

import base64
import json
import secrets
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.fixtures import free_port

from . import kinds
from .binaries import Binaries
from .certs import KeyPair, issue, new_ca, service_account_key_pem
from .kube import Kube, answers_ok, serving
from .processes import ProcessGroup
from .xr import secret_text

CROSSPLANE_NAMESPACE = "crossplane-system"
# Names `crossplane core init` fills; `core start` reads its client certificate from the second.
ROOT_CA_SECRET = "crossplane-root-ca"
CLIENT_TLS_SECRET = "crossplane-tls-client"
# The API server comes up in seconds; this covers a loaded 2-core machine.
STARTUP_SECONDS = 120
# `core init` can race discovery of the CRDs it has just created; it succeeds on a retry.
INIT_ATTEMPTS = 4
# The user the org token authenticates as; system:masters lets provider-kubernetes manage
# NodePools and StorageClasses as a CKS org token would.
ORG_TOKEN_USER = "coreweave-org"
# kube-apiserver's default key prefix; each fake Civo cluster's API server has its own.
ETCD_PREFIX = "/registry"


def host_ip() -> str:
    """An address of this host other than loopback, for --advertise-address (the API server
    refuses to advertise a loopback address); falls back to a link-local one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            # UDP connect sends nothing; it only picks the interface a route would use.
            probe.connect(("10.255.255.255", 1))
            return str(probe.getsockname()[0])
        except OSError:
            return "169.254.0.1"


def new_org_token() -> str:
    """A fresh fake CoreWeave org token per run, shaped like the real ones."""
    return f"CW-SECRET-e2e-{secrets.token_hex(16)}"


def kubeconfig(server: str, ca_pem: bytes, user: dict[str, str]) -> dict[str, Any]:
    cluster = {"server": server, "certificate-authority-data": base64.b64encode(ca_pem).decode()}
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "e2e", "cluster": cluster}],
        "users": [{"name": "e2e", "user": user}],
        "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": "e2e"}}],
        "current-context": "e2e",
    }


@dataclass
class ControlPlane:
    work: Path
    binaries: Binaries
    processes: ProcessGroup
    org_token: str = field(default_factory=new_org_token)
    # What the org token is rotated to; the API server accepts both.
    rotated_org_token: str = field(default_factory=new_org_token)
    api_port: int = 0
    registry_port: int = 0
    ca: KeyPair = field(default_factory=lambda: new_ca("e2e-kubernetes-ca"))
    kube: Kube | None = None
    admin_kubeconfig: Path | None = None
    crossplane_root_ca: KeyPair | None = None
    # Where Crossplane serves its Prometheus metrics (its --metrics-port).
    crossplane_metrics_port: int = 0
    # Flags Crossplane core starts with every time, restarts included (make fleet sets its
    # --max-reconcile-rate); restart_crossplane's own flags come after them.
    crossplane_flags: tuple[str, ...] = ()

    @property
    def ca_file(self) -> Path:
        return self.work / "pki" / "ca.crt"

    @property
    def crossplane_log(self) -> Path:
        return self.processes.log_dir / "crossplane.log"

    @property
    def api(self) -> Kube:
        assert self.kube is not None, "the API server is not started"
        return self.kube

    def start(self) -> None:
        self._start_etcd()
        self._start_apiserver()
        self._start_controller_manager()
        self._init_crossplane()
        self._start_crossplane()
        self._start_registry()

    def _start_etcd(self) -> None:
        self.etcd_port = free_port()
        peer_port = free_port()
        client_url = f"http://127.0.0.1:{self.etcd_port}"
        peer_url = f"http://127.0.0.1:{peer_port}"
        self.processes.start(
            "etcd",
            [
                str(self.binaries.etcd),
                "--name=e2e",
                f"--data-dir={self.work / 'etcd'}",
                f"--listen-client-urls={client_url}",
                f"--advertise-client-urls={client_url}",
                f"--listen-peer-urls={peer_url}",
                f"--initial-advertise-peer-urls={peer_url}",
                f"--initial-cluster=e2e={peer_url}",
                # Test data only: durability is not worth the fsync latency on a small VM.
                "--unsafe-no-fsync",
            ],
            # 200 with {"health":"true"}; 503 while it is not healthy.
            ready=lambda: answers_ok(f"{client_url}/health"),
            ready_within=STARTUP_SECONDS,
        )

    def _start_apiserver(self) -> None:
        pki = self.work / "pki"
        self.ca.write(pki, "ca.crt", "ca.key")
        issue(self.ca, "kube-apiserver", server=True, dns_names=("localhost", "kubernetes")).write(
            pki, "apiserver.crt", "apiserver.key"
        )
        admin = issue(self.ca, "e2e-admin", organization="system:masters", client=True)
        admin.write(pki, "admin.crt", "admin.key")
        (pki / "sa.key").write_bytes(service_account_key_pem())
        # Static bearer tokens: the CoreWeave org tokens of the credentials Secret, which every
        # CKS cluster accepts (harness/e2e/workload.py), so the kubeconfig the function writes
        # works there; this API server, the management cluster's, does not take them.
        self.tokens_file.write_text(
            "".join(
                f'{token},{ORG_TOKEN_USER},{ORG_TOKEN_USER},"system:masters"\n'
                for token in (self.org_token, self.rotated_org_token)
            )
        )
        self.api_port = free_port()
        self.kube = Kube(self.api_port, self.ca_file, pki / "admin.crt", pki / "admin.key")
        self.processes.start(
            "kube-apiserver",
            self.apiserver_argv(self.api_port, ETCD_PREFIX),
            ready=lambda: serving(self.api),
            ready_within=STARTUP_SECONDS,
        )
        self.admin_kubeconfig = self.work / "admin.kubeconfig"
        server = f"https://127.0.0.1:{self.api_port}"
        user = {"client-certificate": str(pki / "admin.crt"), "client-key": str(pki / "admin.key")}
        self.admin_kubeconfig.write_text(json.dumps(kubeconfig(server, self.ca.cert_pem, user)))

    @property
    def tokens_file(self) -> Path:
        return self.work / "pki" / "tokens.csv"

    def apiserver_argv(self, port: int, etcd_prefix: str) -> list[str]:
        """A kube-apiserver on this etcd under `etcd_prefix`: a cluster of its own, with this
        control plane's CA, serving certificate and service-account key."""
        pki = self.work / "pki"
        return [
            str(self.binaries.kube_apiserver),
            f"--etcd-servers=http://127.0.0.1:{self.etcd_port}",
            f"--etcd-prefix={etcd_prefix}",
            "--bind-address=127.0.0.1",
            f"--secure-port={port}",
            f"--advertise-address={host_ip()}",
            f"--cert-dir={pki}",
            f"--tls-cert-file={pki / 'apiserver.crt'}",
            f"--tls-private-key-file={pki / 'apiserver.key'}",
            f"--client-ca-file={pki / 'ca.crt'}",
            "--authorization-mode=RBAC",
            f"--service-account-key-file={pki / 'sa.key'}",
            f"--service-account-signing-key-file={pki / 'sa.key'}",
            "--service-account-issuer=https://kubernetes.default.svc",
            "--service-cluster-ip-range=10.96.0.0/16",
            # No Service endpoints to maintain: nothing here runs in pods.
            "--endpoint-reconciler-type=none",
        ]

    def _start_controller_manager(self) -> None:
        config = str(self.admin_kubeconfig)
        self.processes.start(
            "kube-controller-manager",
            [
                str(self.binaries.kube_controller_manager),
                f"--kubeconfig={config}",
                f"--authentication-kubeconfig={config}",
                f"--authorization-kubeconfig={config}",
                "--controllers=garbage-collector-controller,namespace-controller",
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                f"--secure-port={free_port()}",
                f"--cert-dir={self.work / 'kcm'}",
            ],
        )

    def _init_crossplane(self) -> None:
        self.api.apply(kinds.NAMESPACE, {"metadata": {"name": CROSSPLANE_NAMESPACE}})
        env = {
            "KUBECONFIG": str(self.admin_kubeconfig),
            # The CLI library mangles these two flag names; the environment variables work.
            "CRDS_PATH": str(self.binaries.crossplane_crds),
            "TLS_CA_SECRET_NAME": ROOT_CA_SECRET,
        }
        argv = [
            str(self.binaries.crossplane),
            "core",
            "init",
            f"--namespace={CROSSPLANE_NAMESPACE}",
            "--enable-webhooks=false",
            f"--tls-client-secret-name={CLIENT_TLS_SECRET}",
        ]
        for attempt in range(1, INIT_ATTEMPTS + 1):
            result = self.processes.run("crossplane-init", argv, env=env, check=False)
            if result.returncode == 0:
                break
            if attempt == INIT_ATTEMPTS:
                raise RuntimeError(f"crossplane core init failed:\n{result.stderr[-3000:]}")
        root = self.api.get(kinds.SECRET, ROOT_CA_SECRET, CROSSPLANE_NAMESPACE)
        client = self.api.get(kinds.SECRET, CLIENT_TLS_SECRET, CROSSPLANE_NAMESPACE)
        assert root and client, "crossplane core init created no TLS Secrets"
        self.crossplane_root_ca = KeyPair(
            secret_text(root, "tls.crt").encode(), secret_text(root, "tls.key").encode()
        )
        client_dir = self.work / "crossplane" / "tls-client"
        client_dir.mkdir(parents=True, exist_ok=True)
        for key in ("ca.crt", "tls.crt", "tls.key"):
            (client_dir / key).write_text(secret_text(client, key))

    def restart_crossplane(self, *flags: str) -> None:
        """Stops Crossplane core and starts it again with these extra flags (none: as at first),
        after `crossplane_flags`; its state is all in the API server, so it picks up where it
        stopped."""
        self.processes.stop("crossplane")
        self._start_crossplane(*flags)

    def _start_crossplane(self, *flags: str) -> None:
        assert self.crossplane_root_ca is not None
        base = self.work / "crossplane"
        for directory in ("xpkg-cache", "xfn-cache"):
            (base / directory).mkdir(parents=True, exist_ok=True)
        # The Usage webhook's serving certificate, trusted through Crossplane's root CA.
        issue(self.crossplane_root_ca, "crossplane-webhook", server=True).write(base / "tls-server")
        webhook_port = free_port()
        health_port = free_port()
        self.crossplane_metrics_port = free_port()
        self.processes.start(
            "crossplane",
            [
                str(self.binaries.crossplane),
                "core",
                "start",
                f"--namespace={CROSSPLANE_NAMESPACE}",
                "--package-runtime=External",
                f"--xpkg-cache-dir={base / 'xpkg-cache'}",
                f"--xfn-cache-dir={base / 'xfn-cache'}",
                f"--tls-client-certs-dir={base / 'tls-client'}",
                "--enable-webhooks",
                f"--tls-server-certs-dir={base / 'tls-server'}",
                f"--webhook-port={webhook_port}",
                f"--metrics-port={self.crossplane_metrics_port}",
                f"--health-probe-port={health_port}",
                # A `Reconciling` line per XR reconcile: harness/e2e/calls.py counts them.
                "--debug",
                *self.crossplane_flags,
                *flags,
            ],
            env={"KUBECONFIG": str(self.admin_kubeconfig)},
            ready=lambda: answers_ok(f"http://127.0.0.1:{health_port}/readyz"),
            ready_within=STARTUP_SECONDS,
        )
        # With --package-runtime=External nothing registers the Usage webhook; without it a
        # Usage protects nothing and deletion order is not enforced.
        webhook = {
            "name": "nousages.protection.crossplane.io",
            "admissionReviewVersions": ["v1"],
            "clientConfig": {
                "url": f"https://127.0.0.1:{webhook_port}/validate-no-usages",
                "caBundle": base64.b64encode(self.crossplane_root_ca.cert_pem).decode(),
            },
            "failurePolicy": "Fail",
            "objectSelector": {"matchLabels": {"crossplane.io/in-use": "true"}},
            "rules": [
                {
                    "apiGroups": ["*"],
                    "apiVersions": ["*"],
                    "operations": ["DELETE"],
                    "resources": ["*"],
                }
            ],
            "sideEffects": "None",
        }
        self.api.apply(
            kinds.VALIDATING_WEBHOOK,
            {"metadata": {"name": "crossplane-no-usages"}, "webhooks": [webhook]},
        )

    def _start_registry(self) -> None:
        self.registry_port = free_port()
        self.processes.start(
            "registry",
            [str(self.binaries.registry), f"127.0.0.1:{self.registry_port}"],
            ready=lambda: answers_ok(f"http://127.0.0.1:{self.registry_port}/v2/"),
            ready_within=STARTUP_SECONDS,
        )
