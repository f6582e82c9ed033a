"""The Civo cluster-autoscaler through the real provider-helm and the real chart.

provider-helm v1.3.0 installs the cluster-autoscaler chart 9.59.0 (../shared/charts) into the
Civo cluster's own Kubernetes (a kube-apiserver per fake Civo cluster, reached through the
kubeconfig in the cluster's connection Secret), pulling it from a mirror the harness serves:
the HTTPS chart repository the suite's Composition names, or, in the second test, an OCI
registry named by a Composition of its own. Every assertion is on what the API servers hold:
the Release as provider-helm reports it, and the Deployment, and Helm's own release records,
in the cluster's kube-system.
"""

from __future__ import annotations

import copy
import time
from typing import Any

import yaml

from harness.e2e import kinds
from harness.e2e.kube import Kube, condition, is_true, wait_for
from harness.e2e.providerhelm import POLL
from harness.e2e.scene import mirrored
from harness.e2e.stages import CONVERGE_SECONDS, cleaned_up, delete_xr, wait_ready
from harness.e2e.suite import Suite
from harness.e2e.workload import KUBE_SYSTEM, helm_releases
from harness.e2e.xr import (
    COMPOSITE_LABEL,
    EXTERNAL_NAME,
    composed,
    example_xr,
    external_name,
    reason,
)
from harness.fixtures import civo_pool
from harness.pinned_chart import CHART_NAME, COMPOSITION, chart_archive, pinned_chart_version
from tests import autoscaler_expected as expect

XR_KIND = kinds.CIVO_CLUSTER_XR
NAMESPACE = "ml-team"
# Two autoscaled GPU pools and a fixed one, beside the inline system pool.
POOLS = [
    civo_pool("system", "g4s.kube.medium", 2),
    civo_pool("l40s", "an.g1.l40s.kube.x1", 1, "nvidia-l40s", maxNodeCount=4),
    civo_pool("h100", "an.g1.h100.kube.x1", 2, "nvidia-h100", minNodeCount=2, maxNodeCount=3),
    civo_pool("a100", "g4g.kube.small", 1, "nvidia-a100"),
]
CHART_VERSION = pinned_chart_version()
# Long enough that the Release's own name (59 characters) is one Helm refuses as a release name.
LONG_NAME = "inference-lon-from-the-oci-mirror"


def manifest(name: str, composition: str | None = None) -> dict[str, Any]:
    xr = example_xr("civo", name, copy.deepcopy(POOLS))
    if composition is not None:
        xr["spec"]["crossplane"] = {"compositionRef": {"name": composition}}
    return xr


