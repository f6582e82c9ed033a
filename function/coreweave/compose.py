"""Compose a CoreWeaveCluster: (xr, observed, required, config) -> Outcome. No I/O.

Order of creation, each step gated on what the previous one reported:
VPC and CKS cluster -> (cluster Ready, API endpoint, org token) kubeconfig Secret and a
provider-kubernetes ProviderConfig -> NodePools and the shared-vast observer as Objects ->
(shared-vast observed) the ReadWriteMany StorageClass clone.
Every gate is sticky: what was composed once is composed again from its observed state, so a
Ready flap or a missing credential never drops capacity.
"""

from __future__ import annotations

from typing import Any

from function.coreweave import access
from function.coreweave.api import (
    SYSTEM_POOL_NAME,
    CoreWeaveClusterSpec,
    NodePool,
    validated_spec,
)
from function.input import CoreWeaveInput
from function.shared.composer import CONDITION_ACCESS, Composer
from function.shared.observed import Observed, Required, View, condition_of
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
KEY_VPC = "vpc"
KEY_CLUSTER = "cks-cluster"
KEY_KUBECONFIG = "kubeconfig"
KEY_PROVIDER_CONFIG = "kubernetes-providerconfig"
KEY_SYSTEM_POOL = "system-nodepool"
KEY_POOL_PREFIX = "nodepool-"
# The second Object of an autoscaled pool; no user pool's key can take this prefix.
KEY_POOL_SETTINGS_PREFIX = "autoscaled-nodepool-"
KEY_SHARED_VAST = "shared-vast-observer"
KEY_STORAGE_CLASS = "rwx-storageclass"
KEY_USAGE_VPC = "usage-vpc-by-cluster"
KEY_USAGE_KUBECONFIG = "usage-kubeconfig-by-providerconfig"

VPC_API_VERSION = "networking.coreweave.m.crossplane.io/v1alpha1"
CLUSTER_API_VERSION = "cks.coreweave.m.crossplane.io/v1alpha1"
OBJECT_API_VERSION = "kubernetes.m.crossplane.io/v1alpha1"
NODEPOOL_API_VERSION = "compute.coreweave.com/v1alpha1"

# CKS limits cluster and VPC names to 30 characters.
CLOUD_NAME_LIMIT = 30
# Names of the VPC prefixes the cluster refers to; immutable on a live cluster.
POD_PREFIX, SERVICE_PREFIX, INTERNAL_LB_PREFIX = "pod", "service", "internal-lb"
SHARED_VAST = "shared-vast"

CONDITION_STORAGE = "SharedStorage"
# What CKS reports of a cluster that cannot be used: failed (it needs a re-create), being
# deleted, or being created again after it was gone. Any other status (running, updating or
# upgrading in place) serves.
CKS_NOT_SERVING = ("STATUS_FAILED", "STATUS_DELETING", "STATUS_DELETED", "STATUS_CREATING")

# CKS accepts any instanceType string and reports the verdict as the Validated condition, so a
# pool counts as ready once CKS has accepted its instance type.
NODEPOOL_READY_QUERY = (
    "has(object.status) && has(object.status.conditions) && "
    "object.status.conditions.exists(c, c.type == 'Validated' && c.status == 'True')"
)

# No in-cluster Object may Delete while what it manages is wanted: deleting the XR then releases
# each Object without contacting the CKS cluster (which may be unreachable), and deleting the
# cluster removes its NodePools with it. See docs/design.md, "Deletion order".
IN_CLUSTER_POLICIES = ["Observe", "Create", "Update", "LateInitialize"]
# An autoscaled pool is two Objects with two field managers. The first creates the pool with
# targetNodes (and re-creates it if it is deleted outside Crossplane) and never updates it, so
# its manager keeps owning targetNodes until the CKS autoscaler takes it: under server-side
# apply nothing ever removes the field, under client-side apply nothing resets it. The second
# never creates and updates everything but targetNodes. See docs/design.md, "Autoscaled CKS pools".
POOL_CREATOR_POLICIES = ["Observe", "Create"]
POOL_SETTINGS_POLICIES = ["Observe", "Update"]
# What a pool's Object is re-applied with once its pool left spec.nodePools, so that dropping it
# deletes the NodePool in the cluster (it bills until gone). Both are crossplane-runtime's
# supported policy sets; the creator's is the one 0.1.0 gave it.
RETIRING_POLICIES = [*IN_CLUSTER_POLICIES, "Delete"]
RETIRING_CREATOR_POLICIES = [*POOL_CREATOR_POLICIES, "Delete"]

