"""Compose a CivoCluster: (xr, observed, required, config) -> Outcome. No I/O.

Network and firewall -> the k3s cluster with its inline System pool (writes its kubeconfig to
a connection Secret, published in status.secrets once read) -> (cluster Ready) one NodePool per
other pool -> (any pool autoscales and its pool ID is known) a provider-helm ProviderConfig on
that kubeconfig and the cluster-autoscaler Release. Every gate is sticky: once pools exist, a
Ready flap drops nothing.
"""

from __future__ import annotations

from typing import Any

from function.civo import access, autoscaler
from function.civo.api import KIND, CivoClusterSpec, NodePool, validated_spec
from function.input import CivoInput
from function.shared.composer import CONDITION_ACCESS, Composer
from function.shared.naming import helm_release_name
from function.shared.observed import Observed, Required, View
from function.shared.outcome import Composite, Outcome
from function.shared.readiness import (
    CONDITION_POOLS,
    PoolCapacity,
    condition_message,
    nodes,
    ready_when_exists,
    ready_when_ready,
)
from function.shared.resources import keep_live
from function.shared.validation import SpecProblems

# Composition resource names: a public contract. Renaming one deletes and recreates the
# resource behind it, so these never change.
KEY_NETWORK = "network"
KEY_FIREWALL = "firewall"
KEY_CLUSTER = "civo-cluster"
KEY_POOL_PREFIX = "nodepool-"
KEY_HELM_PROVIDER_CONFIG = "helm-providerconfig"
KEY_AUTOSCALER = "cluster-autoscaler"
KEY_USAGE_NETWORK = "usage-network-by-cluster"
KEY_USAGE_FIREWALL = "usage-firewall-by-cluster"
# Name part of the cluster's connection Secret; distinct from a CoreWeaveCluster's kubeconfig
# Secret so two XRs of different kinds and the same name can share a namespace.
CONNECTION_SECRET_PART = "civo-kubeconfig"  # noqa: S105 - a name, not a secret

VPC_API_VERSION = "vpc.civo.m.upbound.io/v1beta1"
KUBERNETES_API_VERSION = "kubernetes.civo.m.upbound.io/v1beta1"
HELM_API_VERSION = "helm.m.crossplane.io/v1beta1"

# Civo cluster names are unique per account, at most 63 characters.
CLOUD_NAME_LIMIT = 63
# Without LateInitialize Crossplane never copies the autoscaler's node count into forProvider,
# so it never reverts it (crossplane/upjet#343).
AUTOSCALED_POLICIES = ["Observe", "Create", "Update", "Delete"]
FIXED_POLICIES = ["*"]
# No Delete: deleting the Release must never need the workload cluster, which may be gone
# already; the release dies with the cluster. See docs/composed.md, "Teardown".
RELEASE_POLICIES = ["Observe", "Create", "Update", "LateInitialize"]
AUTOSCALER_NAMESPACE = "kube-system"
EXTERNAL_NAME = "crossplane.io/external-name"

CONDITION_AUTOSCALER = "Autoscaler"
# What Civo reports of a cluster that cannot be used: being built (again), being deleted, or
# failed (Civo's API documents no failure state; these two are what one would be called).
# Any other status (ACTIVE, or AVAILABLE, UPGRADING and SCALING in place) serves.
CIVO_NOT_SERVING = ("BUILDING", "DELETING", "DELETED", "FAILED", "ERROR")

LABEL_POOL = "modelplane.ai/pool"
LABEL_GPU = "modelplane.ai/gpu"
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}


def pool_key(pool_name: str) -> str:
    return KEY_POOL_PREFIX + pool_name


def compose(xr: Composite, observed: Observed, required: Required, config: CivoInput) -> Outcome:
    try:
        spec = validated_spec(xr)
    except SpecProblems as problems:
        return Outcome.failed(problems.message)
    clash = _default_pool_clash(spec, observed[KEY_CLUSTER], config)
    if clash is not None:
        return Outcome.failed(SpecProblems(f"{KIND} spec", [clash]).message)
    return _Composer(xr, spec, observed, required, config).composed()


def _default_pool_clash(spec: CivoClusterSpec, cluster: View, config: CivoInput) -> str | None:
    """A pool named like the default System pool that the cluster gets (or has) because the
    spec has no System pool: its NodePool and the inline pool would share one label."""
    default = config.systemPool.name
    live = cluster.string("spec", "forProvider", "pools", "label")
    if spec.first_system_pool is not None or live not in (None, default):
        return None
    for index, pool in enumerate(spec.nodePools):
        if pool.name == default:
            return (
                f'spec.nodePools[{index}].name: "{default}" is the name of the default System '
                "pool (step input civo.systemPool.name) that Civo creates with the cluster "
                "because no pool has role System; rename this pool or add a System pool"
            )
    return None


