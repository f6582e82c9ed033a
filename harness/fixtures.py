"""Fixtures shared by the tests: realistic XRs, requests, and the observed state Crossplane
would report after applying a response."""

from __future__ import annotations

import asyncio
import base64
import copy
import itertools
import json
import os
import socket
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml
from crossplane.function import logging, resource
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from function.runner import FunctionRunner
from harness.example_sets import example_set
from harness.validator import as_sent

logging.configure(logging.Level.DISABLED)

# The kernel gives outgoing connections their local port from this range; servers' ports are
# picked below it, where only a bind takes a port.
EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
# Linux's default low bound, where the range cannot be read.
LINUX_EPHEMERAL_LOW = 32768
# Above the well-known ports and the registered ones most services run on.
FIRST_PICKED_PORT = 10_000
# More than a worker's planes and unit servers hand out before its share comes round again.
MIN_PORTS_PER_WORKER = 500

NAMESPACE = "ml-team"
# Obviously fake; tests assert it appears nowhere but inside the kubeconfig Secret.
ORG_TOKEN = "CW-SECRET-fake-token-for-tests-0123456789"
ENDPOINT = "ml-team-prod-a1b2c3.k8s.us-east-04a.coreweave.com"


def coreweave_pool(
    name: str, instance_type: str, nodes: int, gpu: str | None = None, **bounds: int
) -> dict[str, Any]:
    """A CoreWeaveCluster spec.nodePools entry: a GPU pool when gpu names its accelerator, else
    a CPU pool; bounds (minNodeCount, maxNodeCount) make it autoscaled."""
    return _pool(name, "GPU" if gpu else "CPU", {"instanceType": instance_type}, nodes, gpu, bounds)


def civo_pool(
    name: str, size: str, nodes: int, gpu: str | None = None, **bounds: int
) -> dict[str, Any]:
    """A CivoCluster spec.nodePools entry: a GPU pool when gpu names its accelerator, else a
    System pool; bounds (minNodeCount, maxNodeCount) make it autoscaled."""
    return _pool(name, "GPU" if gpu else "System", {"size": size}, nodes, gpu, bounds)


def _pool(
    name: str,
    role: str,
    machine: dict[str, str],
    nodes: int,
    gpu: str | None,
    bounds: dict[str, int],
) -> dict[str, Any]:
    accelerator = {"gpu": {"acceleratorType": gpu}} if gpu else {}
    return {"name": name, "role": role, **machine, "nodeCount": nodes, **bounds, **accelerator}


def _example_xr(example: str, uid: str) -> dict[str, Any]:
    """The committed example XR (examples/<set>/xr.yaml), with the UID the API server gave it."""
    xr: dict[str, Any] = yaml.safe_load(example_set(example).xr.read_text())
    xr["metadata"]["uid"] = uid
    return xr


# The XRs the unit tests compose are the ones users are shown: inference-east (an autoscaled H100
# pool, a fixed L40S pool and a CPU pool) and inference-lon (a System pool, an autoscaled L40S
# pool and a fixed A100 pool).
COREWEAVE_XR = _example_xr("coreweave", "7d1e5c2a-0000")
CIVO_XR = _example_xr("civo", "4b2f0d9e-0000")


def secret_provider_config(
    api_version: str, kind: str, name: str, secret_ref: dict[str, str]
) -> dict[str, Any]:
    """A (Cluster)ProviderConfig that takes its credentials from the Secret key secret_ref names."""
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": name},
        "spec": {"credentials": {"source": "Secret", "secretRef": secret_ref}},
    }


CLUSTER_PROVIDER_CONFIG = secret_provider_config(
    "coreweave.m.crossplane.io/v1beta1",
    "ClusterProviderConfig",
    "coreweave",
    {"name": "coreweave-creds", "namespace": "crossplane-system", "key": "credentials"},
)


def credentials_secret(
    token: str = ORG_TOKEN, *, namespace: str = "crossplane-system"
) -> dict[str, Any]:
    payload = json.dumps({"token": token}).encode()
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "coreweave-creds", "namespace": namespace},
        "data": {"credentials": base64.b64encode(payload).decode()},
    }


# What provider-upjet-civo writes to a Civo cluster's connection Secret (certificates elided).
CIVO_KUBECONFIG = """apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: LS0tLS1CRUdJTi...
    server: https://74.220.17.2:6443
  name: inference-lon-34d99
contexts:
- context:
    cluster: inference-lon-34d99
    user: inference-lon-34d99
  name: inference-lon-34d99
current-context: inference-lon-34d99
kind: Config
users:
- name: inference-lon-34d99
  user:
    client-certificate-data: LS0tLS1CRUdJTi...
    client-key-data: LS0tLS1CRUdJTi...
"""
CIVO_SECRET_NAME = "inference-lon-civo-kubeconfig-e024f"