LABEL_POOL = "modelplane.ai/pool"
LABEL_GPU = "modelplane.ai/gpu"
LABEL_CPU = "modelplane.ai/cpu"
LABEL_SYSTEM = "modelplane.ai/system"
# Keeps pods without the matching toleration off GPUs and off dedicated CPU pools.
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}
CPU_TAINT = {"key": LABEL_CPU, "value": "true", "effect": "NoSchedule"}


def pool_key(pool_name: str) -> str:
    return KEY_POOL_PREFIX + pool_name


def pool_settings_key(pool_name: str) -> str:
    return KEY_POOL_SETTINGS_PREFIX + pool_name


def compose(
    xr: Composite, observed: Observed, required: Required, config: CoreWeaveInput
) -> Outcome:
    try:
        spec = validated_spec(xr)
    except SpecProblems as problems:
        return Outcome.failed(problems.message)
    return _Composer(xr, spec, observed, required, config).composed()


class _Composer(Composer):
    cloud_name_limit = CLOUD_NAME_LIMIT
    cloud = "CKS"
    cluster_key = KEY_CLUSTER
    not_serving = CKS_NOT_SERVING

    def __init__(
        self,
        xr: Composite,
        spec: CoreWeaveClusterSpec,
        observed: Observed,
        required: Required,
        config: CoreWeaveInput,
    ) -> None:
        super().__init__(xr, spec.credentials, observed)
        self.spec, self.required, self.config = spec, required, config

    def compose(self) -> Outcome:
        self._warn_scale_to_zero()
        zone = self._zone()
        self._vpc(zone)
        self._cluster(zone)
        self.compose_usage(
            KEY_USAGE_VPC, of=(VPC_API_VERSION, "VPC", KEY_VPC), by=self._cluster_ref()
        )
        secret_name = self._kubeconfig()
        if secret_name is None:
            self.out.condition(
                CONDITION_POOLS,
                False,
                "WaitingForClusterAccess",
                "the node pools are created once the kubeconfig exists",
            )
            self.out.condition(
                CONDITION_STORAGE,
                False,
                "WaitingForClusterAccess",
                "the StorageClass is created once the kubeconfig exists",
            )
            return self.out
        self.out.status["secrets"] = [
            {"type": "Kubeconfig", "name": secret_name, "key": access.KUBECONFIG_KEY}
        ]
        self._provider_config(secret_name)
        pc_ref = (OBJECT_API_VERSION, "ProviderConfig", KEY_PROVIDER_CONFIG)
        # Keeps the kubeconfig while an Object still deleting a removed pool needs it. Nothing
        # keeps the CKS cluster for the ProviderConfig any more (0.1.0's usage-cluster-by-
        # providerconfig): an Object that cannot reach the cluster would keep it billing.
        self.compose_usage(KEY_USAGE_KUBECONFIG, of=("v1", "Secret", KEY_KUBECONFIG), by=pc_ref)
        self._system_pool()
        for index, pool in enumerate(self.spec.nodePools):
            self._user_pool(index, pool)
        self.pools = [
            _capacity(SYSTEM_POOL_NAME, self.observed[KEY_SYSTEM_POOL]),
            *(_capacity(p.name, self.observed[pool_key(p.name)]) for p in self.spec.nodePools),
        ]
        self._retire_removed_pools()
        self._storage()
        return self.out

    def _warn_scale_to_zero(self) -> None:
        for index, pool in enumerate(self.spec.nodePools):
            if pool.autoscaled and pool.min_nodes == 0:
                self.out.warning(
                    f'spec.nodePools[{index}].minNodeCount: node pool "{pool.name}" may scale '
                    "down to zero nodes, and CKS's cluster autoscaler can't scale a pool whose "
                    "devices bind through DRA up from zero nodes, so a pod scheduled to the empty "
                    "pool waits forever. Keep minNodeCount at 1 or higher."
                )

    # --- the cloud resources -------------------------------------------------------------

    def _zone(self) -> str:
        live = self.observed[KEY_CLUSTER].string("spec", "forProvider", "zone") or self.observed[
            KEY_VPC
        ].string("spec", "forProvider", "zone")
        return keep_live(
            self.out,
            live,
            self.spec.zone,
            f'spec.zone: the CKS cluster and its VPC stay in "{live}"; a zone cannot change on a '
            f'live cluster. To run in "{self.spec.zone}", create a new CoreWeaveCluster there '
            "and move workloads.",
        )

    def _vpc(self, zone: str) -> None:
        observed = self.observed[KEY_VPC]
        # The cluster's pod and service ranges live in these prefixes; a live VPC keeps its own.
        prefixes = observed.get("spec", "forProvider", "vpcPrefixes")
        if not isinstance(prefixes, list) or not prefixes:
            ranges = self.config.vpcPrefixes
            prefixes = [
                {"name": POD_PREFIX, "value": ranges.pod},
                {"name": SERVICE_PREFIX, "value": ranges.service},
                {"name": INTERNAL_LB_PREFIX, "value": ranges.internalLoadBalancer},
            ]
        self.out.compose(
            KEY_VPC,
            {
                "apiVersion": VPC_API_VERSION,
                "kind": "VPC",
                "metadata": {"name": self.name(KEY_VPC)},
                "spec": {
                    "forProvider": {
                        "name": self.cloud_name,
                        "zone": zone,
                        "vpcPrefixes": prefixes,
                    },
                    "providerConfigRef": self.provider_config_ref,
                },
            },
            ready=ready_when_ready(observed),
        )

    def _cluster(self, zone: str) -> None:
        self.out.compose(
            KEY_CLUSTER,
            {
                "apiVersion": CLUSTER_API_VERSION,
                "kind": "Cluster",
                "metadata": {"name": self.name(KEY_CLUSTER)},
                "spec": {
                    "forProvider": {
                        "name": self.cloud_name,
                        "zone": zone,
                        "version": f"v{self.spec.kubernetesVersion}",
                        # A control plane outside CoreWeave reaches only a public endpoint.
                        "public": True,
                        "vpcIdRef": {"name": self.name(KEY_VPC)},
                        "podCidrName": POD_PREFIX,
                        "serviceCidrName": SERVICE_PREFIX,
                        "internalLbCidrNames": [INTERNAL_LB_PREFIX],
                    },
                    "providerConfigRef": self.provider_config_ref,
                },
            },
            ready=ready_when_ready(self.observed[KEY_CLUSTER]),
        )

    def _cluster_ref(self) -> tuple[str, str, str]:
        return (CLUSTER_API_VERSION, "Cluster", KEY_CLUSTER)

    # --- access to the new cluster ---------------------------------------------------------

    def _kubeconfig(self) -> str | None:
        """Compose the kubeconfig Secret when it can be built or was built before; its name."""
        cluster = self.observed[KEY_CLUSTER]
        secret = self.observed[KEY_KUBECONFIG]
        endpoint = cluster.string("status", "atProvider", "apiServerEndpoint")
        written = secret.string("data", access.KUBECONFIG_KEY)
        if not written and not (cluster.ready and endpoint):
            why = (
                "waiting for the CKS API endpoint (status.atProvider.apiServerEndpoint)"
                if cluster.ready
                else f'waiting for CKS cluster "{self.cloud_name}" to become Ready'
            )
            reason = "WaitingForEndpoint" if cluster.ready else "WaitingForCluster"
            self.out.normal(why)
            self.out.condition(CONDITION_ACCESS, False, reason, why)
            return None

        remembered = access.SecretRef.parse(
            secret.string("metadata", "annotations", access.ANNOTATION_TOKEN_SOURCE)
        )
        lookup = access.read_token(
            self.spec.credentials, self.xr.namespace, self.required, remembered
        )
        self.out.requirements.extend(lookup.requirements)
        name = self.name(KEY_KUBECONFIG)
        if endpoint and lookup.token:
            data = access.encode(access.kubeconfig(self.cloud_name, endpoint, lookup.token))
            self.out.condition(
                CONDITION_ACCESS, True, "Available", f'kubeconfig in Secret "{name}"'
            )
        elif written:
            # Keep serving the kubeconfig already written rather than dropping cluster access.
            data = written
            why = lookup.problem or "the CKS API endpoint is not reported right now"
            self.out.warning(f"keeping the kubeconfig already written: {why}")
            self.out.condition(
                CONDITION_ACCESS, True, "LastKnownKubeconfig", f"cannot refresh it: {why}"
            )
        else:
            why = f"waiting for credentials: {lookup.problem}"
            self.out.normal(why)
            self.out.condition(CONDITION_ACCESS, False, "WaitingForCredentials", why)
            return None

        metadata: dict[str, Any] = {"name": name}
        # Kept while the ProviderConfig cannot be read, so the guess survives an outage.
        source = lookup.source or remembered
        if source is not None:
            metadata["annotations"] = {access.ANNOTATION_TOKEN_SOURCE: source.annotation}
        self.out.compose(
            KEY_KUBECONFIG,
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": metadata,
                "type": "Opaque",
                "data": {access.KUBECONFIG_KEY: data},
            },
            ready=ready_when_exists(secret),
        )
        return name

    def _provider_config(self, secret_name: str) -> None:
        self.out.compose(
            KEY_PROVIDER_CONFIG,
            {
                "apiVersion": OBJECT_API_VERSION,
                "kind": "ProviderConfig",
                "metadata": {"name": self.name(KEY_PROVIDER_CONFIG)},
                "spec": {
                    "credentials": {
                        "source": "Secret",
                        "secretRef": {
                            "name": secret_name,
                            "namespace": self.xr.namespace,
                            "key": access.KUBECONFIG_KEY,
                        },
                    }
                },
            },
            ready=ready_when_exists(self.observed[KEY_PROVIDER_CONFIG]),
        )

    # --- inside the cluster ----------------------------------------------------------------

    def _object(self, key: str, manifest: dict[str, Any], **spec: Any) -> dict[str, Any]:
        return {
            "apiVersion": OBJECT_API_VERSION,
            "kind": "Object",
            "metadata": {"name": self.name(key)},
            "spec": {
                "forProvider": {"manifest": manifest},
                "providerConfigRef": {
                    "kind": "ProviderConfig",
                    "name": self.name(KEY_PROVIDER_CONFIG),
                },
                **spec,
            },
        }

    def _live_instance_type(self, applied: View, wanted: str, field: str, pool_name: str) -> str:
        """instanceType is immutable on CKS: a live pool keeps the type it was created with."""
        live = applied.string("instanceType")
        return keep_live(
            self.out,
            live,
            wanted,
            f'{field}: node pool "{pool_name}" keeps instanceType "{live}"; CKS cannot change '
            f'the instance type of a live pool. To use "{wanted}", add a pool under a new name '
            "and remove this one once it is no longer needed.",
        )

    def _pool(
        self,
        key: str,
        pool_name: str,
        spec: dict[str, Any],
        policies: list[str],
    ) -> None:
        manifest = {
            "apiVersion": NODEPOOL_API_VERSION,
            "kind": "NodePool",
            "metadata": {"name": pool_name},
            "spec": spec,
        }
        self.out.compose(
            key,
            self._pool_object(key, manifest, policies),
            ready=ready_when_ready(self.observed[key]),
        )

    def _pool_object(
        self, key: str, manifest: dict[str, Any], policies: list[str]
    ) -> dict[str, Any]:
        return self._object(
            key,
            manifest,
            readiness={"policy": "DeriveFromCelQuery", "celQuery": NODEPOOL_READY_QUERY},
            managementPolicies=policies,
        )

    def _system_pool(self) -> None:
        wanted = self.config.systemPool
        instance_type = self._live_instance_type(
            _applied_spec(self.observed[KEY_SYSTEM_POOL]),
            wanted.instanceType,
            "input.coreweave.systemPool.instanceType",
            SYSTEM_POOL_NAME,
        )
        self._pool(
            KEY_SYSTEM_POOL,
            SYSTEM_POOL_NAME,
            {
                "instanceType": instance_type,
                "targetNodes": wanted.nodeCount,
                "autoscaling": False,
                "nodeLabels": {LABEL_POOL: SYSTEM_POOL_NAME, LABEL_SYSTEM: "true"},
            },
            IN_CLUSTER_POLICIES,
        )

    def _user_pool(self, index: int, pool: NodePool) -> None:
        key = pool_key(pool.name)
        creator = self.observed[key]
        instance_type = self._live_instance_type(
            _applied_spec(creator),
            pool.instanceType,
            f"spec.nodePools[{index}].instanceType",
            pool.name,
        )
        if pool.is_gpu and pool.gpu is not None:
            labels = {LABEL_POOL: pool.name, LABEL_GPU: pool.gpu.acceleratorType}
            taints = [GPU_TAINT]
        else:
            labels = {LABEL_POOL: pool.name, LABEL_CPU: "true"}
            taints = [CPU_TAINT]
        if pool.maxNodeCount is None:
            self._pool(
                key,
                pool.name,
                {
                    "instanceType": instance_type,
                    "targetNodes": pool.nodeCount,
                    "autoscaling": False,
                    "nodeLabels": labels,
                    "nodeTaints": taints,
                },
                IN_CLUSTER_POLICIES,
            )
            return
        settings = {
            "instanceType": instance_type,
            "autoscaling": True,
            "minNodes": pool.min_nodes,
            "maxNodes": pool.maxNodeCount,
            "nodeLabels": labels,
            "nodeTaints": taints,
        }
        # Everything CKS needs to create the pool: a new pool starts with at least one node, as
        # CKS's autoscaler cannot scale it up from zero.
        created = {**settings, "targetNodes": max(pool.nodeCount, 1)}
        self._pool(key, pool.name, created, POOL_CREATOR_POLICIES)
        settings_key = pool_settings_key(pool.name)
        # Only once the pool exists: the settings Object cannot create it, and would wait.
        if (
            creator.has("status", "atProvider", "manifest", "metadata")
            or creator.ready
            or self.observed[settings_key].exists
        ):
            self._pool(settings_key, pool.name, settings, POOL_SETTINGS_POLICIES)

    def _retire_removed_pools(self) -> None:
        """Delete the NodePool of each pool that left spec.nodePools, in two steps that need no
        state: its Object is re-applied with Delete, and dropped once provider-kubernetes has
        reconciled it so, which makes provider-kubernetes delete the NodePool. Only while the
        cluster answers (the Object Synced on its current generation): an Object dropped with
        Delete while the cluster cannot be reached would wait in the control plane, out of the
        XR's sight. Until then it keeps its policies without Delete, so deleting the XR
        meanwhile still needs nothing from the cluster. (An autoscaled pool's settings Object
        has no Delete: it is simply dropped.)"""
        wanted = {pool_key(pool.name) for pool in self.spec.nodePools}
        for key in sorted(self.observed.keys()):
            if not key.startswith(KEY_POOL_PREFIX) or key in wanted:
                continue
            observed = self.observed[key]
            pool_name = key.removeprefix(KEY_POOL_PREFIX)
            manifest = observed.get("spec", "forProvider", "manifest")
            policies = observed.get("spec", "managementPolicies", default=["*"])
            policies = policies if isinstance(policies, list) else ["*"]
            deletes = bool({"*", "Delete"} & set(policies))
            creator = not {"*", "Update"} & set(policies)
            synced = _synced(observed)
            if not isinstance(manifest, dict) or (deletes and synced == "current"):
                self.out.normal(
                    f'deleting node pool "{pool_name}" from the CKS cluster: it is no longer in '
                    "spec.nodePools"
                )
                continue
            if synced == "current":
                retiring = RETIRING_CREATOR_POLICIES if creator else RETIRING_POLICIES
            elif synced == "earlier":
                # provider-kubernetes has not reconciled the last change yet: no verdict.
                retiring = policies
            else:
                retiring = POOL_CREATOR_POLICIES if creator else IN_CLUSTER_POLICIES
                self.out.warning(
                    f'node pool "{pool_name}" is no longer in spec.nodePools, but the CKS cluster '
                    "does not answer, so it is not deleted yet (it keeps billing until it is): "
                    f"{_synced_message(observed)}"
                )
                self.out.compose(key, self._pool_object(key, manifest, retiring), ready=True)
                continue
            self.out.normal(
                f'node pool "{pool_name}" is no longer in spec.nodePools: deleting it from the '
                "CKS cluster"
            )
            # Ready: a pool on its way out never holds the XR's readiness.
            self.out.compose(key, self._pool_object(key, manifest, retiring), ready=True)

    def _storage(self) -> None:
        observer = self.observed[KEY_SHARED_VAST]
        self.out.compose(
            KEY_SHARED_VAST,
            self._object(
                KEY_SHARED_VAST,
                {
                    "apiVersion": "storage.k8s.io/v1",
                    "kind": "StorageClass",
                    "metadata": {"name": SHARED_VAST},
                },
                managementPolicies=["Observe"],
            ),
            ready=ready_when_ready(observer),
        )
        clone = self.observed[KEY_STORAGE_CLASS]
        manifest = clone.get("spec", "forProvider", "manifest")
        wanted_name = self.config.storageClassName
        if isinstance(manifest, dict) and isinstance(manifest.get("provisioner"), str):
            # A StorageClass is immutable: the live clone is re-applied exactly as created.
            metadata = manifest.get("metadata")
            kept_name = metadata.get("name") if isinstance(metadata, dict) else None
            if not isinstance(kept_name, str) or not kept_name:
                # Not as the function wrote it; keep what is there under the configured name.
                manifest = {**manifest, "metadata": {"name": wanted_name}}
            elif kept_name != wanted_name:
                self.out.warning(
                    f'input.coreweave.storageClassName: keeping StorageClass "{kept_name}"; '
                    "a StorageClass cannot be renamed in place."
                )
        else:
            live = observer.child("status", "atProvider", "manifest")
            provisioner = live.string("provisioner")
            if not provisioner:
                why = f'waiting to observe StorageClass "{SHARED_VAST}" in the CKS cluster'
                self.out.normal(why)
                self.out.condition(CONDITION_STORAGE, False, "WaitingForSharedVast", why)
                return
            manifest = {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": {"name": wanted_name},
                "provisioner": provisioner,
                # Delete, unlike shared-vast's Retain: volumes of a model cache are disposable.
                "reclaimPolicy": "Delete",
            }
            for field in (
                "parameters",
                "mountOptions",
                "volumeBindingMode",
                "allowVolumeExpansion",
            ):
                if live.has(field):
                    manifest[field] = live.get(field)
        self.out.compose(
            KEY_STORAGE_CLASS,
            self._object(KEY_STORAGE_CLASS, manifest, managementPolicies=IN_CLUSTER_POLICIES),
            ready=ready_when_ready(clone),
        )
        name = str(manifest["metadata"]["name"])
        self.out.status["cache"] = {"storageClassName": name}
        self.out.condition(
            CONDITION_STORAGE,
            True,
            "Available",
            f'ReadWriteMany StorageClass "{name}" cloned from "{SHARED_VAST}"',
        )


