"""Brings the whole e2e world up in order and down again: control plane, provider CRDs, the
function package installed by Crossplane's package manager, the XR APIs, required objects, the
fake cloud, the real provider-kubernetes and the watch log."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from . import kinds
from .binaries import REPO, Binaries
from .controlplane import ControlPlane, new_org_token
from .engine import Engine
from .fakeprovider import FakeCloud
from .processes import ProcessGroup
from .providerkubernetes import ProviderKubernetes
from .runtime import FunctionRuntime
from .scene import install_apis, install_crds, install_required_objects
from .watchlog import WatchLog

SHARED_CRDS = REPO.parent / "shared" / "crds"
# The provider CRDs the suite installs from ../shared/crds; provider-kubernetes' own come with
# its build, so they always match the provider that runs.
SHARED_CRD_FOLDERS = ("coreweave", "civo", "helm")
WATCHED = (
    kinds.COREWEAVE_CLUSTER_XR,
    kinds.CIVO_CLUSTER_XR,
    *kinds.COREWEAVE_COMPOSED,
    *kinds.CIVO_COMPOSED,
)


@dataclass
class Suite:
    engine: Engine
    plane: ControlPlane
    runtime: FunctionRuntime
    cloud: FakeCloud
    provider: ProviderKubernetes
    log: WatchLog
    # One churn table per lifecycle test, printed in pytest's terminal summary.
    churn_reports: list[str] = field(default_factory=list)
    # Findings worth a line in the summary (idle-window results and the like).
    notes: list[str] = field(default_factory=list)

    def summary(self) -> list[str]:
        """The lines pytest's terminal summary prints for this engine."""
        return [
            f"== {self.engine.label}",
            *self.churn_reports,
            *self.notes,
            f"fake cloud status writes: {self.cloud.status_writes}",
        ]

    def stop(self) -> None:
        self.cloud.stop()
        self.log.stop()
        self.log.write(self.plane.processes.log_dir / "watch-events.tsv")
        self.plane.processes.stop_all()


def start(work: Path, binaries: Binaries, engine: Engine) -> Suite:
    processes = ProcessGroup(work / "logs")
    plane = ControlPlane(
        work, binaries, processes, org_token=new_org_token(), rotated_org_token=new_org_token()
    )
    suite: Suite | None = None
    try:
        plane.start()
        install_crds(
            plane,
            [SHARED_CRDS / folder for folder in SHARED_CRD_FOLDERS]
            + [binaries.provider_kubernetes_crds],
        )
        runtime = FunctionRuntime(plane, REPO)
        runtime.install()
        install_apis(plane, REPO)
        install_required_objects(plane)
        log = WatchLog(plane.api)
        log.start(WATCHED)
        cloud = FakeCloud(plane.api, f"127.0.0.1:{plane.api_port}")
        cloud.start()
        provider = ProviderKubernetes(plane)
        suite = Suite(engine, plane, runtime, cloud, provider, log)
        provider.start(server_side_apply=True)
    except BaseException:
        if suite is not None:
            suite.stop()
        print(processes.log_tails())
        processes.stop_all()
        raise
    return suite
