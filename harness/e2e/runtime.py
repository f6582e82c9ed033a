"""Installs the function the way users do, and plays Crossplane's External package runtime.

The package is built with `crank xpkg build` (or taken from `make xpkg`'s output), pushed with
`crank xpkg push` to the local registry, and named by a `Function`; Crossplane's package manager
pulls it and installs its input CRD. With `--package-runtime=External` nothing runs the function,
so this module does what a runtime would: a TLS server Secret signed by Crossplane's root CA, the
revision's `status.tlsServerSecretName` and `status.endpoint`, condition `RuntimeHealthy`, and the
function itself, started from the working tree and serving mTLS.
"""

from __future__ import annotations

import base64
import datetime
import sys
import tomllib
from pathlib import Path
from typing import Any

from harness.fixtures import free_port, listening

from . import kinds
from .binaries import REPO
from .certs import KeyPair, issue
from .controlplane import CROSSPLANE_NAMESPACE, ControlPlane
from .kube import ApiError, Kind, is_true, wait_for
from .operability import (
    CROSSPLANE_CORE_SERIES,
    Counted,
    SidePorts,
    assert_serving,
    counts_match_log,
    scrape,
    series_about,
)
from .processes import RESTART_SECONDS

FUNCTION_NAME = "function-inference-clusters"
# The package `make xpkg` (issue 12) builds, runtime image embedded; used when present.
MAKE_XPKG_OUTPUT = Path("build") / f"{FUNCTION_NAME}.xpkg"
TLS_SECRET = f"{FUNCTION_NAME}-tls-server"
# Its log is function.log (harness/e2e/calls.py reads it).
FUNCTION_PROCESS = "function"
# A name tests/e2e/test_replicas.py resolves to several function processes; the server
# certificate carries it, as a runtime's carries its Service's name.
REPLICAS_HOST = "fic-function.e2e.test"
# Pulling and unpacking a package from a local registry takes seconds; this is for a slow VM.
INSTALL_SECONDS = 300


def crank(plane: ControlPlane, step: str, args: list[str]) -> None:
    plane.processes.run(f"crank-{step}", [str(plane.binaries.crank), *args])


def build_xpkg(plane: ControlPlane, step: str, root: Path, examples: Path, output: Path) -> Path:
    """A package of `root` (crossplane.yaml and its objects), `examples` packed as a layer of
    its own, as `crossplane xpkg build` packs it for users (release 0.1.0 has no examples/ and
    gets no such layer)."""
    args = ["xpkg", "build", f"--package-root={root}", f"--examples-root={examples}"]
    crank(plane, step, [*args, f"--package-file={output}"])
    return output


def push(plane: ControlPlane, package: Path, reference: str) -> str:
    crank(plane, "xpkg-push", ["xpkg", "push", f"--package-files={package}", reference])
    return reference


def build_package(plane: ControlPlane, repo: Path, reuse_make_output: bool = True) -> Path:
    """The package to install: `make xpkg`'s output if it exists (and `reuse_make_output`), else
    built here from package/, without the runtime image (the suite runs the function itself),
    so with a digest of its own."""
    built = repo / MAKE_XPKG_OUTPUT
    if built.exists() and reuse_make_output:
        return built
    output = plane.work / f"{FUNCTION_NAME}.xpkg"
    return build_xpkg(plane, "xpkg-build", repo / "package", repo / "examples", output)


def package_version() -> str:
    with (REPO / "pyproject.toml").open("rb") as handle:
        return str(tomllib.load(handle)["project"]["version"])


def push_package(plane: ControlPlane, package: Path, version: str | None = None) -> str:
    # A loopback IP, not localhost: the Function CRD wants a dotted registry host, and crank and
    # Crossplane speak plain http to loopback registries.
    tag = f"v{version or package_version()}"
    return push(plane, package, f"127.0.0.1:{plane.registry_port}/modelplane/{FUNCTION_NAME}:{tag}")


def write_tls_secret(
    plane: ControlPlane, secret: str, common_name: str, dns_names: tuple[str, ...]
) -> KeyPair:
    """A package runtime's TLS server Secret in Crossplane's namespace, signed by Crossplane's
    root CA (the establisher reads its tls.crt); the key pair, for a server to serve with."""
    root = plane.crossplane_root_ca
    assert root is not None
    server = issue(root, common_name, server=True, dns_names=dns_names)
    pems = {"tls.crt": server.cert_pem, "tls.key": server.key_pem, "ca.crt": root.cert_pem}
    plane.api.apply(
        kinds.SECRET,
        {
            "metadata": {"name": secret, "namespace": CROSSPLANE_NAMESPACE},
            "type": "kubernetes.io/tls",
            "data": {key: base64.b64encode(pem).decode() for key, pem in pems.items()},
        },
    )
    return server