def _capacity(name: str, creator: View) -> PoolCapacity:
    """A CKS pool's nodes against its target, from the NodePool its creator Object observes
    (spec.targetNodes, which the CKS autoscaler owns on an autoscaled pool, and
    status.currentNodes/queuedNodes); at target once CKS has validated it and runs them all."""
    live = creator.child("status", "atProvider", "manifest")
    if not live.has("metadata"):
        return PoolCapacity(name, False, "not created yet")
    validated = live.condition_status("Validated")
    if validated == "False":
        why = condition_message(live, "Validated") or "no reason given"
        return PoolCapacity(name, False, f"CKS did not validate it: {why}")
    if validated != "True":
        return PoolCapacity(name, False, "waiting for CKS to validate it")
    target, current, queued = (
        _count(live.get(*path))
        for path in (("spec", "targetNodes"), ("status", "currentNodes"), ("status", "queuedNodes"))
    )
    return PoolCapacity(name, current >= target, nodes(current, target, queued))


def _count(value: object) -> int:
    """A node count CKS reports; 0 where it reports none."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _synced(observed: View) -> str:
    """Whether provider-kubernetes reaches the cluster for this Object: "current" (Synced=True
    on the Object's current generation, or with no generation to compare), "earlier" (True, but
    from before its last change) or "no" (False, or not reported)."""
    condition = condition_of(observed, "Synced")
    if condition is None or condition.get("status") != "True":
        return "no"
    seen = condition.get("observedGeneration")
    generation = observed.get("metadata", "generation")
    if seen is None or generation is None or seen == generation:
        return "current"
    return "earlier"


def _synced_message(observed: View) -> str:
    if condition_of(observed, "Synced") is None:
        return "provider-kubernetes has not reported on it yet"
    return condition_message(observed, "Synced") or "not Synced"


def _applied_spec(observed: View) -> View:
    """The NodePool spec the function last applied through the Object."""
    return observed.child("spec", "forProvider", "manifest", "spec")
