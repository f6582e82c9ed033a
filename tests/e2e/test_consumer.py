"""Our XRs under their one real consumer's use, on the real engine: a ServingCluster
(tests/e2e/consumer/, shaped like Modelplane's InferenceCluster) composes a CoreWeaveCluster and
a CivoCluster with GPU pools only, and, while each is Ready, a ClusterProviderConfig on its
kubeconfig Secret, a serving stack (an Object applied into the workload cluster through it) and
a Usage of our XR by that Object. The consumer drops all three whenever our Ready drops, so a
drop would show as new UIDs: across a pool added whose nodes never come, the cloud updating the
cluster in place and our function restarted, they keep their UIDs and the Object stays Synced.
Deleting the consumer: the Usage holds our XR until the serving stack is gone, then our XR and
its cloud cluster go, and nothing is left."""

from __future__ import annotations

import time
from typing import Any

import pytest

from harness.e2e import kinds
from harness.e2e.kube import Kind, Kube, condition, is_true, wait_for
from harness.e2e.runtime import FUNCTION_PROCESS
from harness.e2e.stages import CONVERGE_SECONDS, stays_ready_through
from harness.e2e.suite import Suite
from harness.e2e.xr import composed, external_name
from tests.e2e.consumer.fn import (
    KEY_PROVIDER_CONFIG,
    KEY_SERVING_STACK,
    KEY_USAGE,
    NAMESPACE,
)
from tests.e2e.consumer.install import install_consumer

SERVING_CLUSTER = Kind("consumer.e2e.modelplane.ai/v1alpha1", "ServingCluster", namespaced=False)
CLUSTER_PROVIDER_CONFIG = Kind(
    "kubernetes.m.crossplane.io/v1alpha1", "ClusterProviderConfig", namespaced=False
)
CONFIG_MAP = Kind("v1", "ConfigMap")
# Per cloud: the consumer's name (and so our XR's), our XR's kind and what it composes, its cloud
# cluster's kind and key, and the consumer's spec.
CONSUMERS: dict[str, dict[str, Any]] = {
    "CoreWeave": {
        "name": "serving-east",
        "xr": kinds.COREWEAVE_CLUSTER_XR,
        "composed": kinds.COREWEAVE_COMPOSED,
        "cluster": (kinds.CKS_CLUSTER, "cks-cluster"),
        "spec": {
            "cloud": "CoreWeave",
            "location": "US-EAST-04A",
            "credentials": {"name": "coreweave", "type": "ClusterProviderConfig"},
            "gpuPools": [
                {
                    "name": "h100",
                    "machine": "gd-8xh100ib-i128",
                    "nodeCount": 2,
                    "acceleratorType": "nvidia-h100",
                }
            ],
        },
        # The machine of the pool added later, and what NodePools says of it.
        "starved_machine": "gd-8xh200ib-i128",
        "starved": "(0 of 1 node, 1 queued)",
    },
    "Civo": {
        "name": "serving-lon",
        "xr": kinds.CIVO_CLUSTER_XR,
        "composed": kinds.CIVO_COMPOSED,
        "cluster": (kinds.CIVO_CLUSTER, "civo-cluster"),
        "spec": {
            "cloud": "Civo",
            "location": "LON1",
            "credentials": {"name": "civo", "type": "ClusterProviderConfig"},
            "gpuPools": [
                {
                    "name": "l40s",
                    "machine": "an.g1.l40s.kube.x1",
                    "nodeCount": 2,
                    "acceleratorType": "nvidia-l40s",
                }
            ],
        },
        "starved_machine": "g4g.kube.small",
        "starved": "(0 of 1 node; not Ready yet)",
    },
}
# The pool added to each consumer, which the cloud has no capacity for.
STARVED_POOL: dict[str, Any] = {"name": "h200", "nodeCount": 1}
# What each consumer built on our XR, by composition resource name.
BUILT = (KEY_PROVIDER_CONFIG, KEY_SERVING_STACK, KEY_USAGE)


def built_on(api: Kube, cloud: str) -> dict[str, str] | None:
    """UIDs of what the consumer built on our XR, once all of it exists and the serving stack is
    Synced and Ready through the ClusterProviderConfig; None before."""
    name = CONSUMERS[cloud]["name"]
    provider_config = api.get(CLUSTER_PROVIDER_CONFIG, name)
    stack = api.get(kinds.KUBERNETES_OBJECT, f"{name}-serving-stack", NAMESPACE)
    usage = api.get(kinds.USAGE, f"{name}-serving-stack-uses-cluster", NAMESPACE)
    if provider_config is None or stack is None or usage is None:
        return None
    if not (is_true(stack, "Synced") and is_true(stack, "Ready")):
        return None
    found = (provider_config, stack, usage)
    return {key: obj["metadata"]["uid"] for key, obj in zip(BUILT, found, strict=True)}


def still_built(api: Kube, built: dict[str, dict[str, str]], stage: str) -> None:
    for cloud, uids in built.items():
        assert built_on(api, cloud) == uids, f"{stage}: the {cloud} consumer rebuilt or lost it"


