"""The chart mirrors an air-gapped platform team runs, serving the real cluster-autoscaler chart
from ../shared/charts: a Helm chart repository over HTTPS (an index.yaml that `helm repo index`
writes, beside the archive) and an OCI registry over HTTPS (`helm push`), both with certificates
of the harness CA, which provider-helm trusts (harness/e2e/providerhelm.py).

Each mirror records what was fetched from it, so a test can prove where a chart came from.
"""

from __future__ import annotations

import functools
import http.server
import shutil
import ssl
import threading
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.fixtures import free_port
from harness.pinned_chart import CHART_NAME, pinned_chart_version, step_input
from harness.pinned_chart import chart_archive as archive_of

from .certs import issue
from .controlplane import ControlPlane
from .kube import answers_ok

# Where the OCI mirror keeps charts: chartRepository is oci://<host>/<this>.
OCI_NAMESPACE = "charts"
STARTUP_SECONDS = 60


def chart_archive() -> Path:
    """The chart version the committed Civo Composition pins, in ../shared/charts."""
    return archive_of(pinned_chart_version())


def public_chart_repository() -> str:
    """The repository the committed Civo Composition installs the chart from: its public one."""
    return str(step_input()["civo"]["clusterAutoscaler"]["chartRepository"])


@dataclass
class HttpsChartRepository:
    """A Helm chart repository: GET index.yaml, then GET the archive it names.

    Served at https://127.0.0.1:<port> (a mirror the Composition names), or, given `served_as`,
    as that public repository: its index names archives under that URL, its certificate names
    that host, and a client reaches it through the suite's proxy (harness/e2e/proxy.py)."""

    plane: ControlPlane
    root: Path
    served_as: str | None = None
    port: int = 0
    fetched: list[str] = field(default_factory=list)
    _server: http.server.ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return self.served_as or f"https://127.0.0.1:{self.port}"

    @property
    def host(self) -> str:
        """The host name a client asks for, and the certificate names."""
        return urllib.parse.urlsplit(self.url).hostname or "127.0.0.1"

    def start(self, archive: Path) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        shutil.copy(archive, self.root / archive.name)
        self.port = free_port()
        self.plane.processes.run(
            "helm-repo-index",
            [str(self.plane.binaries.helm), "repo", "index", str(self.root), "--url", self.url],
        )
        tls = self.root.parent / f"{self.root.name}-tls"
        issue(self.plane.ca, "chart-repository", server=True, dns_names=(self.host,)).write(tls)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(tls / "tls.crt", tls / "tls.key")
        repository = self
        # The path the repository's URL has (/autoscaler for the public one): files are served
        # below it.
        prefix = urllib.parse.urlsplit(self.url).path.rstrip("/")

        class Handler(http.server.SimpleHTTPRequestHandler):
            def do_GET(self) -> None:
                repository.fetched.append(self.path)
                if not self.path.startswith(f"{prefix}/"):
                    self.send_error(404)
                    return
                self.path = self.path.removeprefix(prefix)
                super().do_GET()

            def log_message(self, format: str, *args: Any) -> None:
                return

        handler = functools.partial(Handler, directory=str(self.root))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), handler)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        self._server = server
        threading.Thread(target=server.serve_forever, name="chart-repository", daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


@dataclass
class OciChartRegistry:
    """An OCI registry over HTTPS (the harness's registry binary, a second instance), holding
    the chart as `helm push` stores it."""

    plane: ControlPlane
    root: Path
    port: int = 0

    PROCESS = "chart-registry"

    @property
    def url(self) -> str:
        return f"oci://127.0.0.1:{self.port}/{OCI_NAMESPACE}"

    def start(self, archive: Path) -> None:
        plane = self.plane
        tls = self.root / "tls"
        issue(plane.ca, "chart-registry", server=True).write(tls)
        self.port = free_port()
        address = f"127.0.0.1:{self.port}"
        plane.processes.start(
            self.PROCESS,
            [str(plane.binaries.registry), address, str(tls / "tls.crt"), str(tls / "tls.key")],
            ready=lambda: answers_ok(f"https://{address}/v2/", ca_file=plane.ca_file),
            ready_within=STARTUP_SECONDS,
        )
        # Helm keeps registry logins and caches under HOME: a folder of this run's own.
        home = self.root / "helm-home"
        helm = str(plane.binaries.helm)
        plane.processes.run(
            "helm-push",
            [helm, "push", str(archive), self.url, "--ca-file", str(plane.ca_file)],
            env={
                "HOME": str(home),
                "HELM_CONFIG_HOME": str(home / "config"),
                "HELM_CACHE_HOME": str(home / "cache"),
            },
        )

    def chart_downloads(self) -> int:
        """How many times a blob of the chart's repository was downloaded (the registry logs
        every request): a pull resolves the tag and fetches the manifest, then GETs the chart's
        layers; a push only HEADs and PUTs them."""
        blobs = f"/v2/{OCI_NAMESPACE}/{CHART_NAME}/blobs/"
        log = self.plane.processes.log_dir / f"{self.PROCESS}.log"
        return sum(
            1 for line in log.read_text(errors="replace").splitlines() if f" GET {blobs}" in line
        )