class Autoscaled:
    """One CivoCluster, its Release and the Civo cluster it runs in."""

    def __init__(self, suite: Suite, xr: dict[str, Any]) -> None:
        self.suite = suite
        self.api = suite.plane.api
        self.xr = xr
        self.name = xr["metadata"]["name"]

    def composed(self) -> dict[str, Any]:
        return composed(self.api, self.name, NAMESPACE, kinds.CIVO_COMPOSED)

    def release(self) -> dict[str, Any]:
        ref = self.composed()["cluster-autoscaler"]
        found = self.api.get(kinds.HELM_RELEASE, ref.name, NAMESPACE)
        assert found is not None
        return found

    def releases(self) -> list[dict[str, Any]]:
        """Every Release of this XR the API server still has, composed or orphaned."""
        return self.api.list(kinds.HELM_RELEASE, NAMESPACE, labels=f"{COMPOSITE_LABEL}={self.name}")

    def cluster_id(self) -> str:
        return external_name(self.api, self.name, NAMESPACE, kinds.CIVO_CLUSTER, "civo-cluster")

    def cluster_api(self) -> Kube:
        return self.suite.clusters.get(self.cluster_id()).api

    def pool_ids(self) -> dict[str, str]:
        """Civo pool ID per pool name, as the provider reported them (the external names)."""
        ids = {}
        for key, ref in self.composed().items():
            if key.startswith("nodepool-"):
                pool = self.api.get(kinds.CIVO_NODEPOOL, ref.name, NAMESPACE)
                assert pool is not None
                ids[key.removeprefix("nodepool-")] = pool["metadata"]["annotations"][EXTERNAL_NAME]
        return ids

    def helm_release(self) -> str:
        return str(self.release()["metadata"]["annotations"][EXTERNAL_NAME])

    def deployment_name(self) -> str:
        # The chart's fullname: the release name, then "<cloud provider>-<chart name>".
        return f"{self.helm_release()}-civo-{CHART_NAME}"[:63].rstrip("-")

    def deployment(self) -> dict[str, Any] | None:
        return self.cluster_api().get(kinds.DEPLOYMENT, self.deployment_name(), KUBE_SYSTEM)

    def container(self) -> dict[str, Any]:
        deployment = self.deployment()
        assert deployment is not None, f"no Deployment {self.deployment_name()} in the cluster"
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        assert container["name"] == expect.CONTAINER
        return dict(container)

    def expected_command(self) -> list[str]:
        archive = chart_archive(self.release()["spec"]["forProvider"]["chart"]["version"])
        return expect.command(self.xr["spec"]["nodePools"], self.pool_ids(), archive)

    def values_composed(self) -> int:
        """How many different sets of values the function has composed into the Release so far
        (from the watch log): each one is a Helm install or upgrade."""
        seen: list[Any] = []
        for change in self.suite.log.of(self.name, XR_KIND.kind):
            if change.kind != kinds.HELM_RELEASE.kind or not isinstance(change.content, dict):
                continue
            values = change.content.get("spec", {}).get("forProvider", {}).get("values")
            if values is not None and values not in seen:
                seen.append(values)
        return len(seen)

    def revision_at_ready(self) -> int:
        """The Helm revision deployed once the XR is Ready: 1, or more when the pools' IDs were
        observed in different reconciles. The Release is composed once the first autoscaled
        pool's ID is known, and each later ID adds its group (docs/composed.md), an upgrade each
        (provider-helm may fold changes that come close together into one)."""

        def deployed() -> int:
            # The XR's Ready can come before provider-helm reports the last upgrade: wait for
            # it, never for more upgrades than values composed.
            revision = self.release().get("status", {}).get("atProvider", {}).get("revision")
            composed = self.values_composed()
            assert not isinstance(revision, int) or revision <= composed, (
                f"Helm revision {revision} after {composed} sets of values composed"
            )
            if isinstance(revision, int) and revision >= 1 and self.release_deployed_at(revision):
                return revision
            return 0

        return wait_for("the Release deployed at its last revision", deployed, CONVERGE_SECONDS)

    def release_deployed_at(self, revision: int) -> bool:
        """provider-helm reports the Helm release deployed at this revision, Ready, and the
        composed Release's values applied (the Release is on its latest generation)."""
        release = self.release()
        at = release.get("status", {}).get("atProvider", {})
        return (
            at.get("state") == "deployed"
            and at.get("revision") == revision
            and is_true(release, "Ready")
            and condition(release, "Synced").get("observedGeneration", 0)
            == release["metadata"]["generation"]
        )

    def edit(self, change: Any) -> None:
        """Changes the pools as a user's `kubectl edit` does (a merge patch replaces the list)."""
        change(self.xr["spec"]["nodePools"])
        self.api.merge_patch(
            XR_KIND, self.name, {"spec": {"nodePools": self.xr["spec"]["nodePools"]}}, NAMESPACE
        )

    def delete(self) -> str:
        """Deletes the XR and waits until it is gone; returns the Civo cluster's ID."""
        cluster_id = self.cluster_id()
        delete_xr(self.suite, XR_KIND, kinds.CIVO_COMPOSED, self.name, NAMESPACE)
        return cluster_id