def write_runtime_certs(
    plane: ControlPlane, secret: str, common_name: str, dns_names: tuple[str, ...], to: Path
) -> None:
    """write_tls_secret, and the server's certificate, key and Crossplane's CA as files in `to`,
    for the function process to serve mTLS with."""
    write_tls_secret(plane, secret, common_name, dns_names).write(to)
    root = plane.crossplane_root_ca
    assert root is not None
    (to / "ca.crt").write_bytes(root.cert_pem)


def active_revision(plane: ControlPlane, function: str) -> dict[str, Any] | None:
    """The FunctionRevision of that Function Crossplane has made active, if any."""
    revisions = plane.api.list(
        kinds.FUNCTION_REVISION, labels=f"pkg.crossplane.io/package={function}"
    )
    return next((r for r in revisions if r.get("spec", {}).get("desiredState") == "Active"), None)


def runtime_reported(
    plane: ControlPlane, function: str, revision_name: str, wanted: dict[str, Any]
) -> bool:
    """Sets what a runtime reports on the revision (patch_revision_status: the next poll
    retries a lost race), until Crossplane calls the Function Healthy on that revision."""
    revision = plane.api.get(kinds.FUNCTION_REVISION, revision_name)
    if revision is None:
        return False
    if reports(revision, wanted):
        current = plane.api.get(kinds.FUNCTION, function)
        revision_now = ((current or {}).get("status") or {}).get("currentRevision")
        return is_true(current, "Healthy") and revision_now == revision_name
    report_runtime_status(plane, kinds.FUNCTION_REVISION, revision, wanted)
    return False


def reports(revision: dict[str, Any], fields: dict[str, Any]) -> bool:
    status = revision.get("status") or {}
    carried = all(status.get(key) == value for key, value in fields.items())
    return carried and is_true(revision, "RuntimeHealthy")


def report_runtime_status(
    plane: ControlPlane, kind: Kind, revision: dict[str, Any], fields: dict[str, Any]
) -> None:
    """Sets `fields` and RuntimeHealthy=True on a package revision's status, as a runtime
    reports it (through patch_revision_status: the caller's next poll retries a lost race)."""
    status = revision.get("status") or {}
    conditions = [c for c in status.get("conditions", []) if c.get("type") != "RuntimeHealthy"]
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    conditions.append(
        {
            "type": "RuntimeHealthy",
            "status": "True",
            "reason": "HealthyPackageRuntime",
            "lastTransitionTime": now,
        }
    )
    patch_revision_status(plane, kind, revision, {**fields, "conditions": conditions})


def patch_revision_status(
    plane: ControlPlane, kind: Kind, revision: dict[str, Any], status: dict[str, Any]
) -> None:
    """Merge-patches a revision's status with its resourceVersion, so that a concurrent write by
    Crossplane's revision controller makes it fail (409, ignored) rather than be overwritten."""
    try:
        plane.api.merge_patch(
            kind,
            revision["metadata"]["name"],
            {
                "metadata": {"resourceVersion": revision["metadata"]["resourceVersion"]},
                "status": status,
            },
            subresource="status",
        )
    except ApiError as error:
        if error.status != 409:
            raise