class _Composer(Composer):
    cloud_name_limit = CLOUD_NAME_LIMIT
    cloud = "Civo"
    cluster_key = KEY_CLUSTER
    not_serving = CIVO_NOT_SERVING

    def __init__(
        self,
        xr: Composite,
        spec: CivoClusterSpec,
        observed: Observed,
        required: Required,
        config: CivoInput,
    ) -> None:
        super().__init__(xr, spec.credentials, observed)
        self.spec, self.required, self.config = spec, required, config
        self.cluster = observed[KEY_CLUSTER]
        self.secret_name = self.name(CONNECTION_SECRET_PART)

    def compose(self) -> Outcome:
        region = self._region()
        self._network(region)
        self._firewall(region)
        not_node_pools = self._cluster(region)
        cluster_ref = (KUBERNETES_API_VERSION, "Cluster", KEY_CLUSTER)
        self.compose_usage(
            KEY_USAGE_NETWORK, of=(VPC_API_VERSION, "Network", KEY_NETWORK), by=cluster_ref
        )
        self.compose_usage(
            KEY_USAGE_FIREWALL, of=(VPC_API_VERSION, "Firewall", KEY_FIREWALL), by=cluster_ref
        )
        kubeconfig_key = self._kubeconfig_key()
        if kubeconfig_key is not None:
            self.out.status["secrets"] = [
                {"type": "Kubeconfig", "name": self.secret_name, "key": kubeconfig_key}
            ]
        pools = [(i, p) for i, p in enumerate(self.spec.nodePools) if p.name not in not_node_pools]
        self._pools(region, pools)
        self._autoscaler([p for _, p in pools if p.maxNodeCount is not None], kubeconfig_key)
        return self.out

    def _kubeconfig_key(self) -> str | None:
        """The key of the connection Secret that holds the kubeconfig, once known.

        A key found by reading the Secret is remembered in the XR's status and not read again.
        Until then the Secret is read on every reconcile; a key already in use (by the helm
        ProviderConfig) stays in use while the Secret cannot confirm one, so nothing that works
        is unpublished.
        """
        described = f'Secret "{self.secret_name}"'
        in_use = self.observed[KEY_HELM_PROVIDER_CONFIG].string(
            "spec", "credentials", "secretRef", "key"
        )
        key = access.established_key(self.xr.status, self.secret_name)
        if key is None:
            if not (self.cluster.has("status", "atProvider", "id") or self.cluster.ready):
                self.out.condition(
                    CONDITION_ACCESS,
                    False,
                    "WaitingForCluster",
                    f'waiting for Civo cluster "{self.cloud_name}" to be created; it writes '
                    f"its kubeconfig to {described}",
                )
                return in_use
            lookup = access.find_key(self.secret_name, self.xr.namespace, self.required)
            self.out.requirements.extend(lookup.requirements)
            if lookup.key is None:
                why = lookup.problem or "reading the connection Secret"
                self.out.normal(why)
                self.out.condition(CONDITION_ACCESS, False, lookup.reason, why)
                return in_use
            key = lookup.key
        self.out.condition(
            CONDITION_ACCESS, True, "Available", f'kubeconfig in {described}, key "{key}"'
        )
        return key

    # --- the cloud resources -------------------------------------------------------------

    def _region(self) -> str:
        live = self.cluster.string("spec", "forProvider", "region") or self.observed[
            KEY_NETWORK
        ].string("spec", "forProvider", "region")
        return keep_live(
            self.out,
            live,
            self.spec.region,
            f'spec.region: the Civo cluster and its network stay in "{live}"; a region cannot '
            f'change on a live cluster. To run in "{self.spec.region}", create a new CivoCluster '
            "there and move workloads.",
        )

    def _network(self, region: str) -> None:
        self.out.compose(
            KEY_NETWORK,
            {
                "apiVersion": VPC_API_VERSION,
                "kind": "Network",
                "metadata": {"name": self.name(KEY_NETWORK)},
                "spec": {
                    "forProvider": {"label": self.cloud_name, "region": region},
                    "providerConfigRef": self.provider_config_ref,
                },
            },
            ready=ready_when_ready(self.observed[KEY_NETWORK]),
        )

    def _firewall(self, region: str) -> None:
        self.out.compose(
            KEY_FIREWALL,
            {
                "apiVersion": VPC_API_VERSION,
                "kind": "Firewall",
                "metadata": {"name": self.name(KEY_FIREWALL)},
                "spec": {
                    "forProvider": {
                        "name": self.cloud_name,
                        "region": region,
                        "networkIdRef": {"name": self.name(KEY_NETWORK)},
                        "createDefaultRules": True,
                    },
                    "providerConfigRef": self.provider_config_ref,
                },
            },
            ready=ready_when_ready(self.observed[KEY_FIREWALL]),
        )

    def _inline_pool(self) -> tuple[dict[str, Any], set[str]]:
        """The cluster's inline pool (as created, once the cluster exists), and the names of
        the spec's pools that are not separate NodePools because of it."""
        first_system = self.spec.first_system_pool
        default = self.config.systemPool
        described = first_system or default
        wanted = _inline_pool(described.name, described.size, described.nodeCount)
        applied = self.cluster.get("spec", "forProvider", "pools")
        if not isinstance(applied, dict) or not isinstance(applied.get("label"), str):
            return wanted, {described.name}
        # Only the fields the function sets; the provider may late-initialise others.
        live = {k: applied[k] for k in wanted if k in applied}
        name = live["label"]
        as_created = f'(size "{live.get("size")}", nodeCount {live.get("nodeCount")})'
        spec_names = [p.name for p in self.spec.nodePools]
        if live == wanted:
            return live, {name}
        if first_system is None:
            if name == default.name:
                self.out.warning(
                    f'input.civo.systemPool: the cluster keeps its inline System pool "{name}" '
                    f"as created {as_created}; the step input's System pool applies to new "
                    "clusters only."
                )
            elif name not in spec_names:
                self._inline_pool_kept(name)
            return live, {name}
        index = spec_names.index(first_system.name)
        if name == first_system.name:
            self.out.warning(
                f'spec.nodePools[{index}]: the inline System pool "{name}" is created with the '
                f"cluster and kept as it is {as_created}; edits to it are not applied. For more "
                "system capacity, add another System pool."
            )
        elif name not in spec_names:
            as_default = _inline_pool(default.name, default.size, default.nodeCount)
            if live == as_default and not self.observed[pool_key(first_system.name)].exists:
                self.out.warning(
                    f"spec.nodePools[{index}]: the cluster was created with the default inline "
                    f'System pool "{name}" {as_created} and keeps it: the first System pool is '
                    "the cluster's inline pool, honored at creation only, so "
                    f'"{first_system.name}" is not created. For more system capacity, add '
                    "another System pool."
                )
                return live, {name, first_system.name}
            self._inline_pool_kept(name)
        else:
            self.out.warning(
                f'spec.nodePools: the cluster\'s inline pool stays "{name}"; the first System '
                f'pool is now "{first_system.name}", which is added as a separate node pool.'
            )
        return live, {name}

    def _inline_pool_kept(self, name: str) -> None:
        self.out.warning(
            f'spec.nodePools: the cluster\'s inline System pool "{name}" is part of the '
            "cluster and cannot be removed; it stays as it is."
        )

    def _cluster(self, region: str) -> set[str]:
        """Compose the cluster; the names of the spec's pools that are not NodePools."""
        pool, not_node_pools = self._inline_pool()
        live_cni = self.cluster.string("spec", "forProvider", "cni")
        cni = keep_live(
            self.out,
            live_cni,
            self.config.cni,
            f'input.civo.cni: the cluster keeps CNI "{live_cni}"; Civo cannot change the CNI of '
            "a live cluster.",
        )
        # Civo fixes applications at creation: a live cluster keeps what it has, even none.
        applications = self.config.applications
        if self.cluster.exists:
            applications = keep_live(
                self.out,
                self.cluster.string("spec", "forProvider", "applications") or "",
                applications,
                "input.civo.applications: the cluster keeps the applications it was created "
                "with; Civo cannot change them on a live cluster.",
            )
        for_provider: dict[str, Any] = {
            "name": self.cloud_name,
            "region": region,
            "cni": cni,
            "networkIdRef": {"name": self.name(KEY_NETWORK)},
            "firewallIdRef": {"name": self.name(KEY_FIREWALL)},
            "pools": pool,
            "writeKubeconfig": True,
        }
        if applications:
            for_provider["applications"] = applications
        if self.spec.kubernetesVersion is not None:
            for_provider["kubernetesVersion"] = self.spec.kubernetesVersion
        self.out.compose(
            KEY_CLUSTER,
            {
                "apiVersion": KUBERNETES_API_VERSION,
                "kind": "Cluster",
                "metadata": {"name": self.name(KEY_CLUSTER)},
                "spec": {
                    "forProvider": for_provider,
                    "writeConnectionSecretToRef": {"name": self.secret_name},
                    "providerConfigRef": self.provider_config_ref,
                },
            },
            ready=ready_when_ready(self.cluster),
        )
        return not_node_pools

    # --- node pools --------------------------------------------------------------------------

    def _pools(self, region: str, pools: list[tuple[int, NodePool]]) -> None:
        if not pools:
            self.pools = []
            return
        if not (self.cluster.ready or self._any_pool_observed([p for _, p in pools])):
            why = (
                f'waiting for Civo cluster "{self.cloud_name}" to become Ready before adding '
                f"node pools {', '.join(p.name for _, p in pools)}"
            )
            self.out.normal(why)
            self.out.condition(CONDITION_POOLS, False, "WaitingForCluster", why)
            return
        for index, pool in pools:
            self._pool(region, index, pool)
        self.pools = [_capacity(p, self.observed[pool_key(p.name)]) for _, p in pools]

    def _pool(self, region: str, index: int, pool: NodePool) -> None:
        key = pool_key(pool.name)
        observed = self.observed[key]
        size = keep_live(
            self.out,
            observed.string("spec", "forProvider", "size"),
            pool.size,
            f'spec.nodePools[{index}].size: node pool "{pool.name}" keeps size '
            f'"{observed.string("spec", "forProvider", "size")}"; Civo cannot change the size '
            f'of a live pool. To use "{pool.size}", add a pool under a new name and remove this '
            "one once it is no longer needed.",
        )
        labels = {LABEL_POOL: pool.name}
        for_provider: dict[str, Any] = {
            "clusterIdRef": {"name": self.name(KEY_CLUSTER)},
            "label": pool.name,
            "region": region,
            "size": size,
        }
        if pool.role == "GPU" and pool.gpu is not None:
            labels[LABEL_GPU] = pool.gpu.acceleratorType
            for_provider["taint"] = [GPU_TAINT]
        for_provider["labels"] = labels
        spec: dict[str, Any] = {"forProvider": for_provider}
        if pool.maxNodeCount is not None:
            # Seeded on create only; from then on the cluster-autoscaler owns the count.
            spec["initProvider"] = {"nodeCount": pool.nodeCount}
            spec["managementPolicies"] = AUTOSCALED_POLICIES
        else:
            for_provider["nodeCount"] = pool.nodeCount
            spec["managementPolicies"] = FIXED_POLICIES
        spec["providerConfigRef"] = self.provider_config_ref
        self.out.compose(
            key,
            {
                "apiVersion": KUBERNETES_API_VERSION,
                "kind": "NodePool",
                "metadata": {"name": self.name("nodepool", pool.name)},
                "spec": spec,
            },
            ready=ready_when_ready(observed),
        )

    # --- the cluster-autoscaler -------------------------------------------------------------

    def _autoscaler(self, autoscaled: list[NodePool], kubeconfig_key: str | None) -> None:
        release = self.observed[KEY_AUTOSCALER]
        if not autoscaled and not release.exists:
            return
        if not (self.cluster.ready or release.exists or self._any_pool_observed(autoscaled)):
            return  # _pools already explains the wait for the cluster
        live_groups = release.get("spec", "forProvider", "values", "autoscalingGroups")
        live_ids = {g.get("name") for g in live_groups or [] if isinstance(g, dict)}
        groups, pending = [], []
        for pool in autoscaled:
            pool_id = _pool_id(self.observed[pool_key(pool.name)], live_ids)
            if pool_id is None:
                pending.append(pool.name)
            else:
                groups.append(
                    {"name": pool_id, "minSize": pool.min_nodes, "maxSize": pool.maxNodeCount}
                )
        if pending:
            why = f"waiting for the Civo pool IDs of autoscaled pools {', '.join(pending)}"
            self.out.normal(why)
            self.out.condition(CONDITION_AUTOSCALER, False, "WaitingForPoolIDs", why)
        elif groups:
            self.out.condition(
                CONDITION_AUTOSCALER,
                True,
                "Available",
                f"cluster-autoscaler scales {', '.join(p.name for p in autoscaled)}",
            )
        else:
            self.out.condition(
                CONDITION_AUTOSCALER,
                True,
                "NoAutoscaledPools",
                "no pool autoscales; the cluster-autoscaler release runs with no node groups",
            )
        if not groups and not release.exists:
            return
        if kubeconfig_key is None:
            # Only before the Release first exists: its ProviderConfig then keeps the key.
            why = "the cluster-autoscaler is installed once the cluster's kubeconfig is readable"
            self.out.condition(CONDITION_AUTOSCALER, False, "WaitingForKubeconfig", why)
            return
        chart = self.config.clusterAutoscaler
        running = release.string("spec", "forProvider", "values", "image", "tag")
        tag, warning = autoscaler.image_tag(chart, self._kubernetes_minor(), running)
        if warning is not None:
            self.out.warning(warning)
        self._helm_provider_config(kubeconfig_key)
        name = self.name(KEY_AUTOSCALER)
        self.out.compose(
            KEY_AUTOSCALER,
            {
                "apiVersion": HELM_API_VERSION,
                "kind": "Release",
                "metadata": {
                    "name": name,
                    # provider-helm names the Helm release after the external name, else after
                    # the object: one over Helm's limit would never install.
                    "annotations": {EXTERNAL_NAME: helm_release_name(name)},
                },
                "spec": {
                    "forProvider": {
                        "chart": {
                            "name": "cluster-autoscaler",
                            "repository": self.config.clusterAutoscaler.chartRepository,
                            "version": self.config.clusterAutoscaler.chartVersion,
                        },
                        "namespace": AUTOSCALER_NAMESPACE,
                        "values": autoscaler.values(chart, groups, tag),
                    },
                    "managementPolicies": RELEASE_POLICIES,
                    "providerConfigRef": {
                        "kind": "ProviderConfig",
                        "name": self.name(KEY_HELM_PROVIDER_CONFIG),
                    },
                },
            },
            ready=ready_when_ready(release),
        )

    def _any_pool_observed(self, pools: list[NodePool]) -> bool:
        return any(self.observed[pool_key(p.name)].exists for p in pools)

    def _kubernetes_minor(self) -> str | None:
        """The minor Kubernetes version the cluster runs (reported), else the one asked for."""
        reported = self.cluster.string("status", "atProvider", "kubernetesVersion")
        return autoscaler.kubernetes_minor(reported or self.spec.kubernetesVersion)

    def _helm_provider_config(self, kubeconfig_key: str) -> None:
        self.out.compose(
            KEY_HELM_PROVIDER_CONFIG,
            {
                "apiVersion": HELM_API_VERSION,
                "kind": "ProviderConfig",
                "metadata": {"name": self.name(KEY_HELM_PROVIDER_CONFIG)},
                "spec": {
                    "credentials": {
                        "source": "Secret",
                        "secretRef": {
                            "name": self.secret_name,
                            "namespace": self.xr.namespace,
                            "key": kubeconfig_key,
                        },
                    }
                },
            },
            ready=ready_when_exists(self.observed[KEY_HELM_PROVIDER_CONFIG]),
        )


