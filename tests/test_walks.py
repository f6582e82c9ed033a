"""Lifecycle random walks: one XR per walk over many reconciles, with a random event before each.

Each walk (a seeded `random.Random`, so every walk is reproducible from its id) drives a `World`
through at least 40 reconciles. Before each reconcile one or two events happen: a provider marks a
resource Ready or not, reports or drops status fields (endpoint, NodePool manifests, pool IDs,
shared-vast), the CoreWeave credentials vanish, come back or rotate, an autoscaler resizes a live
pool, the user edits the spec (pools added and removed, autoscaling toggled, immutable fields
changed, sizes changed), makes an invalid edit, or the operator changes the step input.

After every reconcile the walk checks:

  a  no composed resource leaves the desired state unless its pool left spec.nodePools;
  b  an autoscaled pool's live node count is never asserted (CKS: no targetNodes once the pool
     exists, unless the Object lost its whole status and was last applied with targetNodes:
     nothing then tells it from a pool being created, so that is counted, not failed; Civo: no
     forProvider.nodeCount and no LateInitialize);
  c  immutable fields of an applied resource never change (CKS instanceType, zone, VPC prefixes,
     the StorageClass clone; Civo size, region, CNI, applications, the inline pool);
  d  what is gated on readiness (kubeconfig, ProviderConfigs, Objects, Civo NodePools, the
     autoscaler Release) stays once composed;
  e  every composed object validates against ../shared/crds and has a valid object name;
  f  the org token appears nowhere but inside the kubeconfig Secret's data, in any pass of any
     reconcile (results, conditions, XR status, other objects);
  g  the kubeconfig is refreshed only from a readable token and a reported endpoint, and then
     carries the current token; otherwise it is re-applied byte for byte;
  h  status.secrets, once published, stays;
  i  an invalid edit is one FATAL naming a field, and changes nothing; a valid one is no FATAL;
  j  a Civo pool's group, once in the cluster-autoscaler, stays while the pool autoscales.

The World is extended as Crossplane behaves: every pass of the requirements loop is kept, the XR
status the function publishes is sent back as the observed composite, and providers set Ready
and Synced independently. The gaps the walks found were fixed in function/; the minimal
reproductions at the end of this file are their regression tests. test_walks_reach_every_stage
keeps the walks from silently getting shallower.
"""

from __future__ import annotations

import base64
import copy
import dataclasses
import functools
import io
import json
import random
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import pytest
import structlog
from crossplane.function import logging as fnlogging
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from harness.fixtures import (
    CLUSTER_PROVIDER_CONFIG,
    ENDPOINT,
    World,
    civo_connection_secret,
    civo_xr,
    coreweave_xr,
    credentials_secret,
    desired,
    results,
    xr_status,
)
from harness.invariants import (
    CIVO_SIZES,
    CW_INSTANCE_TYPES,
    fatal_problems,
    leaked_tokens,
    object_problems,
    tokens_in,
    xrd_refuses,
)
from harness.validator import shared_crds_dir
from tests.coreweave_expected import SHARED_VAST_LIVE

CRDS = shared_crds_dir()

CW, CIVO = "CoreWeaveCluster", "CivoCluster"
INPUT_API_VERSION = "inference.fn.modelplane.ai/v1beta1"
WALKS = 30
STEPS = 45
MISSING = object()


@dataclasses.dataclass(frozen=True)
class Violation:
    category: str
    walk: str
    step: int
    event: str
    detail: str

    def __str__(self) -> str:
        return f"[{self.category}] {self.walk} step {self.step} after {self.event}: {self.detail}"


def at(obj: Any, *path: str) -> Any:
    for part in path:
        if not isinstance(obj, dict) or part not in obj:
            return MISSING
        obj = obj[part]
    return obj


def autoscaling_groups(composed: dict[str, Any]) -> list[dict[str, Any]]:
    """The groups of the composed cluster-autoscaler Release (none where none is composed)."""
    groups = at(
        composed, "cluster-autoscaler", "spec", "forProvider", "values", "autoscalingGroups"
    )
    return [] if groups is MISSING else list(groups)


def pool_names(spec: dict[str, Any]) -> list[str]:
    return [p["name"] for p in spec.get("nodePools", []) if isinstance(p, dict) and "name" in p]