def civo_connection_secret(
    *keys: str, name: str = CIVO_SECRET_NAME, namespace: str = NAMESPACE
) -> dict[str, Any]:
    """The cluster's connection Secret with the kubeconfig under each of keys."""
    encoded = base64.b64encode(CIVO_KUBECONFIG.encode()).decode()
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "type": "connection.crossplane.io/v1alpha1",
        "data": dict.fromkeys(keys or ("kubeconfig",), encoded),
    }


def civo_required(*keys: str) -> dict[str, list[dict[str, Any]]]:
    """required_resources carrying the connection Secret, as Crossplane resolves it."""
    return {"civo-connection-secret": [civo_connection_secret(*keys)]}


def coreweave_xr(**spec: Any) -> dict[str, Any]:
    return _with_spec(COREWEAVE_XR, spec)


def civo_xr(**spec: Any) -> dict[str, Any]:
    return _with_spec(CIVO_XR, spec)


def _with_spec(xr: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    xr = copy.deepcopy(xr)
    xr["spec"].update(spec)
    return xr


def request(
    xr: dict[str, Any],
    observed: dict[str, dict[str, Any]] | None = None,
    required: dict[str, list[dict[str, Any]]] | None = None,
    step_input: dict[str, Any] | None = None,
) -> fnv1.RunFunctionRequest:
    req = fnv1.RunFunctionRequest(meta=fnv1.RequestMeta(tag="test"))
    req.observed.composite.resource.update(xr)
    for key, body in (observed or {}).items():
        req.observed.resources[key].resource.update(body)
    for name, items in (required or {}).items():
        req.required_resources[name].SetInParent()
        for item in items:
            req.required_resources[name].items.add().resource.update(item)
    if step_input is not None:
        req.input.update(step_input)
    return req


# Kinds Kubernetes serves itself: there is no CRD in ../shared/crds to validate them against.
CORE_KINDS = {("v1", "Secret")}


def token_forms(token: str) -> list[str]:
    """The token as text, JSON-escaped, and in every base64 alignment it could take inside
    larger data: what a leak check must look for."""
    forms = [token, json.dumps(token)[1:-1]]
    for pad in range(3):
        encoded = base64.b64encode(b"x" * pad + token.encode()).decode()
        forms.append(encoded[4 if pad else 0 : -4])
    return forms


def pickable_ports(below: int, workers: int, worker: int) -> range:
    """A worker's share of the ports below the kernel's ephemeral range (which starts at
    `below`): one slice per xdist worker, so workers on one loopback never pick the same."""
    share = (below - FIRST_PICKED_PORT) // workers
    if share < MIN_PORTS_PER_WORKER:
        raise RuntimeError(
            f"{EPHEMERAL_RANGE} starts at {below}: too few ports below it for "
            f"{workers} workers (each needs {MIN_PORTS_PER_WORKER} from {FIRST_PICKED_PORT})"
        )
    first = FIRST_PICKED_PORT + worker * share
    return range(first, first + share)


def ephemeral_low() -> int:
    """Where the kernel's range for outgoing connections' local ports starts."""
    try:
        return int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return LINUX_EPHEMERAL_LOW


_PICKABLE = pickable_ports(
    ephemeral_low(),
    int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")),
    int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")),
)
# Where each process starts in its share varies with its pid, so a session run again soon
# after does not meet the last one's ports still in TIME_WAIT first.
_NEXT_PORT = itertools.islice(itertools.cycle(_PICKABLE), os.getpid() % len(_PICKABLE), None)


def free_port() -> int:
    """A loopback port nothing listens on right now, for a server the test starts.

    Never one the kernel could give an outgoing connection meanwhile (bind(0) does exactly
    that: a plane's own connections once took the function's health port between the pick
    and its bind), and never one this process has handed out lately."""
    for port in itertools.islice(_NEXT_PORT, len(_PICKABLE)):
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise RuntimeError(f"every port in {_PICKABLE} is taken")


def listening(address: str, port: int) -> bool:
    """Whether something accepts TCP connections there now."""
    try:
        with socket.create_connection((address, port), 0.5):
            return True
    except OSError:
        return False


def until_listening(
    process: subprocess.Popen[bytes],
    port: int,
    *,
    seconds: float,
    written: Callable[[], str] = lambda: "",
) -> None:
    """Returns once the started process listens on the loopback port; raises RuntimeError if it
    exits first (with `written()`, what it wrote) or the time runs out."""
    deadline = time.monotonic() + seconds
    while not listening("127.0.0.1", port):
        if process.poll() is not None:
            raise RuntimeError(
                f"{process.args!r} exited with {process.returncode} during startup:\n{written()}"
            )
        if time.monotonic() > deadline:
            raise RuntimeError(f"{process.args!r} did not listen on {port} within {seconds}s")
        time.sleep(0.05)


# The servicer the tests call, built as under --debug (the log line included: every test then
# proves it never fails, whatever the request; logging itself is off unless a test turns it on).
# One for the test process, as one serves a function's process: its memo answers repeats.
SERVICER = FunctionRunner(log_calls=True)


def run(
    req: fnv1.RunFunctionRequest, servicer: FunctionRunner = SERVICER
) -> fnv1.RunFunctionResponse:
    return asyncio.run(servicer.RunFunction(req, None))


def desired(rsp: fnv1.RunFunctionResponse) -> dict[str, dict[str, Any]]:
    """Desired composed resources by key, numbers as ints as the API server would store them;
    in key order, because a protobuf map's order changes from one process to the next (a walk
    that visits them in that order would not be reproducible)."""
    return {
        k: as_sent(resource.struct_to_dict(r.resource))
        for k, r in sorted(rsp.desired.resources.items())
    }


# Crossplane's FetchingFunctionRunner (internal/xfn/required_resources.go, v2.1.0 to v2.4.0)
# calls a function at most this many times per reconcile.
MAX_CALLS_PER_RECONCILE = 6

Required = dict[str, list[dict[str, Any]]]


def requirements_loop(
    call: Callable[[Required | None], fnv1.RunFunctionResponse],
    resolve: Callable[[fnv1.ResourceSelector], list[dict[str, Any]]],
    seed: Mapping[str, fnv1.ResourceSelector] | None = None,
) -> list[fnv1.RunFunctionResponse]:
    """Every call of one reconcile, as Crossplane makes them: then, while a response's
    requirements are not proto.Equal to the previous call's (an unset message equals only an
    unset one) and no result is FATAL, fetch them and call again.

    Without `seed` the first call carries no required resources (Crossplane before v2.4). With
    it (v2.4: the selectors the step required last reconcile) the first call carries what they
    resolve to now, and is final when the response's requirements resolve to the same."""
    sent = None if seed is None else {name: resolve(sel) for name, sel in seed.items()}
    passes = [call(sent)]
    previous: fnv1.Requirements | None = None
    while len(passes) < MAX_CALLS_PER_RECONCILE:
        rsp = passes[-1]
        if any(r.severity == fnv1.SEVERITY_FATAL for r in rsp.results):
            break
        current = rsp.requirements if rsp.HasField("requirements") else None
        if current == previous:
            break
        wanted = current.resources.items() if current is not None else []
        resolved = {name: resolve(selector) for name, selector in wanted}
        if len(passes) == 1 and sent is not None and resolved == sent:
            break
        previous = current
        passes.append(call(resolved))
    return passes


# A composed resource's status once its provider reports it Ready.
READY_STATUS = {"conditions": [{"type": "Ready", "status": "True", "reason": "Available"}]}
CONDITION_STATUS = {fnv1.STATUS_CONDITION_TRUE: "True", fnv1.STATUS_CONDITION_FALSE: "False"}

# When every condition the World reports last changed: fixed, so runs are reproducible.
TRANSITION_TIME = "2026-11-30T00:00:00Z"


def condition(type_: str, status: str, reason: str, at: str = TRANSITION_TIME) -> dict[str, Any]:
    return {"type": type_, "status": status, "reason": reason, "lastTransitionTime": at}


SYNCED = condition("Synced", "True", "ReconcileSuccess")


class World:
    """A small stand-in for Crossplane and the providers across reconciles.

    reconcile() runs the requirements loop as Crossplane does (at most 5 extra passes), then
    applies the final desired state: composed resources keep the status the providers last
    reported, and whatever the function stopped returning is deleted.
    """

    def __init__(
        self,
        xr: dict[str, Any],
        *,
        step_input: dict[str, Any] | None = None,
        seeded: bool = False,
        servicer: FunctionRunner = SERVICER,
    ) -> None:
        self.xr = xr
        self.step_input = step_input
        # The function's process: a world of its own memo, or the tests' shared one.
        self.servicer = servicer
        # Crossplane v2.4's loop: each reconcile's first call carries what the last one required.
        self.seeded = seeded
        self.last_requirements: dict[str, fnv1.ResourceSelector] = {}
        self.observed: dict[str, dict[str, Any]] = {}
        self.cluster_objects: list[dict[str, Any]] = []
        self.responses: list[fnv1.RunFunctionResponse] = []
        # Function calls per reconcile, in order, and the last reconcile's answer to each.
        self.calls: list[int] = []
        self.passes: list[fnv1.RunFunctionResponse] = []

    def reconcile(self) -> fnv1.RunFunctionResponse:
        self.passes = requirements_loop(
            lambda required: run(
                request(self.xr, self.observed, required, self.step_input), self.servicer
            ),
            self._resolve,
            self.last_requirements if self.seeded else None,
        )
        self.calls.append(len(self.passes))
        rsp = self.passes[-1]
        self.last_requirements = dict(rsp.requirements.resources)
        self.responses.append(rsp)
        if not any(r.severity == fnv1.SEVERITY_FATAL for r in rsp.results):
            self._apply(rsp)
            self._write_xr_status(rsp)
        return rsp

    def _write_xr_status(self, rsp: fnv1.RunFunctionResponse) -> None:
        """Crossplane writes the desired XR status, the function's conditions and its own Ready
        verdict to the XR and sends them as the observed composite next time."""
        ready = ("True", "Available") if xr_ready(rsp) else ("False", "Creating")
        self.xr["status"] = {
            **xr_status(rsp),
            "conditions": [
                *(
                    condition(c.type, CONDITION_STATUS.get(c.status, "Unknown"), c.reason)
                    for c in rsp.conditions
                ),
                condition("Ready", *ready),
            ],
        }

    def _resolve(self, selector: fnv1.ResourceSelector) -> list[dict[str, Any]]:
        return [
            obj
            for obj in self.cluster_objects
            if obj["apiVersion"] == selector.api_version
            and obj["kind"] == selector.kind
            and obj["metadata"]["name"] == selector.match_name
            and (not selector.namespace or obj["metadata"].get("namespace") == selector.namespace)
        ]

    def _apply(self, rsp: fnv1.RunFunctionResponse) -> None:
        applied = {}
        for key, body in desired(rsp).items():
            previous = self.observed.get(key, {})
            # Annotations providers set (the external name) survive the function's apply.
            annotations = previous.get("metadata", {}).get("annotations", {})
            metadata = body.get("metadata", {})
            body["metadata"] = {
                **metadata,
                "namespace": self.xr["metadata"].get("namespace", NAMESPACE),
                "annotations": {
                    **annotations,
                    **metadata.get("annotations", {}),
                    "crossplane.io/composition-resource-name": key,
                },
            }
            if "status" in previous:
                body["status"] = previous["status"]
            applied[key] = body
        self.observed = applied

    def report(self, key: str, **status: Any) -> None:
        """What a provider writes into a composed resource's status."""
        self.observed[key].setdefault("status", {}).update(copy.deepcopy(status))

    def ready(self, key: str, ready: bool = True, **status: Any) -> None:
        """Ready (or not) and Synced, as crossplane-runtime reports a reconcile that worked."""
        state = ("True", "Available") if ready else ("False", "Unavailable")
        self.report(key, conditions=[condition("Ready", *state), SYNCED], **status)

    def unreachable(self, key: str, message: str) -> None:
        """What a provider reports of a resource whose remote API does not answer: Synced=False
        with the error, Ready as it last was."""
        kept = [
            c
            for c in self.observed[key].get("status", {}).get("conditions", [])
            if c["type"] != "Synced"
        ]
        synced = {**SYNCED, "status": "False", "reason": "ReconcileError", "message": message}
        self.report(key, conditions=[*kept, synced])


def results(rsp: fnv1.RunFunctionResponse) -> list[tuple[str, str]]:
    names = {
        fnv1.SEVERITY_NORMAL: "Normal",
        fnv1.SEVERITY_WARNING: "Warning",
        fnv1.SEVERITY_FATAL: "Fatal",
    }
    return [(names[r.severity], r.message) for r in rsp.results]


def fatal_only(rsp: fnv1.RunFunctionResponse) -> str:
    """The message of the response's one result, which must be FATAL with nothing desired."""
    assert len(rsp.desired.resources) == 0, "a FATAL response carries no desired state"
    assert [severity for severity, _ in results(rsp)] == ["Fatal"]
    return results(rsp)[0][1]


def conditions(rsp: fnv1.RunFunctionResponse) -> dict[str, tuple[str, str, str]]:
    return {
        c.type: (CONDITION_STATUS.get(c.status, "Unknown"), c.reason, c.message)
        for c in rsp.conditions
    }


def readiness(rsp: fnv1.RunFunctionResponse) -> dict[str, bool]:
    return {k: r.ready == fnv1.READY_TRUE for k, r in rsp.desired.resources.items()}


def xr_ready(rsp: fnv1.RunFunctionResponse) -> bool:
    """The XR's Ready as Crossplane derives it from a response: the composite's own readiness
    when the function sets it, else whether every desired resource is ready (v2.4.0
    composite/reconciler.go)."""
    if rsp.desired.composite.ready != fnv1.READY_UNSPECIFIED:
        return rsp.desired.composite.ready == fnv1.READY_TRUE
    return all(readiness(rsp).values())


def xr_status(rsp: fnv1.RunFunctionResponse) -> dict[str, Any]:
    composite = as_sent(resource.struct_to_dict(rsp.desired.composite.resource))
    status: dict[str, Any] = composite.get("status", {})
    return status