def pool(pools: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(p for p in pools if p["name"] == name)


def test_provider_helm_installs_the_autoscaler_the_pools_ask_for(suite: Suite) -> None:
    api = suite.plane.api
    cluster = Autoscaled(suite, manifest("autoscaled-lon"))
    fetched_before = len(suite.chart_repository.fetched)
    suite.helm.forget_charts()
    with cleaned_up(suite, XR_KIND, cluster.name, NAMESPACE):
        api.apply(XR_KIND, cluster.xr)
        ready = wait_ready(api, XR_KIND, cluster.name, NAMESPACE)
        assert reason(ready, "Autoscaler") == "Available"
        installed = cluster.revision_at_ready()

        # --- what Helm created in the Civo cluster ---------------------------------------------
        ids = cluster.pool_ids()
        container = cluster.container()
        assert container["command"] == cluster.expected_command()
        assert [a for a in container["command"] if a.startswith("--nodes=")] == [
            f"--nodes=1:4:{ids['l40s']}",
            f"--nodes=2:3:{ids['h100']}",
        ]
        assert container["image"] == expect.image(cluster.xr["spec"]["kubernetesVersion"])
        assert [e for e in container["env"] if e["name"].startswith("CIVO_")] == expect.civo_env()
        assert helm_releases(cluster.cluster_api()) == {cluster.helm_release(): "deployed"}
        # Pulled from the mirror the Composition names, index first; nothing was cached.
        assert suite.chart_repository.fetched[fetched_before:] == [
            "/index.yaml",
            f"/{CHART_NAME}-{CHART_VERSION}.tgz",
        ]
        deployment = cluster.deployment()
        assert deployment is not None
        uid = deployment["metadata"]["uid"]

        # --- a larger maximum: Helm upgrades the Deployment in place -----------------------------
        started = time.monotonic()
        cluster.edit(lambda pools: pool(pools, "l40s").update(maxNodeCount=6))
        wait_for(
            "the live autoscaler to scale l40s up to 6 nodes",
            lambda: f"--nodes=1:6:{ids['l40s']}" in cluster.container()["command"],
            CONVERGE_SECONDS,
        )
        live_after = time.monotonic() - started
        assert cluster.container()["command"] == cluster.expected_command()
        wait_for(
            f"revision {installed + 1} deployed",
            lambda: cluster.release_deployed_at(installed + 1),
            CONVERGE_SECONDS,
        )
        wait_ready(api, XR_KIND, cluster.name, NAMESPACE)
        suite.notes.append(
            f"provider-helm: maxNodeCount 4 -> 6 reached the live Deployment in {live_after:.1f} s;"
            f" Release and XR Ready again after {time.monotonic() - started:.1f} s (--poll={POLL})"
        )
        again = cluster.deployment()
        assert again is not None and again["metadata"]["uid"] == uid

        # --- no pool autoscales any more: no autoscaler runs -----------------------------------
        def all_fixed(pools: list[dict[str, Any]]) -> None:
            for p in pools:
                p.pop("maxNodeCount", None)
                p.pop("minNodeCount", None)

        cluster.edit(all_fixed)
        wait_for(
            "the autoscaler's Deployment removed from the cluster",
            lambda: cluster.deployment() is None,
            CONVERGE_SECONDS,
        )
        wait_for(
            f"revision {installed + 2} deployed",
            lambda: cluster.release_deployed_at(installed + 2),
            CONVERGE_SECONDS,
        )
        xr = wait_ready(api, XR_KIND, cluster.name, NAMESPACE)
        assert reason(xr, "Autoscaler") == "NoAutoscaledPools"
        assert helm_releases(cluster.cluster_api()) == {cluster.helm_release(): "deployed"}
        assert cluster.release()["spec"]["forProvider"]["values"]["autoscalingGroups"] == []

        # --- deleted: the Release goes, the Helm release goes with the cluster ------------------
        helm_release = cluster.helm_release()
        cluster_id = cluster.delete()
        assert cluster.releases() == []
        # The Release has no Delete policy: provider-helm never uninstalled it. It was deployed
        # when Civo deleted the cluster, and went with it.
        last = suite.clusters.last_looks[cluster_id]
        assert last.helm_releases == {helm_release: "deployed"}
        assert last.deployments == []


def test_the_autoscaler_chart_comes_from_an_oci_mirror(suite: Suite) -> None:
    """The same chart, from an OCI registry: what a platform team with a private registry sets
    in the Composition's input (chartRepository: oci://<registry>/<path>). The XR's name is
    long: Helm gets a release name within its 53 characters."""
    api = suite.plane.api
    composition = mirrored(yaml.safe_load(COMPOSITION.read_text()), suite.chart_registry.url)
    composition["metadata"]["name"] = "civoclusters-oci-mirror"
    api.apply(kinds.COMPOSITION, composition)
    cluster = Autoscaled(suite, manifest(LONG_NAME, composition="civoclusters-oci-mirror"))
    # provider-helm keeps pulled charts by name and version: an earlier install's copy would
    # answer instead of the registry.
    suite.helm.forget_charts()
    pulls_before = suite.chart_registry.chart_downloads()
    fetched_before = len(suite.chart_repository.fetched)
    try:
        with cleaned_up(suite, XR_KIND, cluster.name, NAMESPACE):
            api.apply(XR_KIND, cluster.xr)
            wait_ready(api, XR_KIND, cluster.name, NAMESPACE)
            release = cluster.release()
            chart = release["spec"]["forProvider"]["chart"]
            # (provider-helm late-initialises an empty pullSecretRef beside them.)
            assert {k: chart[k] for k in ("name", "repository", "version")} == {
                "name": CHART_NAME,
                "repository": suite.chart_registry.url,
                "version": CHART_VERSION,
            }
            cluster.revision_at_ready()
            assert len(release["metadata"]["name"]) > 53
            assert helm_releases(cluster.cluster_api()) == {cluster.helm_release(): "deployed"}
            assert len(cluster.helm_release()) <= 53
            assert cluster.container()["command"] == cluster.expected_command()
            assert suite.chart_registry.chart_downloads() > pulls_before
            assert suite.chart_repository.fetched[fetched_before:] == []
            cluster.delete()
            assert cluster.releases() == []
    finally:
        api.delete(kinds.COMPOSITION, "civoclusters-oci-mirror")