def _capacity(pool: NodePool, observed: View) -> PoolCapacity:
    """A Civo pool's nodes against its target: the spec's count, or the cluster-autoscaler's
    (what Civo reports) for an autoscaled pool; at target once the provider reports the pool
    Ready with that many nodes."""
    if not observed.exists:
        return PoolCapacity(pool.name, False, "not created yet")
    reported = observed.get("status", "atProvider", "nodeCount")
    instances = observed.get("status", "atProvider", "instanceNames")
    current = len(instances) if isinstance(instances, list) else reported
    current = current if isinstance(current, int) else 0
    autoscaled_target = reported if pool.maxNodeCount is not None else None
    target = autoscaled_target if isinstance(autoscaled_target, int) else pool.nodeCount
    if observed.ready:
        return PoolCapacity(pool.name, current >= target, nodes(current, target))
    failing = observed.condition_status("Synced") == "False"
    why = condition_message(observed, "Synced") if failing else None
    return PoolCapacity(
        pool.name,
        False,
        f"{nodes(current, target)}; not Ready yet" + (f": {why}" if why else ""),
    )


def _inline_pool(name: str, size: str, node_count: int) -> dict[str, Any]:
    """The cluster's forProvider.pools: the fields the function sets on the inline pool."""
    return {"label": name, "size": size, "nodeCount": node_count, "labels": {LABEL_POOL: name}}


def _pool_id(observed: View, known: set[Any]) -> str | None:
    """The Civo pool ID: the NodePool's external name, once the provider reports the pool
    created, or once the running autoscaler already knows it (so a status flap drops no group).
    """
    external_name = observed.string("metadata", "annotations", EXTERNAL_NAME)
    if external_name and (observed.has("status", "atProvider", "id") or external_name in known):
        return external_name
    return None