class Walk(World):
    """A World whose providers, user and operator act at random."""

    def __init__(self, kind: str, seed: int) -> None:
        self.kind = kind
        self.name = f"{kind}-{seed}"
        self.rng = rng = random.Random(self.name)  # noqa: S311 - reproducible walks, not secrets
        step_input: dict[str, Any] = {"apiVersion": INPUT_API_VERSION, "kind": "Input"}
        if kind == CIVO and rng.random() < 0.4:
            step_input["civo"] = {"applications": rng.choice(["", "metrics-server"])}
        # Which keys of the Civo connection Secret hold the kubeconfig: the provider decides.
        self.connection_keys = rng.choice(
            [("kubeconfig",), ("attribute.kubeconfig",), ("kubeconfig", "attribute.kubeconfig")]
        )
        self.connection_secret = False
        super().__init__(coreweave_xr() if kind == CW else civo_xr(), step_input=step_input)
        if rng.random() < 0.5:  # start from a random subset of the example's pools
            pools = self.xr["spec"]["nodePools"]
            keep = [p for p in pools if rng.random() < 0.7 or p.get("role") == "System"]
            self.xr["spec"]["nodePools"] = keep or pools[:1]
        # The last spec the function composed.
        self.valid_spec: dict[str, Any] = copy.deepcopy(self.xr["spec"])
        self.tokens: list[str] = []
        self.token = self.new_token()
        self.credentials = "ok"
        self.sync_credentials()
        self.endpoint = ENDPOINT
        self.violations: list[Violation] = []
        # Truth the walk knows and the function may not: which CKS pools exist in the cluster
        # (the provider reported them once) and their live node counts.
        self.in_cluster: set[str] = set()
        self.live_count: dict[str, int] = {}
        self.published: Any = None
        self.groups: dict[str, dict[str, Any]] = {}
        self.step = 0
        self.event = "start"
        self.counter = 0
        self.seen: Counter[str] = Counter()

    def condition(self, key: str, kind: str, status: bool) -> None:
        """A provider sets one condition, leaving the others as they are."""
        reported = self.observed[key].setdefault("status", {})
        kept = [c for c in reported.get("conditions", []) if c.get("type") != kind]
        value = "True" if status else "False"
        reported["conditions"] = [*kept, {"type": kind, "status": value, "reason": "Walk"}]

    # --- credentials ---------------------------------------------------------------------

    def new_token(self) -> str:
        token = f"CW-SECRET-walk-{self.name}-{len(self.tokens)}-{self.rng.getrandbits(48):012x}"
        self.tokens.append(token)
        return token

    def sync_credentials(self) -> None:
        if self.kind == CIVO:
            self.cluster_objects = (
                [civo_connection_secret(*self.connection_keys)] if self.connection_secret else []
            )
            return
        secret = credentials_secret(self.token)
        if self.credentials == "garbled":
            secret["data"]["credentials"] = base64.b64encode(b"{not json").decode()
        config = [] if self.credentials in ("no-config", "none") else [CLUSTER_PROVIDER_CONFIG]
        found = [] if self.credentials in ("no-secret", "none") else [secret]
        self.cluster_objects = config + found

    # --- helpers -------------------------------------------------------------------------

    @property
    def pools(self) -> list[dict[str, Any]]:
        pools: list[dict[str, Any]] = self.xr["spec"]["nodePools"]
        return pools

    def keys(self, *kinds: str) -> list[str]:
        return sorted(k for k, v in self.observed.items() if v["kind"] in kinds)

    def new_pool(self) -> dict[str, Any]:
        rng = self.rng
        self.counter += 1
        taken = set(pool_names(self.xr["spec"]))
        names = ["h100", "l40s", "cpu", "a100", "b200", "gpu-x", "infer", "batch"]
        free = [n for n in names if n not in taken]
        name = rng.choice(free) if free and rng.random() < 0.7 else f"p{self.counter}"
        if self.kind == CW:
            role = rng.choice(["GPU", "CPU"])
            pool: dict[str, Any] = {"name": name, "instanceType": rng.choice(CW_INSTANCE_TYPES)}
        else:
            role = rng.choice(["GPU", "System"])
            pool = {"name": name, "size": rng.choice(CIVO_SIZES)}
        pool["role"] = role
        if role == "GPU":
            pool["gpu"] = {"acceleratorType": rng.choice(["H100", "L40S", "A100"])}
        low = 1 if self.kind == CIVO else 0
        if rng.random() < 0.5:
            pool["maxNodeCount"] = rng.randint(max(low, 1), 12)
            pool["nodeCount"] = rng.randint(low, pool["maxNodeCount"])
            if rng.random() < 0.5:
                pool["minNodeCount"] = rng.randint(low, pool["maxNodeCount"])
        else:
            pool["nodeCount"] = rng.randint(low, 6)
        return pool

    def inline_index(self) -> int | None:
        return next((i for i, p in enumerate(self.pools) if p.get("role") == "System"), None)

    # --- events ----------------------------------------------------------------------------

    def act(self) -> str:
        column = 0 if self.kind == CW else 1
        events = {name: w[column] for name, w in EVENT_WEIGHTS.items() if w[column]}
        chosen = self.rng.choices(list(events), weights=list(events.values()))[0]
        return getattr(self, f"ev_{chosen}")() or chosen

    def ev_noop(self) -> str:
        return "noop"

    def ev_ready(self) -> str:
        kinds = ("VPC", "Cluster", "Object", "Network", "Firewall", "NodePool", "Release")
        keys = self.keys(*kinds)
        if not keys:
            return "ready: nothing yet"
        key = self.rng.choice(keys)
        ready = self.rng.random() < 0.75
        self.condition(key, "Ready", ready)
        self.condition(key, "Synced", self.rng.random() < 0.8)
        return f"{key} Ready={ready}"

    def ev_converge(self) -> str:
        """The providers catch up: everything applied reports Ready and its usual status."""
        for key, body in self.observed.items():
            kind = body["kind"]
            if kind in ("Secret", "ProviderConfig", "Usage"):
                continue
            self.condition(key, "Ready", True)
            self.condition(key, "Synced", True)
            at_provider = body["status"].setdefault("atProvider", {})
            if key == "cks-cluster":
                at_provider["apiServerEndpoint"] = self.endpoint
            elif key == "civo-cluster":
                at_provider["id"] = "5f0b-cluster"
                self.connection_secret = True
                self.sync_credentials()
            elif key == "shared-vast-observer":
                at_provider["manifest"] = copy.deepcopy(SHARED_VAST_LIVE)
            elif kind == "Object":
                self.report_manifest(key, at_provider)
            elif kind == "NodePool":
                self.report_pool_id(key, at_provider)
        return "providers caught up"

    def report_manifest(self, key: str, at_provider: dict[str, Any], **metadata: str) -> None:
        """provider-kubernetes reports the Object's manifest as applied; a CKS pool then exists
        in the cluster, at its live node count once the autoscaler has sized it."""
        manifest = copy.deepcopy(self.observed[key]["spec"]["forProvider"]["manifest"])
        manifest["metadata"].update(metadata)
        if key in self.live_count:
            manifest["spec"]["targetNodes"] = self.live_count[key]
        at_provider["manifest"] = manifest
        if key != "rwx-storageclass":
            self.in_cluster.add(key)
            self.live_count.setdefault(key, manifest["spec"].get("targetNodes", 1))

    def report_pool_id(self, key: str, at_provider: dict[str, Any]) -> None:
        """provider-civo reports a NodePool's ID and keeps it as the external name."""
        annotations = self.observed[key]["metadata"]["annotations"]
        self.counter += 1
        pool_id = annotations.get("crossplane.io/external-name") or f"id-{key}-{self.counter}"
        annotations["crossplane.io/external-name"] = pool_id
        at_provider["id"] = pool_id

    def reported(
        self, key: str, chance: float, report: Callable[[dict[str, Any]], object], field: str = ""
    ) -> str:
        """By chance a provider reports key's status.atProvider (report fills it in); otherwise
        it reports no field there, or no atProvider at all."""
        status = self.observed[key].setdefault("status", {})
        if self.rng.random() < chance:
            report(status.setdefault("atProvider", {}))
            return "reported"
        if not field:
            status.pop("atProvider", None)
        elif isinstance(status.get("atProvider"), dict):
            status["atProvider"].pop(field, None)
        return "not reported"

    def ev_status_lost(self) -> str:
        if not self.observed:
            return "status lost: nothing yet"
        key = self.rng.choice(sorted(self.observed))
        self.observed[key].pop("status", None)
        return f"{key} status lost"

    # CoreWeave providers

    def ev_endpoint(self) -> str:
        if "cks-cluster" not in self.observed:
            return "endpoint: no cluster"
        at_provider = (
            self.observed["cks-cluster"].setdefault("status", {}).setdefault("atProvider", {})
        )
        choice = self.rng.choice(["report", "report", "remove", "move"])
        if choice == "move":
            self.endpoint = f"moved-{self.rng.getrandbits(24):06x}.k8s.us-east-04a.coreweave.com"
        if choice == "remove":
            at_provider.pop("apiServerEndpoint", None)
        else:
            at_provider["apiServerEndpoint"] = self.endpoint
        return f"endpoint {choice}"

    def ev_pool_manifest(self) -> str:
        keys = [
            k for k in self.keys("Object") if k.startswith("nodepool-") or k == "system-nodepool"
        ]
        if not keys:
            return "pool manifest: no pools"
        key = self.rng.choice(keys)
        report = functools.partial(self.report_manifest, key, uid=f"uid-{key}")
        return f"{key} manifest {self.reported(key, 0.75, report, 'manifest')}"

    def ev_shared_vast(self) -> str:
        key = self.rng.choice(["shared-vast-observer", "rwx-storageclass"])
        if key not in self.observed:
            return f"{key}: not composed"
        live = SHARED_VAST_LIVE
        if key == "rwx-storageclass":  # CKS keeps the class as applied
            live = self.observed[key]["spec"]["forProvider"]["manifest"]
        report = self.reported(key, 0.7, lambda a: a.update(manifest=copy.deepcopy(live)))
        return f"{key} manifest {report}"

    def ev_credentials(self) -> str:
        choice = self.rng.choice(
            ["ok", "ok", "rotate", "no-config", "no-secret", "none", "garbled"]
        )
        if choice == "rotate":
            self.token = self.new_token()
        self.credentials = "ok" if choice == "rotate" else choice
        self.sync_credentials()
        return "token rotated" if choice == "rotate" else f"credentials {choice}"

    def ev_autoscale(self) -> str:

        def live(key: str) -> bool:
            if self.kind == CW:
                return key in self.in_cluster
            return at(self.observed.get(key), "status", "atProvider", "id") is not MISSING

        autoscaled = [(p, f"nodepool-{p['name']}") for p in self.pools if "maxNodeCount" in p]
        candidates = [(pool, key) for pool, key in autoscaled if live(key)]
        if not candidates:
            return "autoscale: no live autoscaled pool"
        pool, key = self.rng.choice(candidates)
        low, high = pool.get("minNodeCount", 1), pool["maxNodeCount"]
        if not (isinstance(low, int) and isinstance(high, int) and low <= high):
            return "autoscale: the pool's bounds are invalid right now (skipped)"
        count = self.rng.randint(low, high)
        if self.kind == CW:
            self.live_count[key] = count
            manifest = at(self.observed[key], "status", "atProvider", "manifest")
            if isinstance(manifest, dict):
                manifest["spec"]["targetNodes"] = count
        else:
            self.observed[key]["status"]["atProvider"]["nodeCount"] = count
        return f"autoscaler scaled {key} to {count}"

    # Civo providers

    def ev_cluster_id(self) -> str:
        if "civo-cluster" not in self.observed:
            return "cluster id: no cluster"
        report = self.reported("civo-cluster", 0.75, lambda a: a.update(id="5f0b-cluster"))
        return f"cluster id {report}"

    def ev_connection_secret(self) -> str:
        """The provider writes the cluster's connection Secret, or it is (still) missing."""
        if "civo-cluster" not in self.observed:
            return "connection secret: no cluster"
        self.connection_secret = self.rng.random() < 0.8
        self.sync_credentials()
        return f"connection secret {'written' if self.connection_secret else 'missing'}"

    def ev_pool_id(self) -> str:
        keys = self.keys("NodePool")
        if not keys:
            return "pool id: no pools"
        key = self.rng.choice(keys)
        report = functools.partial(self.report_pool_id, key)
        return f"{key} id {self.reported(key, 0.75, report, 'id')}"

    # The user

    def ev_edit(self) -> str:
        rng = self.rng
        pools = self.pools
        edits = ["add", "remove", "toggle", "immutable", "place", "count", "bounds", "version"]
        if self.kind == CIVO:
            edits += ["inline", "reorder"]
        edit = rng.choice(edits)
        if not pools:
            return "user edit: no pools to edit"
        if xrd_refuses(self.kind, self.xr):
            return "user edit: the spec is invalid right now (skipped)"
        pool = rng.choice(pools)
        if edit == "add" and len(pools) < 8:
            pools.append(self.new_pool())
            return f"user added pool {pools[-1]['name']}"
        if edit == "remove" and len(pools) > 1:
            pools.remove(pool)
            return f"user removed pool {pool['name']}"
        if edit == "toggle":
            if "maxNodeCount" in pool:
                pool.pop("maxNodeCount")
                pool.pop("minNodeCount", None)
                return f"user made {pool['name']} fixed"
            if self.kind == CIVO and pools.index(pool) == self.inline_index():
                return "user: the inline pool cannot autoscale (skipped)"
            pool["maxNodeCount"] = max(pool.get("nodeCount", 1), 1) + rng.randint(0, 8)
            if rng.random() < 0.5:
                pool["minNodeCount"] = rng.randint(1, pool["maxNodeCount"])
            return f"user made {pool['name']} autoscaled"
        if edit == "immutable":
            field = "instanceType" if self.kind == CW else "size"
            pool[field] = rng.choice(CW_INSTANCE_TYPES if self.kind == CW else CIVO_SIZES)
            return f"user set {pool['name']}.{field}={pool[field]}"
        if edit == "place":
            field = "zone" if self.kind == CW else "region"
            self.xr["spec"][field] = rng.choice(
                ["US-EAST-04A", "US-WEST-09B"] if self.kind == CW else ["LON1", "FRA1"]
            )
            return f"user set {field}={self.xr['spec'][field]}"
        if edit == "count":
            low = 1 if self.kind == CIVO else 0
            pool["nodeCount"] = rng.randint(low, pool.get("maxNodeCount", 6))
            return f"user set {pool['name']}.nodeCount={pool['nodeCount']}"
        if edit == "bounds" and "maxNodeCount" in pool:
            pool["maxNodeCount"] = max(
                pool.get("nodeCount", 1), pool.get("minNodeCount", 1), 1
            ) + rng.randint(0, 6)
            return f"user set {pool['name']}.maxNodeCount={pool['maxNodeCount']}"
        if edit == "version":
            value = rng.choice(
                ["1.36", "1.37", "1.38"] if self.kind == CW else ["1.33.4-k3s1", "1.34.1-k3s1"]
            )
            self.xr["spec"]["kubernetesVersion"] = value
            return f"user set kubernetesVersion={value}"
        if edit == "inline" and (index := self.inline_index()) is not None:
            inline = pools[index]
            inline["size"] = rng.choice(CIVO_SIZES)
            inline["nodeCount"] = rng.randint(1, 4)
            return f"user edited the inline pool {inline['name']}"
        if edit == "reorder":
            rng.shuffle(pools)
            return "user reordered pools"
        return f"user edit {edit} (nothing to do)"

    def ev_invalid(self) -> str:
        if not self.pools:
            return "invalid edit: spec already invalid"
        pool = self.rng.choice(self.pools)
        field = "instanceType" if self.kind == CW else "size"
        place = "zone" if self.kind == CW else "region"

        def gpu_without_gpu() -> None:
            pool["role"] = "GPU"
            pool.pop("gpu", None)

        def no_system_pool() -> None:
            for p in self.pools:
                if p.get("role") == "System":
                    p["role"] = "GPU"

        edits: dict[str, Callable[[], object]] = {
            "nodeCount=5000": lambda: pool.update(nodeCount=5000),
            "role=TPU": lambda: pool.update(role="TPU"),
            f"no {field}": lambda: pool.pop(field),
            "empty place": lambda: self.xr["spec"].update({place: ""}),
            "no pools": lambda: self.xr["spec"].update(nodePools=[]),
            "GPU without gpu": gpu_without_gpu,
            "min above max": lambda: pool.update(minNodeCount=9, maxNodeCount=3, nodeCount=3),
            "name with spaces": lambda: pool.update(name="bad name"),
            "duplicate pool": lambda: self.pools.append(copy.deepcopy(pool)),
            "count as text": lambda: pool.update(nodeCount="3"),
            "no role": lambda: pool.pop("role", None),
        }
        if self.kind == CIVO:
            edits["no System pool"] = no_system_pool
            edits["autoscaled workers"] = lambda: pool.update(
                name="workers", maxNodeCount=max(pool.get("nodeCount", 1), 4)
            )
            inline = self.pools[self.inline_index() or 0]
            edits["inline autoscales"] = lambda: inline.update(maxNodeCount=5)
        else:
            edits["reserved name"] = lambda: pool.update(name="modelplane-system")
        name = self.rng.choice(sorted(edits))
        edits[name]()
        return f"invalid edit: {name}"

    # The operator

    def ev_input(self) -> str:
        assert self.step_input is not None, "a Walk is made with a step input and keeps it"
        changes = INPUT_CHANGES[self.kind]
        choice = self.rng.choice(list(changes))
        (*parents, field), values = changes[choice]
        target = self.step_input
        for parent in parents:
            target = target.setdefault(parent, {})
        target[field] = copy.deepcopy(self.rng.choice(values))
        return f"operator changed {parents[0]} {choice}"

    # --- one step ----------------------------------------------------------------------------

    def run_step(self, step: int) -> None:
        self.step = step
        events = [self.act() for _ in range(1 if self.rng.random() < 0.7 else 2)]
        self.event = " + ".join(events)
        before = copy.deepcopy(self.observed)
        known_in_cluster = set(self.in_cluster)
        expect_fatal = xrd_refuses(self.kind, self.xr)
        rsp = self.reconcile()
        fatal = [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
        self.seen["reconciles"] += 1
        self.seen["fatal"] += bool(fatal)
        if not fatal:
            self.count_stages(rsp, before, known_in_cluster)
        self.check_token()
        if expect_fatal:
            self.expect(bool(fatal), "i", f"an invalid spec was composed: {results(rsp)[:2]}")
            if fatal:
                for problem in fatal_problems(rsp):
                    self.expect(False, "i", problem)
                self.expect(self.observed == before, "i", "a FATAL reconcile changed the world")
            self.xr["spec"] = copy.deepcopy(self.valid_spec)
            return
        self.expect(not fatal, "i", f"a valid spec was refused: {fatal[:1]} ({self.event})")
        if fatal:
            return
        self.valid_spec = copy.deepcopy(self.xr["spec"])
        composed = desired(rsp)
        self.check_kept(before, composed)
        self.check_autoscaled(composed)
        self.check_immutable(before, composed)
        self.check_objects(composed)
        self.check_kubeconfig(before, composed)
        self.check_status(rsp)
        self.check_groups(composed)
        self.track(composed)

    # --- what the walk reached --------------------------------------------------------------

    def count_stages(
        self, rsp: fnv1.RunFunctionResponse, before: dict[str, Any], in_cluster: set[str]
    ) -> None:
        composed = desired(rsp)
        messages = [m for _, m in results(rsp)]
        old_kubeconfig = at(before.get("kubeconfig"), "data", "kubeconfig")
        reached = {
            "kubeconfig": "kubeconfig" in composed,
            "last-known-kubeconfig": any(m.startswith("keeping the kubeconfig") for m in messages),
            "kubeconfig-refreshed": "kubeconfig" in before
            and "kubeconfig" in composed
            and old_kubeconfig != composed["kubeconfig"]["data"]["kubeconfig"],
            "rwx-storageclass": "rwx-storageclass" in composed,
            "live-autoscaled-cks-pool": self.kind == CW
            and any(
                f"nodepool-{p['name']}" in in_cluster for p in self.pools if "maxNodeCount" in p
            ),
            "civo-nodepools": self.kind == CIVO
            and any(k.startswith("nodepool-") for k in composed),
            "autoscaler-release": "cluster-autoscaler" in composed,
            "autoscaler-groups": bool(autoscaling_groups(composed)),
            "pool-removed": any(k not in composed for k in before),
            "immutable-warning": any("cannot change" in m for m in messages),
        }
        self.seen.update(stage for stage, when in reached.items() if when)

    # --- invariants ------------------------------------------------------------------------

    def expect(self, ok: bool, category: str, detail: str) -> None:
        if not ok:
            self.violations.append(Violation(category, self.name, self.step, self.event, detail))

    def check_kept(self, before: dict[str, Any], composed: dict[str, Any]) -> None:
        names = set(pool_names(self.xr["spec"]))
        autoscaled = {p["name"] for p in self.pools if "maxNodeCount" in p}
        for key in sorted(set(before) - set(composed)):
            removed = key.startswith("nodepool-") and key.removeprefix("nodepool-") not in names
            # An autoscaled pool's settings Object retires with the pool or its autoscaling; it
            # has no Delete policy, so retiring it never touches the live pool.
            settings_of = key.removeprefix("autoscaled-nodepool-")
            removed = removed or (key != settings_of and settings_of not in autoscaled)
            core = key.startswith("nodepool-") or key in CORE_RESOURCES
            self.expect(removed, "a" if core else "d", f"{key} dropped from the desired state")

    def check_autoscaled(self, composed: dict[str, Any]) -> None:
        for pool in self.pools:
            key = f"nodepool-{pool['name']}"
            if "maxNodeCount" not in pool or key not in composed:
                continue
            spec = composed[key]["spec"]
            policies = spec.get("managementPolicies", ["*"])
            if self.kind == CW:
                # The creator never updates a live pool, and always carries what a (re-)create
                # needs; the settings Object never creates and never carries targetNodes.
                target = spec["forProvider"]["manifest"]["spec"].get("targetNodes")
                self.expect(
                    "*" not in policies and "Update" not in policies,
                    "b",
                    f"{key}: the creator of an autoscaled pool may update it: {policies}",
                )
                self.expect(
                    isinstance(target, int) and target >= 1,
                    "b",
                    f"{key}: a re-created autoscaled pool would lack targetNodes: {target}",
                )
                settings = composed.get(f"autoscaled-{key}")
                if settings is not None:
                    self.expect(
                        "targetNodes" not in settings["spec"]["forProvider"]["manifest"]["spec"]
                        and settings["spec"].get("managementPolicies") == ["Observe", "Update"],
                        "b",
                        f"autoscaled-{key}: may create the pool or write its size: {settings}",
                    )
            else:
                self.expect(
                    "nodeCount" not in spec["forProvider"]
                    and "*" not in policies
                    and "LateInitialize" not in policies,
                    "b",
                    f"{key}: autoscaled pool may have its node count reverted: {spec}",
                )

    def check_immutable(self, before: dict[str, Any], composed: dict[str, Any]) -> None:
        paths = CW_IMMUTABLE if self.kind == CW else CIVO_IMMUTABLE
        for key, body in composed.items():
            if key not in before:
                continue
            provisioner = at(before[key], "spec", "forProvider", "manifest", "provisioner")
            if key == "rwx-storageclass" and (provisioner is MISSING or not provisioner):
                continue
            for pattern, path in paths:
                old, new = at(before[key], *path), at(body, *path)
                if re.fullmatch(pattern, key) and old != new:
                    self.expect(False, "c", f"{key} {'.'.join(path)}: {old!r} -> {new!r}")

    def check_objects(self, composed: dict[str, Any]) -> None:
        if CRDS is None:  # the test that reads category e skips then
            return
        for key, problems in object_problems(composed).items():
            self.expect(False, "e", f"{key}: {problems}")

    def check_token(self) -> None:
        leaked = next((t for rsp in self.passes for t in leaked_tokens(rsp, self.tokens)), None)
        self.expect(leaked is None, "f", f"token {leaked} leaked")

    def check_kubeconfig(self, before: dict[str, Any], composed: dict[str, Any]) -> None:
        if self.kind != CW or "kubeconfig" not in composed:
            return
        data = composed["kubeconfig"]["data"]["kubeconfig"]
        old = at(before.get("kubeconfig"), "data", "kubeconfig")
        endpoint = at(before.get("cks-cluster"), "status", "atProvider", "apiServerEndpoint")
        fresh = self.credentials == "ok" and isinstance(endpoint, str) and endpoint != ""
        text = base64.b64decode(data).decode()
        if fresh:
            self.expect(
                json.dumps(self.token) in text and json.dumps(f"https://{endpoint}") in text,
                "g",
                "the kubeconfig does not carry the current token and endpoint",
            )
        elif old is not MISSING:
            self.expect(
                data == old, "g", "the kubeconfig changed without a readable token and endpoint"
            )

    def check_status(self, rsp: fnv1.RunFunctionResponse) -> None:
        secrets = xr_status(rsp).get("secrets")
        if self.published is not None:
            self.expect(
                secrets == self.published, "h", f"status.secrets {self.published} -> {secrets}"
            )
        if secrets is not None:
            self.published = secrets

    def check_groups(self, composed: dict[str, Any]) -> None:
        if self.kind != CIVO or "cluster-autoscaler" not in composed:
            return
        live = {g["name"]: g for g in autoscaling_groups(composed)}
        autoscaled = {p["name"]: p for p in self.pools if "maxNodeCount" in p}
        for name, group in sorted(self.groups.items()):
            if name in autoscaled and f"nodepool-{name}" in composed:
                dropped = f"pool {name}: group {group['name']} dropped from the cluster-autoscaler"
                self.expect(group["name"] in live, "j", dropped)

    def track(self, composed: dict[str, Any]) -> None:
        self.in_cluster &= set(composed)
        self.live_count = {k: v for k, v in self.live_count.items() if k in composed}
        if self.kind == CW:
            for key in self.in_cluster:
                if composed[key]["spec"].get("managementPolicies", ["*"]) != ["*"]:
                    continue  # an Object that cannot update the pool does not size it
                target = at(composed[key], "spec", "forProvider", "manifest", "spec", "targetNodes")
                if target is not MISSING:
                    self.live_count[key] = target
        else:
            self.groups = {}
            by_id = {g["name"]: g for g in autoscaling_groups(composed)}  # none without a Release
            for pool in self.pools:
                body = self.observed.get(f"nodepool-{pool['name']}")
                pool_id = at(body, "metadata", "annotations", "crossplane.io/external-name")
                if pool_id in by_id:
                    self.groups[pool["name"]] = by_id[pool_id]


# Each event's weight in a CoreWeave walk and in a Civo walk (0: not an event of that cloud).
EVENT_WEIGHTS = {
    "converge": (8, 8),
    "ready": (20, 20),
    "endpoint": (8, 0),
    "pool_manifest": (12, 0),
    "shared_vast": (6, 0),
    "credentials": (8, 0),
    "cluster_id": (0, 6),
    "connection_secret": (0, 5),
    "pool_id": (0, 12),
    "autoscale": (8, 8),
    "status_lost": (2, 2),
    "edit": (16, 18),
    "invalid": (6, 6),
    "input": (4, 5),
    "noop": (4, 4),
}
# What the operator may change in the step input: the field, and its values.
INPUT_CHANGES: dict[str, dict[str, tuple[tuple[str, ...], Sequence[Any]]]] = {
    CW: {
        "systemPool": (
            ("coreweave", "systemPool", "instanceType"),
            ["cd-gp-i64-erapids", "cd-gp-a192-genoa"],
        ),
        "systemCount": (("coreweave", "systemPool", "nodeCount"), range(1, 11)),
        "storageClass": (("coreweave", "storageClassName"), ["shared-vast-delete", "model-cache"]),
        "prefixes": (("coreweave", "vpcPrefixes"), [{}, {"pod": "10.64.0.0/13"}]),
    },
    CIVO: {
        "cni": (("civo", "cni"), ["flannel", "cilium"]),
        "applications": (("civo", "applications"), ["", "-traefik2-nodeport", "metrics-server"]),
        "chart": (("civo", "clusterAutoscaler", "chartVersion"), ["9.59.0", "9.60.1"]),
    },
}
# What invariant a covers besides the pools; every other dropped resource is a gated one (d).
CORE_RESOURCES = ("vpc", "cks-cluster", "network", "firewall", "civo-cluster")
CW_IMMUTABLE = [
    ("vpc|cks-cluster", ("spec", "forProvider", "zone")),
    ("vpc", ("spec", "forProvider", "vpcPrefixes")),
    ("nodepool-.*|system-nodepool", ("spec", "forProvider", "manifest", "spec", "instanceType")),
    ("nodepool-.*|system-nodepool", ("spec", "forProvider", "manifest", "metadata", "name")),
    ("rwx-storageclass", ("spec", "forProvider", "manifest")),
]
CIVO_IMMUTABLE = [
    ("civo-cluster|network|firewall", ("spec", "forProvider", "region")),
    ("civo-cluster", ("spec", "forProvider", "cni")),
    ("civo-cluster", ("spec", "forProvider", "applications")),
    ("civo-cluster", ("spec", "forProvider", "pools")),
    ("nodepool-.*", ("spec", "forProvider", "size")),
    ("nodepool-.*", ("spec", "forProvider", "region")),
    ("nodepool-.*", ("spec", "forProvider", "label")),
]

WALK_IDS = [(kind, seed) for kind in (CW, CIVO) for seed in range(WALKS)]


# Characters of --debug log output per walk, to show the leak check below read real logs.
DEBUG_LOG_SIZES: dict[tuple[str, int], int] = {}
# How often each walk reached each stage (Walk.seen), for test_walks_reach_every_stage.
STAGE_COUNTS: dict[tuple[str, int], Counter[str]] = {}


@functools.cache
def walked(kind: str, seed: int) -> tuple[Violation, ...]:
    """Run one walk with the function logging at debug level, as `function --debug` does, and
    check the captured log for the walk's tokens as well."""
    buffer = io.StringIO()
    structlog.reset_defaults()  # an earlier INFO configuration leaves a level filter behind
    fnlogging.configure(fnlogging.Level.DEBUG)
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(file=buffer))
    walk = Walk(kind, seed)
    STAGE_COUNTS[(kind, seed)] = walk.seen
    try:
        for step in range(STEPS):
            walk.run_step(step)
    finally:
        structlog.reset_defaults()
        fnlogging.configure(fnlogging.Level.DISABLED)
    logs = buffer.getvalue()
    DEBUG_LOG_SIZES[(kind, seed)] = len(logs)
    leaks = [
        Violation("f", f"{kind}-{seed}", STEPS, "--debug log", f"token {token} in the log")
        for token in tokens_in(logs, walk.tokens)
    ]
    return (*walk.violations, *leaks)


