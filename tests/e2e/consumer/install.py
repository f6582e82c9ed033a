"""Installs the consumer as a platform team would: its function as a package Crossplane's
package manager pulls from the local registry, served the way harness/e2e/runtime.py serves
ours (the External runtime's TLS Secret and revision status, the process started here), then its
XRD and Composition."""

from __future__ import annotations

import sys
from pathlib import Path

from harness.e2e import kinds
from harness.e2e.controlplane import ControlPlane
from harness.e2e.kube import wait_for
from harness.e2e.runtime import (
    INSTALL_SECONDS,
    active_revision,
    crank,
    push,
    runtime_reported,
    write_runtime_certs,
)
from harness.e2e.scene import apply_documents, wait_established
from harness.fixtures import free_port, listening

HERE = Path(__file__).parent
FUNCTION = "function-serving-cluster"
PROCESS = "consumer-function"
TLS_SECRET = f"{FUNCTION}-tls-server"


def install_consumer(plane: ControlPlane) -> None:
    package = plane.work / f"{FUNCTION}.xpkg"
    root = f"--package-root={HERE / 'package'}"
    crank(plane, "consumer-xpkg", ["xpkg", "build", root, f"--package-file={package}"])
    reference = push(plane, package, f"127.0.0.1:{plane.registry_port}/e2e/{FUNCTION}:v0.1.0")
    plane.api.apply(
        kinds.FUNCTION, {"metadata": {"name": FUNCTION}, "spec": {"package": reference}}
    )
    certs = plane.work / f"{FUNCTION}-tls"
    write_runtime_certs(plane, TLS_SECRET, FUNCTION, (FUNCTION,), certs)
    port = free_port()
    plane.processes.start(
        PROCESS,
        [sys.executable, "-m", "tests.e2e.consumer", str(certs), f"127.0.0.1:{port}"],
        cwd=HERE.parents[2],
        ready=lambda: listening("127.0.0.1", port),
        ready_within=30,
    )
    revision = wait_for(
        f"a FunctionRevision of {FUNCTION} active",
        lambda: active_revision(plane, FUNCTION),
        INSTALL_SECONDS,
        interval=1,
    )
    wanted = {"tlsServerSecretName": TLS_SECRET, "endpoint": f"dns:///127.0.0.1:{port}"}
    wait_for(
        f"the Function {FUNCTION} Healthy",
        lambda: runtime_reported(plane, FUNCTION, revision["metadata"]["name"], wanted),
        INSTALL_SECONDS,
        interval=1,
    )
    applied = apply_documents(plane, HERE / "apis.yaml")
    xrds = [d["metadata"]["name"] for d in applied if d["kind"] == "CompositeResourceDefinition"]
    wait_established(plane, kinds.XRD, xrds)
    wait_established(plane, kinds.CRD, xrds)
