"""Request scenarios: one converged request per XR kind, and fleets of it.

A scenario is the converged 8-pool XR of one kind (`xrs.py`) as Crossplane sends it, with the
metadata noise of `noise.py`. Its requests come from a Template, the serialized request with
some byte strings overwritten in place at fixed width, so that

- every call carries a distinct request (the XR's and one composed resource's resourceVersion
  and meta.tag change per call), as Crossplane's do while anything changes;
- member i of a fleet is a distinct XR: its own name, namespace and uid, and every name derived
  from them (composed resource names, the cloud's cluster name, Secret names) as the function
  derives them. Member names keep the base XR's lengths, so every protobuf length prefix in the
  serialized request stays valid and a member costs one bytes copy, not a re-encode.

Adding a scenario: build the observed state in `xrs.py`, then its request here (`_build`,
`build_scenarios`).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import itertools
import json
import re
import threading
from collections.abc import Callable, Iterator
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.resource import struct_to_dict

from function import runner
from function.civo.compose import CLOUD_NAME_LIMIT as CIVO_NAME_LIMIT
from function.coreweave.compose import CLOUD_NAME_LIMIT as COREWEAVE_NAME_LIMIT
from function.shared.naming import cloud_name, composed_name
from hack.bench import noise
from hack.bench.xrs import (
    CIVO_DESIRED,
    CIVO_POOLS,
    COREWEAVE_DESIRED,
    COREWEAVE_POOLS,
    converged_civo,
    converged_coreweave,
)
from harness.fixtures import desired, request

# --- per-call variation: fixed-width sentinels patched into the serialized request ----------

XR_RV_SENTINEL = "900000000001"
OBSERVED_RV_SENTINEL = "900000000002"
TAG_SENTINEL = "bench-tag-" + "0" * 53 + "1"  # 64 characters, like Crossplane's sha256 tag
# Each sentinel, and its value in call n.
PER_CALL: tuple[tuple[str, Callable[[int], bytes]], ...] = (
    (XR_RV_SENTINEL, lambda n: f"{910000000000 + n:012d}".encode()),
    (OBSERVED_RV_SENTINEL, lambda n: f"{910000000000 + n:012d}".encode()),
    (TAG_SENTINEL, lambda n: f"bench-tag-{n:054d}".encode()),
)


_COUNTER = itertools.count(1)
_COUNTER_LOCK = threading.Lock()


def next_n() -> int:
    """A number no other call used: what makes each request distinct."""
    with _COUNTER_LOCK:
        return next(_COUNTER)


# --- fleet members -------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Identity:
    name: str
    namespace: str
    uid: str

    def member(self, index: int) -> Identity:
        """Fleet member `index`: distinct name, namespace and uid of the same lengths."""
        return Identity(
            self.name[:-5] + f"{index:05d}",
            self.namespace[:-4] + f"{index:04d}",
            self.uid[:-4] + f"{index:04x}",
        )


def _strings(data: Any) -> Iterator[str]:
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        for key, value in data.items():
            yield key
            yield from _strings(value)
    elif isinstance(data, list):
        for item in data:
            yield from _strings(item)


def _composed_name(who: Identity, part: str) -> str:
    return composed_name(who.name, part)


def _cloud_name(who: Identity, limit: int) -> str:
    return cloud_name(who.namespace, who.name, limit)


class Template:
    """A serialized request and the spots rewritten per member and per call."""

    def __init__(
        self,
        blob: bytes,
        base: Identity,
        renames: dict[str, Callable[[Identity], str]],
        members: int,
    ) -> None:
        self.blob = blob
        taken: list[tuple[int, int]] = []

        def occurrences(raw: bytes) -> list[int]:
            found, start = [], 0
            while (at := blob.find(raw, start)) >= 0:
                start = at + 1
                if not any(a < at + len(raw) and at < b for a, b in taken):
                    found.append(at)
                    taken.append((at, at + len(raw)))
            return found

        self.per_call: list[tuple[int, int, Callable[[int], bytes]]] = []
        for sentinel, make in PER_CALL:
            spots = occurrences(sentinel.encode())
            if len(spots) != 1:
                raise SystemExit(f"bench: sentinel {sentinel} occurs {len(spots)} times")
            self.per_call.append((spots[0], len(sentinel), make))
        identities = [base.member(i) for i in range(members)]
        # Longest first: a composed name is replaced whole before the XR name inside it.
        self.per_member: list[tuple[list[int], list[bytes]]] = []
        for old in sorted(renames, key=len, reverse=True):
            spots = occurrences(old.encode())
            if not spots:
                continue
            values = [renames[old](who).encode() for who in identities]
            if any(len(v) != len(old.encode()) for v in values):
                raise SystemExit(f"bench: a member's version of {old!r} changes its length")
            self.per_member.append((spots, values))

    def make(self, member: int, n: int) -> bytes:
        buf = bytearray(self.blob)
        for spots, values in self.per_member:
            value = values[member]
            for offset in spots:
                buf[offset : offset + len(value)] = value
        for offset, length, make in self.per_call:
            buf[offset : offset + length] = make(n)
        return bytes(buf)


# --- the scenarios -------------------------------------------------------------------------


@dataclasses.dataclass
class Scenario:
    kind: str
    pools: int
    expected: int  # desired resources of a converged reconcile
    base: Identity
    xr: dict[str, Any]
    observed: dict[str, dict[str, Any]]
    step_input: dict[str, Any] | None
    # What Crossplane can fetch for a requirement: the cluster's objects, dressed as the API
    # server returns them.
    cluster_objects: list[dict[str, Any]]
    # The final pass of the requirements loop: every requirement resolved.
    final_required: dict[str, list[dict[str, Any]]]
    members: int
    template: Template = dataclasses.field(init=False)
    renames: dict[str, Callable[[Identity], str]] = dataclasses.field(init=False)
    _variants: dict[str, Template] = dataclasses.field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        # Every string of the request that derives from the base XR's identity, and how a
        # member's version of it is derived: composed names, cloud names, then the name,
        # namespace and uid.
        base, strings = self.base, set(_strings([self.xr, self.observed, self.cluster_objects]))
        composed = re.compile(rf"{re.escape(base.name)}-(.+)-[0-9a-f]{{5}}")
        self.renames = {}
        for text in strings:
            if (match := composed.fullmatch(text)) and composed_name(base.name, match[1]) == text:
                self.renames[text] = functools.partial(_composed_name, part=match[1])
        for limit in (COREWEAVE_NAME_LIMIT, CIVO_NAME_LIMIT):
            if (old := cloud_name(base.namespace, base.name, limit)) in strings:
                self.renames[old] = functools.partial(_cloud_name, limit=limit)
        self.renames[base.name] = lambda who: who.name
        self.renames[base.namespace] = lambda who: who.namespace
        self.renames[base.uid] = lambda who: who.uid
        self.template = self.variant(self.final_required)

    def call(self, member: int, n: int) -> bytes:
        """The request of call n for member: distinct per call."""
        return self.template.make(member, n)

    def variant(self, required: dict[str, list[dict[str, Any]]] | None) -> Template:
        """The template of this request on a pass of the requirements loop that carries
        `required` (None: the first pass, nothing fetched yet)."""
        key = json.dumps(required, sort_keys=True)
        template = self._variants.get(key)
        if template is None:
            req = request(self.xr, self.observed, required, self.step_input)
            req.meta.tag = TAG_SENTINEL
            req.meta.capabilities.extend(
                [
                    fnv1.CAPABILITY_CAPABILITIES,
                    fnv1.CAPABILITY_REQUIRED_RESOURCES,
                    fnv1.CAPABILITY_CREDENTIALS,
                    fnv1.CAPABILITY_CONDITIONS,
                    fnv1.CAPABILITY_REQUIRED_SCHEMAS,
                ]
            )
            blob = req.SerializeToString()
            template = Template(blob, self.base, self.renames, self.members)
            self._variants[key] = template
        return template

    def resolve(
        self, selector: fnv1.ResourceSelector, base_names: dict[str, str]
    ) -> list[dict[str, Any]]:
        """What Crossplane fetches for a requirement of a member whose names, mapped back to the
        base XR's by base_names, are member 0's (other members' objects are renamed with the
        request)."""
        name, namespace = (base_names.get(s, s) for s in (selector.match_name, selector.namespace))
        return [
            o
            for o in self.cluster_objects
            if o["apiVersion"] == selector.api_version
            and o["kind"] == selector.kind
            and o["metadata"]["name"] == name
            and (not namespace or o["metadata"].get("namespace") == namespace)
        ]


# The bench's in-process servicer: one memo across its calls, as in a function's process.
IN_PROCESS = runner.FunctionRunner()


def runner_response(req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
    """What the servicer answers (its memo included), without gRPC."""
    wire = runner.answer(req, IN_PROCESS.memo).wire
    rsp: fnv1.RunFunctionResponse = fnv1.RunFunctionResponse.FromString(wire)
    return rsp


def check_response(scenario: Scenario, rsp: fnv1.RunFunctionResponse, where: str) -> None:
    fatal = [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
    not_ready = [k for k, r in rsp.desired.resources.items() if r.ready != fnv1.READY_TRUE]
    if fatal or not_ready or len(rsp.desired.resources) != scenario.expected:
        raise SystemExit(
            f"bench: {scenario.kind} ({where}): FATAL {fatal}, not ready {not_ready}, "
            f"{len(rsp.desired.resources)} desired resources, expected {scenario.expected}"
        )


def _build(kind: str, members: int) -> Scenario:
    coreweave = kind == "CoreWeaveCluster"
    world, final = converged_coreweave() if coreweave else converged_civo()
    # Crossplane's final pass of the requirements loop: every requirement resolved.
    required = {
        name: world._resolve(selector) for name, selector in final.requirements.resources.items()
    }
    clean = runner_response(request(world.xr, world.observed, required or None, world.step_input))
    observed = copy.deepcopy(world.observed)
    xr = noise.dress_xr(world, final, f"{kind.lower()}s.infrastructure.modelplane.ai")
    for key, body in observed.items():
        noise.dress(key, body, xr)
    cluster_objects = [noise.dress_required(o) for o in world.cluster_objects]
    dressed = {id(o): d for o, d in zip(world.cluster_objects, cluster_objects, strict=True)}
    required = {name: [dressed[id(o)] for o in objs] for name, objs in required.items()}
    xr["metadata"]["resourceVersion"] = XR_RV_SENTINEL
    observed["cks-cluster" if coreweave else "civo-cluster"]["metadata"]["resourceVersion"] = (
        OBSERVED_RV_SENTINEL
    )
    meta = world.xr["metadata"]
    scenario = Scenario(
        kind=kind,
        pools=len(COREWEAVE_POOLS if coreweave else CIVO_POOLS),
        expected=COREWEAVE_DESIRED if coreweave else CIVO_DESIRED,
        base=Identity(meta["name"], meta["namespace"], meta["uid"]),
        xr=xr,
        observed=observed,
        step_input=world.step_input,
        cluster_objects=cluster_objects,
        final_required=required,
        members=members,
    )
    # Untimed checks: the dressed request composes exactly what the clean one does, and fleet
    # members are XRs of their own, composed under exactly the names their observed resources
    # carry, with no result.
    rsp = runner_response(request(xr, observed, required or None, world.step_input))
    check_response(scenario, rsp, "base, in-process")
    if desired(rsp) != desired(clean):
        raise SystemExit(f"bench: {kind}: the request composes something else")
    for member in sorted({0, min(1, members - 1), members - 1}):
        req = fnv1.RunFunctionRequest.FromString(scenario.template.make(member, next_n()))
        rsp = runner_response(req)
        where = f"member {member}, in-process"
        check_response(scenario, rsp, where)
        if rsp.results:
            raise SystemExit(f"bench: {kind} ({where}): results {list(rsp.results)}")
        composed = desired(rsp)
        for key, observed_resource in req.observed.resources.items():
            name = struct_to_dict(observed_resource.resource)["metadata"]["name"]
            if composed[key]["metadata"]["name"] != name:
                raise SystemExit(f"bench: {kind} ({where}): {key} is not named {name}")
    return scenario


def build_scenarios(members: int) -> list[Scenario]:
    """Every kind, each with `members` fleet members."""
    return [_build(kind, members) for kind in ("CoreWeaveCluster", "CivoCluster")]