def test_walks_logged_at_debug_without_the_token() -> None:
    leaks = [v for v in all_violations() if v.category == "f"]
    assert all(size > 0 for size in DEBUG_LOG_SIZES.values()), "every walk logged at debug"
    assert not leaks


def all_violations() -> list[Violation]:
    return [v for kind, seed in WALK_IDS for v in walked(kind, seed)]


@pytest.mark.parametrize(("kind", "seed"), WALK_IDS, ids=[f"{k}-{s}" for k, s in WALK_IDS])
def test_walk(kind: str, seed: int) -> None:
    found = [v for v in walked(kind, seed) if v.category != "e"]
    assert not found, "\n".join(map(str, found[:10]))


@pytest.mark.skipif(CRDS is None, reason="../shared/crds not found: composed objects not validated")
def test_walks_compose_only_objects_the_crds_accept() -> None:
    found = [v for v in all_violations() if v.category == "e"]
    assert not found, "\n".join(map(str, found[:10]))


# --- coverage: the walks reach every stage they are meant to test ---------------------------


def test_walks_reach_every_stage() -> None:
    all_violations()  # every walk has run and counted its stages
    counts = sum(STAGE_COUNTS.values(), Counter[str]())
    assert counts["reconciles"] >= len(WALK_IDS) * 40
    for stage, minimum in {
        "fatal": 120,
        "kubeconfig": 400,
        "kubeconfig-refreshed": 15,
        "last-known-kubeconfig": 200,
        "rwx-storageclass": 300,
        "live-autoscaled-cks-pool": 250,
        "civo-nodepools": 500,
        "autoscaler-release": 400,
        "autoscaler-groups": 350,
        "pool-removed": 12,
        "immutable-warning": 500,
    }.items():
        assert counts.get(stage, 0) >= minimum, (stage, counts)