class FunctionRuntime:
    """The function process and the revision status an External runtime maintains."""

    def __init__(self, plane: ControlPlane, repo: Path) -> None:
        self.plane = plane
        self.repo = repo
        self.port = 0
        self.reference = ""
        # Each function process's metrics and health probe ports, by process name.
        self.side_ports: dict[str, SidePorts] = {}
        # The function runs at --debug: one line per call (harness/e2e/calls.py).
        self.function_log = plane.processes.log_dir / f"{FUNCTION_PROCESS}.log"
        # When the function process serving now started: after an upgrade or a rollback, only
        # calls from then on were answered by the revision just activated.
        self.serving_since = datetime.datetime.now(datetime.UTC)

    def install(self) -> None:
        self._write_tls_secret()
        self.serve(push_package(self.plane, build_package(self.plane, self.repo)), self.repo)

    def start_serving(self) -> None:
        """Starts the function from the working tree, as a runtime does, for a Function someone
        else creates (the README's install): its revision is pointed at `endpoint` by
        harness/e2e/packages.py."""
        self._write_tls_secret()
        self._start_function(self.repo)

    def serve(self, reference: str, source: Path) -> dict[str, Any]:
        """Points the Function (created if need be) at a package, as a user installing,
        upgrading or rolling back does, and plays the runtime for the revision Crossplane
        activates: the running function (if any) stops (as a Deployment rolls), `source`'s
        starts on a new port, and the new revision reports it. Returns that revision once
        Crossplane calls the Function Healthy on it."""
        function = {"metadata": {"name": FUNCTION_NAME}, "spec": {"package": reference}}
        self.plane.api.apply(kinds.FUNCTION, function)

        def activated() -> dict[str, Any] | None:
            revision = self._active_revision()
            return revision if revision and revision["spec"]["image"] == reference else None

        revision = wait_for(f"a FunctionRevision of {reference} active", activated, INSTALL_SECONDS)
        self.plane.processes.stop(FUNCTION_PROCESS)
        self._start_function(source)
        wait_for(
            f"the Function Healthy on {revision['metadata']['name']} (runtime status accepted)",
            lambda: self._assert_runtime_status(revision["metadata"]["name"]),
            INSTALL_SECONDS,
            interval=1,
        )
        self.reference = reference
        return revision

    @property
    def endpoint(self) -> str:
        """Where the runtime serves the function: the process serve() started last."""
        return f"dns:///127.0.0.1:{self.port}"

    @property
    def certs_dir(self) -> Path:
        """The function's server certificate, key and Crossplane's CA, as files."""
        return self.plane.work / "function-tls"

    def function_argv(self, address: str, source: Path | None = None) -> list[str]:
        """The function as the runtime runs it: mTLS with the runtime's certificate, --debug.
        From another release's source, its `function` console script's entry point, run with
        that source first on the path."""
        if source is None or source == self.repo:
            command = [str(Path(sys.executable).parent / "function")]
        else:
            command = [sys.executable, "-c", "from function.main import cli; cli()"]
        return [*command, f"--tls-certs-dir={self.certs_dir}", f"--address={address}", "--debug"]

    def point_at(self, endpoint: str) -> None:
        """Sets the active revision's status.endpoint, the target Crossplane dials: a changed
        target makes Crossplane close its connection and dial the new one on the next call."""

        def patched() -> bool:
            revision = self._active_revision()
            assert revision is not None, "no active FunctionRevision"
            if revision.get("status", {}).get("endpoint") == endpoint:
                return True
            patch_revision_status(
                self.plane, kinds.FUNCTION_REVISION, revision, {"endpoint": endpoint}
            )
            return False

        wait_for(f"the FunctionRevision to point at {endpoint}", patched, 60, interval=1)

    def _active_revision(self) -> dict[str, Any] | None:
        return active_revision(self.plane, FUNCTION_NAME)

    def _write_tls_secret(self) -> None:
        names = (FUNCTION_NAME, REPLICAS_HOST)
        write_runtime_certs(self.plane, TLS_SECRET, FUNCTION_NAME, names, self.certs_dir)

    def side_ports_env(self, process: str) -> dict[str, str]:
        """Fresh metrics and health ports for a function process about to start, as variables
        (a restart keeps its environment, and so its ports)."""
        ports = self.side_ports[process] = SidePorts.free()
        return ports.env()

    def assert_operable(self, process: str = FUNCTION_PROCESS) -> Counted:
        """The process answers health probes on both ports (the runtime's own process: a
        replica's certificate names another host), and its metrics count exactly the calls its
        log shows; what they count."""
        ports = self.side_ports[process]
        root = self.plane.crossplane_root_ca
        assert root is not None
        if process == FUNCTION_PROCESS:
            assert_serving(ports, f"127.0.0.1:{self.port}", root, FUNCTION_NAME)
        counts = counts_match_log(ports, self.plane.processes.log_dir / f"{process}.log")
        # What deploy/monitoring.yaml's rules read on Crossplane's side, served by this engine.
        about = series_about(
            scrape(self.plane.crossplane_metrics_port), "function_name", FUNCTION_NAME
        )
        missing = CROSSPLANE_CORE_SERIES - about
        assert not missing, f"Crossplane serves no {sorted(missing)} for {FUNCTION_NAME}"
        return counts

    def _start_function(self, source: Path) -> None:
        port = self.port = free_port()
        self.serving_since = datetime.datetime.now(datetime.UTC)
        self.plane.processes.start(
            FUNCTION_PROCESS,
            self.function_argv(f"127.0.0.1:{port}", source),
            # `python -c` puts the working directory first on the path, before this checkout's
            # editable install: the function package imported is source's.
            cwd=source,
            env={"PYTHONPATH": str(source), **self.side_ports_env(FUNCTION_PROCESS)},
            ready=lambda: listening("127.0.0.1", port),
            # Now, not when Crossplane first calls it: a function that failed to start (a port
            # taken) fails the setup with its log, not a later wait for its calls.
            ready_within=RESTART_SECONDS,
        )

    def _assert_runtime_status(self, revision_name: str) -> bool:
        """runtime_reported for our Function, failing at once if a process the suite runs died."""
        self.plane.processes.check_alive()
        wanted = {"tlsServerSecretName": TLS_SECRET, "endpoint": self.endpoint}
        return runtime_reported(self.plane, FUNCTION_NAME, revision_name, wanted)
