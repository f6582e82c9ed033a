"""Brings the whole e2e world up in order and down again: control plane, provider CRDs, the
function package installed by Crossplane's package manager, the chart mirrors, the XR APIs,
required objects, the fake cloud with its Civo clusters, the real provider-kubernetes and
provider-helm, and the watch log."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from . import kinds
from .binaries import REPO, Binaries
from .charts import HttpsChartRepository, OciChartRegistry, chart_archive, public_chart_repository
from .controlplane import ControlPlane
from .engine import Engine
from .fakeprovider import FakeCloud
from .processes import ProcessGroup
from .providerhelm import ProviderHelm
from .providerkubernetes import ProviderKubernetes
from .proxy import ConnectProxy
from .runtime import FunctionRuntime
from .scene import install_apis, install_crds, install_required_objects
from .watchlog import WatchLog
from .workload import Workload, WorkloadClusters
from .xr import external_name

# The resource key a CoreWeaveCluster composes its CKS cluster under (a public contract).
CKS_KEY = "cks-cluster"

SHARED_CRDS = REPO.parent / "shared" / "crds"
# The provider CRDs the suite installs from ../shared/crds; provider-kubernetes' and
# provider-helm's own come with their builds, so they always match the providers that run.
SHARED_CRD_FOLDERS = ("coreweave", "civo")
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
    helm: ProviderHelm
    # The Civo and CKS clusters' own Kubernetes, by cluster ID.
    clusters: WorkloadClusters
    chart_repository: HttpsChartRepository
    chart_registry: OciChartRegistry
    # The chart's public repository, reached through `proxy` (the packaged Composition's).
    public_charts: HttpsChartRepository
    proxy: ConnectProxy
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

    def cks_cluster(self, namespace: str, xr_name: str) -> Workload:
        """The Kubernetes of the CKS cluster an XR composed: its cluster ID is the external name
        of the Cluster composed under `cks-cluster`."""
        cluster_id = external_name(self.plane.api, xr_name, namespace, kinds.CKS_CLUSTER, CKS_KEY)
        return self.clusters.get(cluster_id)

    def stop(self) -> None:
        self.cloud.stop()
        self.chart_repository.stop()
        self.public_charts.stop()
        self.proxy.stop()
        self.log.stop()
        self.log.write(self.plane.processes.log_dir / "watch-events.tsv")
        self.plane.processes.stop_all()


def start(
    work: Path,
    binaries: Binaries,
    engine: Engine,
    apis_by_hand: bool = True,
    crossplane_flags: tuple[str, ...] = (),
) -> Suite:
    """The whole world, up. With `apis_by_hand` (every suite but the README's) the function
    package, the XR APIs and the credentials are installed too, as a platform team installing
    by hand would; without, the control plane has only what a user installs first (Crossplane,
    the provider CRDs and runtimes), and the test installs the rest. Crossplane core starts
    with `crossplane_flags` beside the harness's own."""
    processes = ProcessGroup(work / "logs")
    plane = ControlPlane(work, binaries, processes, crossplane_flags=crossplane_flags)
    suite: Suite | None = None
    try:
        plane.start()
        install_crds(
            plane,
            [SHARED_CRDS / folder for folder in SHARED_CRD_FOLDERS]
            + [binaries.provider_kubernetes_crds, binaries.provider_helm_crds],
        )
        archive = chart_archive()
        chart_repository = HttpsChartRepository(plane, work / "chart-repository")
        chart_repository.start(archive)
        chart_registry = OciChartRegistry(plane, work / "chart-registry")
        chart_registry.start(archive)
        public_charts = HttpsChartRepository(
            plane, work / "public-chart-repository", served_as=public_chart_repository()
        )
        public_charts.start(archive)
        proxy = ConnectProxy({f"{public_charts.host}:443": public_charts.port})
        proxy.start()
        runtime = FunctionRuntime(plane, REPO)
        if apis_by_hand:
            runtime.install()
            install_apis(plane, REPO, chart_repository.url)
            install_required_objects(plane)
        log = WatchLog(plane.api)
        log.start(WATCHED)
        clusters = WorkloadClusters(plane)
        cloud = FakeCloud(plane.api, clusters)
        cloud.start()
        provider = ProviderKubernetes(plane)
        helm = ProviderHelm(plane)
        suite = Suite(
            engine,
            plane,
            runtime,
            cloud,
            provider,
            helm,
            clusters,
            chart_repository,
            chart_registry,
            public_charts,
            proxy,
            log,
        )
        provider.start(server_side_apply=True)
        helm.start(proxy.url)
    except BaseException:
        if suite is not None:
            suite.stop()
        print(processes.log_tails())
        processes.stop_all()
        raise
    return suite