# --- the walks' findings, minimal: regression tests for the fixes in function/ ---------------


def cw_world() -> World:
    """A CoreWeaveCluster whose cluster is up and whose kubeconfig and pools are composed."""
    world = World(coreweave_xr())
    world.cluster_objects = Walk(CW, 0).cluster_objects
    world.reconcile()
    world.ready("cks-cluster", atProvider={"apiServerEndpoint": ENDPOINT})
    world.reconcile()
    assert "nodepool-l40s" in world.observed
    return world


@pytest.mark.parametrize(("signal", "settings"), [("Synced", False), ("Ready", True)])
def test_cks_pool_made_autoscaled_while_its_manifest_is_unreported(
    signal: str, settings: bool
) -> None:
    """Found by the walks: a fixed pool that exists, made autoscaled while provider-kubernetes
    reports no status.atProvider.manifest, got targetNodes again on every reconcile. Now the
    Object that carries targetNodes cannot update the pool at all, and the settings Object
    joins once the pool is seen (Ready) and never carries it."""
    world = cw_world()
    manifest = world.observed["nodepool-l40s"]["spec"]["forProvider"]["manifest"]
    world.ready("nodepool-l40s", atProvider={"manifest": copy.deepcopy(manifest)})
    world.reconcile()  # the fixed pool exists in the cluster
    world.observed["nodepool-l40s"]["status"] = {
        "conditions": [{"type": signal, "status": "True", "reason": "Walk"}]
    }
    world.xr["spec"]["nodePools"][1]["maxNodeCount"] = 4
    composed = desired(world.reconcile())
    assert composed["nodepool-l40s"]["spec"]["managementPolicies"] == ["Observe", "Create"]
    assert ("autoscaled-nodepool-l40s" in composed) is settings
    if settings:
        sizing = composed["autoscaled-nodepool-l40s"]["spec"]["forProvider"]["manifest"]["spec"]
        assert "targetNodes" not in sizing, sizing