def stays_ready(suite: Suite, since: float) -> None:
    for consumer in CONSUMERS.values():
        stays_ready_through(suite, consumer["xr"], consumer["name"], NAMESPACE, since)


@pytest.mark.every_engine
def test_a_consumer_builds_on_our_xrs_and_keeps_what_it_built(suite: Suite) -> None:
    api, cloud = suite.plane.api, suite.cloud
    install_consumer(suite.plane)
    api.apply(kinds.NAMESPACE, {"metadata": {"name": NAMESPACE}})
    try:
        # --- (a) created from GPU pools alone; the consumer builds once our XR is Ready ----------
        for consumer in CONSUMERS.values():
            body = {"metadata": {"name": consumer["name"]}, "spec": consumer["spec"]}
            api.apply(SERVING_CLUSTER, body)
        built = {}
        for cloud_name in CONSUMERS:

            def consumer_built(cloud_name: str = cloud_name) -> dict[str, str] | None:
                return built_on(api, cloud_name)

            built[cloud_name] = wait_for(
                f"the {cloud_name} consumer built", consumer_built, CONVERGE_SECONDS
            )
        cluster_ids = {}
        for cloud_name, consumer in CONSUMERS.items():
            kind, key = consumer["cluster"]
            cluster_ids[cloud_name] = external_name(api, consumer["name"], NAMESPACE, kind, key)
            workload = suite.clusters.get(cluster_ids[cloud_name])
            stack = workload.api.get(CONFIG_MAP, "serving-stack", "default")
            assert stack is not None and stack["data"] == {"servingCluster": consumer["name"]}

        # --- (b) a pool added whose nodes never come -------------------------------------------
        since = time.monotonic()
        cloud.no_capacity_for(str(STARVED_POOL["name"]))
        for consumer in CONSUMERS.values():
            added = {
                **STARVED_POOL,
                "machine": consumer["starved_machine"],
                "acceleratorType": "nvidia-h200",
            }
            pools = [*consumer["spec"]["gpuPools"], added]
            api.merge_patch(SERVING_CLUSTER, consumer["name"], {"spec": {"gpuPools": pools}})
        for consumer in CONSUMERS.values():
            waiting = f"waiting for node pool h200 {consumer['starved']}"

            def pool_waits(consumer: dict[str, Any] = consumer, waiting: str = waiting) -> bool:
                ours = api.get(consumer["xr"], consumer["name"], NAMESPACE)
                return str(condition(ours, "NodePools").get("message", "")).startswith(waiting)

            wait_for(f"{consumer['name']}: {waiting}", pool_waits, CONVERGE_SECONDS)
        stays_ready(suite, since)
        still_built(api, built, "a pool without capacity")

        # --- (c) the cloud updates each cluster in place ---------------------------------------
        for unavailable in (True, False):
            since = time.monotonic()
            for consumer in CONSUMERS.values():
                kind, key = consumer["cluster"]
                ref = composed(api, consumer["name"], NAMESPACE, (kind,))[key]
                cloud.flap(kind, ref.name, unavailable=unavailable)
            stays_ready(suite, since)
            still_built(api, built, "the cluster updated in place")

        # --- (d) our function restarted --------------------------------------------------------
        since = time.monotonic()
        suite.plane.processes.kill(FUNCTION_PROCESS)
        suite.plane.processes.restart(FUNCTION_PROCESS)
        stays_ready(suite, since)
        still_built(api, built, "our function restarted")

        # --- (e) the consumer deleted: the Usage holds our XR until the serving stack is gone ---
        deleted_at = time.monotonic()
        for consumer in CONSUMERS.values():
            api.delete(SERVING_CLUSTER, consumer["name"])
        for cloud_name, consumer in CONSUMERS.items():
            name = consumer["name"]

            def gone(consumer: dict[str, Any] = consumer, cloud_name: str = cloud_name) -> bool:
                name = consumer["name"]
                return (
                    api.get(SERVING_CLUSTER, name) is None
                    and api.get(consumer["xr"], name, NAMESPACE) is None
                    and not composed(api, name, NAMESPACE, consumer["composed"])
                    and api.get(CLUSTER_PROVIDER_CONFIG, name) is None
                    and cluster_ids[cloud_name] not in suite.clusters.running()
                )

            wait_for(f"{name}, our XR and everything either composed gone", gone, CONVERGE_SECONDS)
            # Our XR's events and the serving stack's: the consumer labels what it composes with
            # its name, which our XR shares.
            changes = [c for c in suite.log.of(name, consumer["xr"].kind) if c.at >= deleted_at]
            stack_gone = max(
                c.at
                for c in changes
                if c.kind == "Object" and c.name == f"{name}-serving-stack" and c.type == "DELETED"
            )
            ours_deleting = min(
                c.at
                for c in changes
                if c.kind == consumer["xr"].kind and c.name == name and c.deleting
            )
            assert ours_deleting >= stack_gone, (
                f"{cloud_name}: our XR was deleted {stack_gone - ours_deleting:.1f} s before the "
                "serving stack that uses it was gone"
            )
    finally:
        for consumer in CONSUMERS.values():
            api.delete(SERVING_CLUSTER, consumer["name"])