def test_civo_applications_are_kept_on_a_live_cluster_created_without_them() -> None:
    """Found by the walks: a cluster created with step input civo.applications '' (no
    applications field) got the input's applications added once the input changed."""
    world = World(civo_xr(), step_input={"civo": {"applications": ""}})
    world.reconcile()
    world.ready("civo-cluster", atProvider={"id": "5f0b-cluster"})
    world.reconcile()
    world.step_input = {"civo": {"applications": "-traefik2-nodeport"}}
    rsp = world.reconcile()
    assert "applications" not in desired(rsp)["civo-cluster"]["spec"]["forProvider"]


def civo_converged() -> Walk:
    world = Walk(CIVO, 0)
    world.xr = civo_xr()
    world.step_input = None
    world.reconcile()
    world.ready("civo-cluster", atProvider={"id": "5f0b-cluster"})
    world.connection_secret = True
    world.sync_credentials()
    world.reconcile()
    annotations = world.observed["nodepool-l40s"]["metadata"]["annotations"]
    annotations["crossplane.io/external-name"] = "p-l40s"
    world.ready("nodepool-l40s", atProvider={"id": "p-l40s"})
    groups = autoscaling_groups(desired(world.reconcile()))
    assert groups == [{"name": "p-l40s", "minSize": 1, "maxSize": 4}]
    return world


def test_civo_autoscaler_keeps_a_known_group_while_the_pool_id_is_unreported() -> None:
    """Found by the walks: while an autoscaled NodePool's status.atProvider.id was unreported,
    its group left the Release; with no group left the chart renders no Deployment."""
    world = civo_converged()
    world.observed["nodepool-l40s"]["status"] = {}
    groups = autoscaling_groups(desired(world.reconcile()))
    assert groups == [{"name": "p-l40s", "minSize": 1, "maxSize": 4}]


def test_civo_status_secrets_stay_published_while_the_cluster_status_flaps() -> None:
    """Found by the walks: status.secrets was withdrawn whenever the cluster reported neither
    Ready nor status.atProvider.id. (Walk sends the published XR status back, as Crossplane.)"""
    world = civo_converged()
    published = xr_status(world.responses[-1])["secrets"]
    world.observed["civo-cluster"]["status"] = {}
    rsp = world.reconcile()
    assert xr_status(rsp).get("secrets") == published
