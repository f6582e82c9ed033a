"""Property tests of the servicer: whatever Crossplane sends, the answer is well-formed.

Hypothesis generates XR specs for both kinds (valid ones built from the XRD's schema, invalid ones
with one known-bad field, and arbitrary nested garbage), observed composed resources (missing,
partial, with garbage status and odd annotations), CoreWeave credentials as required resources
(missing, wrong shapes, bad base64, non-JSON) and malformed requests. Every answer is either one
FATAL naming a field path and composing nothing, or no FATAL and objects ../shared/crds accepts
(schema and CEL) under valid object names; never an exception or an "internal error"; refused
exactly when the XRD refuses the spec (the function checks the XRD's rules itself for
`crossplane render`); and the org token stays inside the kubeconfig Secret's data.

Runs are deterministic (`derandomize=True`, no example database). Bugs found here are pinned by
the regression tests at the end of the file, each with a minimal request.
"""

from __future__ import annotations

import base64
import copy
import functools
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from hypothesis import HealthCheck, assume, event, given, note, settings
from hypothesis import strategies as st

from harness.fixtures import (
    CLUSTER_PROVIDER_CONFIG,
    ENDPOINT,
    NAMESPACE,
    READY_STATUS,
    World,
    civo_xr,
    coreweave_xr,
    credentials_secret,
    desired,
    fatal_only,
    request,
    results,
    run,
)
from harness.invariants import (
    CIVO_SIZES,
    CW_INSTANCE_TYPES,
    DNS_SUBDOMAIN,
    fatal_messages,
    fatal_problems,
    leaked_tokens,
    object_problems,
    xrd_refuses,
)
from harness.validator import shared_crds_dir, spec_problems
from tests.coreweave_expected import SHARED_VAST_LIVE

CRDS = shared_crds_dir()
needs_crds = pytest.mark.skipif(
    CRDS is None, reason="../shared/crds not found: composed objects cannot be validated"
)

API_VERSION = "infrastructure.modelplane.ai/v1alpha1"
CW_POOL_NAME = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
CIVO_POOL_NAME = r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
VERSION = r"^[0-9]+\.[0-9]+$"
CIDR = r"([0-9]{1,3}\.){3}[0-9]{1,3}/[0-9]{1,2}"

# Distinctive fake org tokens: none may appear outside the kubeconfig Secret's data.
TOKENS = (
    "CW-SECRET-property-token-7f3a9c1e55d04b2a",
    'CW-SECRET-"quoted"\\ and: yaml {specials} ü-0c8e',
)

PROPERTIES = settings(
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=False,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
        HealthCheck.large_base_example,
    ],
)


# --- generic values -------------------------------------------------------------------------

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
GARBAGE = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
NOT_STRING = GARBAGE.filter(lambda v: not isinstance(v, str))
NOT_LIST = GARBAGE.filter(lambda v: not isinstance(v, list))
NOT_DICT = GARBAGE.filter(lambda v: not isinstance(v, dict))
# The same, never null (a null is a field left out, which is valid where the field is optional).
SOME_NOT_STRING = NOT_STRING.filter(lambda v: v is not None)
SOME_NOT_DICT = NOT_DICT.filter(lambda v: v is not None)
NOT_INTEGER = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer()),
    st.text(max_size=5),
    st.booleans(),
    st.lists(SCALARS, max_size=2),
    st.dictionaries(st.text(max_size=3), SCALARS, max_size=2),
)
# Strings that break any length bound, with non-ASCII, astral and control characters.
UNICODE = st.text(st.characters(codec="utf-8"), max_size=40)


def long_text(min_size: int) -> st.SearchStrategy[str]:
    return st.text(st.characters(codec="utf-8"), min_size=min_size, max_size=min_size + 200)


def free_text(samples: list[str], max_size: int) -> st.SearchStrategy[str]:
    """A realistic value most of the time, any string the XRD allows otherwise."""
    return st.one_of(
        st.sampled_from(samples),
        st.text(st.characters(codec="utf-8"), min_size=1, max_size=max_size),
    )


# --- valid specs, built from the XRDs ---------------------------------------------------------

ZONES = ["US-EAST-04A", "US-EAST-06A", "US-WEST-09B", "RNO2A", "LGA1"]
REGIONS = ["LON1", "FRA1", "NYC1", "PHX1", "MUM1"]
ACCELERATORS = ["H100", "H200", "L40S", "A100", "B200", "MI300X"]
# acceleratorType becomes a node label value; the XRD and the function refuse anything else.
ACCELERATOR_VALUES = st.one_of(
    st.sampled_from(ACCELERATORS),
    st.from_regex(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?", fullmatch=True),
)

CW_NAMES = st.one_of(
    st.sampled_from(["h100", "l40s", "cpu", "a100-80", "gpu-0", "x", "9"]),
    st.from_regex(r"[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?", fullmatch=True),
).filter(lambda n: n != "modelplane-system")
# Everything the XRD allows, upper case, '_' and '..' included: object names are made valid.
CIVO_XRD_NAMES = st.from_regex(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,38}[A-Za-z0-9])?", fullmatch=True)
CIVO_NAMES = st.one_of(
    st.sampled_from(["system", "l40s", "a100", "workers", "sys-2", "0", "GPU_Pool", "a..b"]),
    CIVO_XRD_NAMES,
)


def extra_fields(known: set[str]) -> st.SearchStrategy[dict[str, Any]]:
    """Fields a newer XRD might add: the API server would prune them, the function ignores them."""
    return st.dictionaries(
        st.text(min_size=1, max_size=10).filter(lambda k: k not in known), GARBAGE, max_size=2
    )


@st.composite
def sizing(draw: st.DrawFn, low: int) -> dict[str, Any]:
    """nodeCount/minNodeCount/maxNodeCount satisfying the XRD's bounds and CEL rules."""
    fields: dict[str, Any] = {}
    if draw(st.booleans()):
        maximum = draw(st.integers(max(low, 1), 1000))
        fields["maxNodeCount"] = maximum
        if draw(st.booleans()):
            fields["minNodeCount"] = draw(st.integers(low, maximum))
        if draw(st.booleans()):
            fields["nodeCount"] = draw(st.integers(low, maximum))
    else:
        if draw(st.booleans()):
            fields["nodeCount"] = draw(st.integers(low, 1000))
        # Optional fields without a default may be null: the API server prunes those nulls.
        for key in draw(st.sets(st.sampled_from(["minNodeCount", "maxNodeCount"]))):
            fields[key] = None
    return fields


@st.composite
def pool(draw: st.DrawFn, name: str, *, civo: bool, role: str | None = None) -> dict[str, Any]:
    roles = ["System", "GPU"] if civo else ["GPU", "CPU"]
    role = role if role is not None else draw(st.sampled_from(roles))
    result: dict[str, Any] = {"name": name, "role": role}
    type_field, types = ("size", CIVO_SIZES) if civo else ("instanceType", CW_INSTANCE_TYPES)
    result[type_field] = draw(free_text(types, 63))
    result.update(draw(sizing(1 if civo else 0)))
    if role == "GPU" or draw(st.integers(0, 3)) == 0:
        result["gpu"] = {"acceleratorType": draw(ACCELERATOR_VALUES)}
        result["gpu"].update(draw(extra_fields({"acceleratorType"})))
    elif draw(st.booleans()):
        result["gpu"] = None
    # Every field of the XRD's pools is known, those sizing left out too.
    known = {"name", "role", type_field, "gpu", "nodeCount", "minNodeCount", "maxNodeCount"}
    result.update(draw(extra_fields(known)))
    return result


@st.composite
def credentials(draw: st.DrawFn) -> dict[str, Any]:
    creds: dict[str, Any] = {}
    if draw(st.booleans()):
        creds["name"] = draw(free_text(["default", "coreweave", "civo", "team-a"], 253))
    if draw(st.booleans()):
        creds["type"] = draw(st.sampled_from(["ProviderConfig", "ClusterProviderConfig"]))
    return creds


@st.composite
def spec_strategy(
    draw: st.DrawFn, kind: str, names: st.SearchStrategy[str] | None = None
) -> dict[str, Any]:
    civo = kind == "CivoCluster"
    if names is None:
        names = CIVO_NAMES if civo else CW_NAMES
    pools = [
        draw(pool(n, civo=civo)) for n in draw(st.lists(names, min_size=1, max_size=8, unique=True))
    ]
    if civo:
        systems = [p for p in pools if p.get("role") == "System"]
        # GPU pools alone get the default System pool, whose name no pool may then take.
        gpu_only = not systems and all(p["name"] != "system" for p in pools)
        if not systems and not (gpu_only and draw(st.booleans())):
            index = draw(st.integers(0, len(pools) - 1))
            pools[index] = draw(pool(pools[index]["name"], civo=True, role="System"))
            systems = [pools[index]]
        # Neither the inline pool nor a pool named "workers" (the autoscaler's catch-all group)
        # can autoscale.
        for item in [*systems[:1], *(p for p in pools if p["name"] == "workers")]:
            item.pop("maxNodeCount", None)
            item.pop("minNodeCount", None)
    place, places = ("region", REGIONS) if civo else ("zone", ZONES)
    spec: dict[str, Any] = {place: draw(free_text(places, 32)), "nodePools": pools}
    versions = (
        free_text(["1.34.1-k3s1", "1.33.4-k3s1"], 32)
        if civo
        else st.sampled_from(["1.37", "1.36", "2.0"]) | st.from_regex(VERSION, fullmatch=True)
    )
    if draw(st.booleans()):
        spec["kubernetesVersion"] = draw(versions)
    elif civo and draw(st.booleans()):
        spec["kubernetesVersion"] = None
    if draw(st.booleans()):
        spec["credentials"] = draw(credentials())
    # spec.crossplane is no newer field: Crossplane adds it to every XR's schema.
    spec.update(draw(extra_fields(set(spec) | {"kubernetesVersion", "credentials", "crossplane"})))
    return spec


def example_xr(kind: str) -> dict[str, Any]:
    return coreweave_xr() if kind == "CoreWeaveCluster" else civo_xr()


def xr_of(kind: str, spec: Any) -> dict[str, Any]:
    return {**example_xr(kind), "spec": spec}


# --- invalid specs: a valid one with one field made wrong --------------------------------------


def _bad_text(max_length: int) -> st.SearchStrategy[Any]:
    return st.one_of(st.just(""), long_text(max_length + 1), SOME_NOT_STRING)


def _pool_mutations(draw: st.DrawFn, spec: dict[str, Any], kind: str) -> tuple[dict[str, Any], str]:
    civo = kind == "CivoCluster"
    pools = spec["nodePools"]
    index = draw(st.integers(0, len(pools) - 1))
    target = pools[index]
    path = f"spec.nodePools[{index}]"
    type_field = "size" if civo else "instanceType"
    low = 1 if civo else 0
    pattern = CIVO_POOL_NAME if civo else CW_POOL_NAME
    roles = {"System", "GPU"} if civo else {"GPU", "CPU"}

    def bad_count(minimum: int) -> st.SearchStrategy[Any]:
        return st.one_of(
            st.integers(min_value=-(2**53), max_value=minimum - 1),
            st.integers(min_value=1001, max_value=2**53),
            NOT_INTEGER,
        )

    # The mutations that give one field a wrong value (None: leave it out).
    wrong: dict[str, tuple[str, st.SearchStrategy[Any] | None]] = {
        "name": (
            "name",
            _bad_text(40) | UNICODE.filter(lambda s: not re.fullmatch(pattern, s) and s != ""),
        ),
        "name-missing": ("name", None),
        "role": ("role", UNICODE.filter(lambda s: s not in roles) | SOME_NOT_STRING),
        "role-missing": ("role", None),
        "gpu-not-object": ("gpu", SOME_NOT_DICT),
        "type-field": (type_field, _bad_text(63)),
        "type-missing": (type_field, None),
        "nodeCount": ("nodeCount", bad_count(low)),
        "minNodeCount": ("minNodeCount", bad_count(low)),
        "maxNodeCount": ("maxNodeCount", bad_count(1)),
    }
    cloud_only = ["inline-autoscales", "autoscaled-workers"] if civo else []
    if not civo:
        wrong["reserved-name"] = ("name", st.just("modelplane-system"))
    others = ["pool-not-object", "duplicate", "gpu-missing", "accelerator"]
    bounds = ["min-without-max", "min-above-max", "count-above-max"]
    choice = draw(st.sampled_from([*wrong, *others, *bounds, *cloud_only]))
    note(f"mutation: {choice} at {path}")
    if choice in wrong:
        field, values = wrong[choice]
        if values is None:
            target.pop(field)
        else:
            target[field] = draw(values)
        if choice == "minNodeCount":
            target["maxNodeCount"] = 1000
        return spec, f"{path}.{field}"
    if choice == "pool-not-object":
        pools[index] = draw(NOT_DICT)
        return spec, path
    if choice == "duplicate":
        assume(len(pools) > 1)
        other = draw(st.integers(0, len(pools) - 1).filter(lambda i: i != index))
        target["name"] = pools[other]["name"]
        return spec, f"spec.nodePools[{max(index, other)}].name"
    if choice == "gpu-missing":
        target["role"] = "GPU"
        target.pop("gpu", None)
        if draw(st.booleans()):
            target["gpu"] = None
        return spec, f"{path}.gpu"
    if choice == "accelerator":
        bad = draw(st.one_of(_bad_text(63), st.just(None)))
        target["gpu"] = {} if bad is None else {"acceleratorType": bad}
        return spec, f"{path}.gpu.acceleratorType"
    if choice == "min-without-max":
        target["minNodeCount"] = draw(st.integers(low, 1000))
        target.pop("maxNodeCount", None)
        return spec, f"{path}.maxNodeCount"
    if choice in ("min-above-max", "count-above-max"):
        above = "minNodeCount" if choice == "min-above-max" else "nodeCount"
        dropped = "nodeCount" if choice == "min-above-max" else "minNodeCount"
        maximum = draw(st.integers(1, 999))
        target["maxNodeCount"] = maximum
        target[above] = draw(st.integers(maximum + 1, 1000))
        target.pop(dropped, None)
        return spec, f"{path}.{above}"
    if choice == "autoscaled-workers":
        assume(all(p.get("name") != "workers" for p in pools))
        target.update(name="workers", maxNodeCount=1000)
        target.pop("minNodeCount", None)
        target.pop("nodeCount", None)
        return spec, f"{path}.name"
    # inline-autoscales
    first = next((i for i, p in enumerate(pools) if p.get("role") == "System"), index)
    pools[first]["role"] = "System"
    pools[first]["maxNodeCount"] = 1000
    return spec, f"spec.nodePools[{first}].maxNodeCount"


@st.composite
def invalid_spec(draw: st.DrawFn, kind: str) -> tuple[dict[str, Any], str]:
    """(spec, the field path the FATAL must name)."""
    civo = kind == "CivoCluster"
    spec = draw(spec_strategy(kind))
    place = "region" if civo else "zone"
    types = ("ProviderConfig", "ClusterProviderConfig")
    versions = st.one_of(
        UNICODE.filter(lambda s: not re.fullmatch(VERSION, s)),
        st.sampled_from(["v1.37", "1.37.1", "1", "1.37\n", " 1.37"]),
        SOME_NOT_STRING,
    )
    # The path each mutation breaks, and the values it sets there (None: leaves it out).
    wrong: dict[str, tuple[str, st.SearchStrategy[Any] | None]] = {
        "place": (place, _bad_text(32) | st.just(None)),
        "place-missing": (place, None),
        "version": ("kubernetesVersion", _bad_text(32) if civo else versions),
        "credentials": ("credentials", SOME_NOT_DICT),
        "credentials-type": (
            "credentials.type",
            UNICODE.filter(lambda s: s not in types) | SOME_NOT_STRING,
        ),
        "credentials-name": ("credentials.name", _bad_text(253)),
        "pools-empty": ("nodePools", st.just([])),
        "pools-not-list": ("nodePools", NOT_LIST.filter(lambda v: v is not None)),
        "pools-missing": ("nodePools", None),
    }
    choice = draw(st.sampled_from([*wrong, "too-many-pools", *["pool"] * 4]))
    note(f"mutation: {choice}")
    if choice in wrong:
        field, values = wrong[choice]
        if values is None:
            del spec[field]
        elif "." in field:  # the parent holds the wrong value alone
            parent, child = field.split(".")
            spec[parent] = {child: draw(values)}
        else:
            spec[field] = draw(values)
        return spec, f"spec.{field}"
    if choice == "too-many-pools":
        count = draw(st.sampled_from([9, 10, 64, 300]))
        template = spec["nodePools"][0]
        spec["nodePools"] = [{**copy.deepcopy(template), "name": f"p{i}"} for i in range(count)]
        return spec, "spec.nodePools"
    return _pool_mutations(draw, spec, kind)


# --- observed state -----------------------------------------------------------------------------


def credentials_objects(token: str, spec: Any = None) -> list[dict[str, Any]]:
    """The provider config spec.credentials names and its credentials Secret holding token."""
    creds = spec.get("credentials") if isinstance(spec, dict) else None
    creds = creds if isinstance(creds, dict) else {}
    kind = creds.get("type") or "ClusterProviderConfig"
    config = copy.deepcopy(CLUSTER_PROVIDER_CONFIG)
    config["kind"] = kind
    config["metadata"] = {"name": creds.get("name") or "default"}
    namespace = "crossplane-system"
    if kind == "ProviderConfig":  # namespaced: its Secret is read from the XR's namespace
        namespace = NAMESPACE
        config["metadata"]["namespace"] = NAMESPACE
        config["spec"]["credentials"]["secretRef"]["namespace"] = NAMESPACE
    return [config, credentials_secret(token, namespace=namespace)]


def secret_with(payload: bytes | str, key: str = "credentials") -> dict[str, Any]:
    data = payload if isinstance(payload, str) else base64.b64encode(payload).decode()
    return {**credentials_secret(), "data": {key: data}}


def required_with(payload: bytes) -> dict[str, list[dict[str, Any]]]:
    """The CoreWeave credential requirements met: the cluster provider config, a Secret."""
    return {
        "coreweave-providerconfig": [CLUSTER_PROVIDER_CONFIG],
        "coreweave-credentials": [secret_with(payload)],
    }


def provider_reports(world: World) -> None:
    """What healthy providers report about everything applied so far."""
    for key, body in world.observed.items():
        kind = body["kind"]
        if kind in ("Secret", "ProviderConfig", "Usage"):
            body.setdefault("status", {})
            continue
        status: dict[str, Any] = {**READY_STATUS, "atProvider": {"id": f"id-{key}"}}
        if key == "cks-cluster":
            status["atProvider"]["apiServerEndpoint"] = ENDPOINT
        elif kind == "Object":
            manifest = copy.deepcopy(body["spec"]["forProvider"]["manifest"])
            if key == "shared-vast-observer":
                manifest = copy.deepcopy(SHARED_VAST_LIVE)
            manifest.setdefault("metadata", {})["uid"] = f"uid-{key}"
            status["atProvider"] = {"manifest": manifest}
        elif kind == "NodePool":
            body["metadata"]["annotations"]["crossplane.io/external-name"] = f"id-{key}"
        body["status"] = status


@functools.lru_cache(maxsize=256)
def _grown(xr_json: str, rounds: int) -> str:
    world = World(json.loads(xr_json))
    world.cluster_objects = credentials_objects(TOKENS[0], world.xr["spec"])
    for _ in range(rounds):
        world.reconcile()
        provider_reports(world)
    return json.dumps(world.observed)


def grown(xr: dict[str, Any], rounds: int) -> dict[str, dict[str, Any]]:
    """Observed resources after `rounds` reconciles with healthy providers (0: nothing yet)."""
    observed: dict[str, dict[str, Any]] = json.loads(_grown(json.dumps(xr, sort_keys=True), rounds))
    return observed


# What a reported manifest holds, any of it garbage (the shared-vast StorageClass's fields too).
LIVE_MANIFEST = dict.fromkeys(
    ["metadata", "spec", "parameters", "mountOptions", "volumeBindingMode", "allowVolumeExpansion"],
    GARBAGE,
)


@st.composite
def garbage_status(draw: st.DrawFn) -> Any:
    choice = draw(st.integers(0, 6))
    if choice == 0:
        return draw(NOT_DICT)
    status: dict[str, Any] = {}
    if choice in (1, 6):
        status["conditions"] = draw(
            st.one_of(
                NOT_LIST,
                st.lists(GARBAGE, max_size=3),
                st.lists(
                    st.fixed_dictionaries(
                        {},
                        optional={
                            "type": st.sampled_from(["Ready", "Synced", "Validated"]) | GARBAGE,
                            "status": st.sampled_from(["True", "true", "False", ""]) | GARBAGE,
                        },
                    ),
                    max_size=3,
                ),
            )
        )
    if choice in (2, 6):
        status["atProvider"] = draw(NOT_DICT)
    if choice in (3, 4, 5, 6):
        status["atProvider"] = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "apiServerEndpoint": st.one_of(
                        GARBAGE, UNICODE, st.sampled_from(["", ENDPOINT, "https://" + ENDPOINT])
                    ),
                    "id": GARBAGE | UNICODE,
                    "nodeCount": GARBAGE,
                    "manifest": st.one_of(
                        NOT_DICT,
                        st.fixed_dictionaries(
                            {}, optional={**LIVE_MANIFEST, "provisioner": GARBAGE | UNICODE}
                        ),
                    ),
                },
            )
        )
    return status


@st.composite
def perturbed(draw: st.DrawFn, base: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """base with resources missing, stripped of status, or reporting garbage."""
    observed: dict[str, Any] = {}
    for key, base_body in base.items():
        action = draw(
            st.sampled_from(["keep"] * 8 + ["drop", "no-status", "garbage", "annotations"])
        )
        if action == "drop":
            continue
        body = copy.deepcopy(base_body)
        if action == "no-status":
            body.pop("status", None)
        elif action == "garbage":
            body["status"] = draw(garbage_status())
        elif action == "annotations":
            body["metadata"]["annotations"] = draw(
                st.one_of(
                    NOT_DICT,
                    st.fixed_dictionaries({"crossplane.io/external-name": GARBAGE | UNICODE}),
                )
            )
        observed[key] = body
    if draw(st.booleans()):  # resources this function never composed
        observed[draw(st.text(min_size=1, max_size=12))] = draw(
            st.dictionaries(st.text(max_size=5), GARBAGE, max_size=3)
        )
    return observed


@st.composite
def required_resources(
    draw: st.DrawFn, kind: str, spec: Any = None
) -> dict[str, list[dict[str, Any]]] | None:
    """What Crossplane sends for the CoreWeave credential requirements, in any state."""
    if kind != "CoreWeaveCluster" or draw(st.integers(0, 4)) == 0:
        return None  # a CivoCluster requires nothing; or the first pass of the requirements loop
    token = draw(st.sampled_from(TOKENS))
    good_config, good_secret = credentials_objects(token, spec)
    config = st.one_of(
        st.just(good_config),
        st.builds(
            lambda source, ref: {
                **good_config,
                "spec": {"credentials": {"source": source, "secretRef": ref}},
            },
            st.sampled_from(["Secret", "InjectedIdentity", "None"]) | GARBAGE,
            st.one_of(
                NOT_DICT,
                st.fixed_dictionaries(
                    {},
                    optional={
                        "name": st.just("coreweave-creds") | GARBAGE,
                        "namespace": st.just("crossplane-system") | GARBAGE,
                        "key": st.just("credentials") | GARBAGE,
                    },
                ),
            ),
        ),
        st.dictionaries(st.text(max_size=6), GARBAGE, max_size=3),
    )
    payloads = st.one_of(
        st.just(json.dumps({"token": token}).encode()),
        st.just(json.dumps({"token": f"  {token}\n", "extra": [1, 2]}).encode()),
        st.sampled_from(
            [
                b"not json",
                b"",
                b"\xff\xfe\x00garbage",
                b"[]",
                b"null",
                b'{"token": ""}',
                b'{"token": "   "}',
                b'{"token": 5}',
                b'{"token": null}',
                b'{"Token": "x"}',
                b'"just-a-string"',
            ]
        ),
        st.binary(max_size=40),
        GARBAGE.map(lambda v: json.dumps(v).encode()),
    )
    secret = st.one_of(
        st.just(good_secret),
        payloads.map(secret_with),
        st.sampled_from(["not base64!!", "====", "Zm9v", "\u00e9\u00e9\u00e9\u00e9"]).map(
            secret_with
        ),
        GARBAGE.map(lambda v: {**good_secret, "data": v}),
        GARBAGE.map(lambda v: {**good_secret, "data": {"credentials": v}}),
        payloads.map(lambda p: secret_with(p, key="other-key")),
    )
    required: dict[str, list[dict[str, Any]]] = {}
    if draw(st.integers(0, 5)) > 0:
        required["coreweave-providerconfig"] = draw(st.lists(config, max_size=2))
    if draw(st.integers(0, 5)) > 0:
        required["coreweave-credentials"] = draw(st.lists(secret, max_size=2))
    if draw(st.integers(0, 5)) == 0:
        required[draw(st.text(max_size=10))] = draw(
            st.lists(st.dictionaries(st.text(max_size=5), GARBAGE, max_size=3), max_size=2)
        )
    return required


# --- checks -----------------------------------------------------------------------------------


def check_fatal(rsp: fnv1.RunFunctionResponse) -> str:
    """The one FATAL of an answer to bad input: alone, naming a field, nothing desired."""
    assert fatal_problems(rsp) == []
    return results(rsp)[0][1]


def check_composed(rsp: fnv1.RunFunctionResponse) -> None:
    assert not fatal_messages(rsp), results(rsp)
    assert object_problems(desired(rsp)) == {}


def check_token_confined(rsp: fnv1.RunFunctionResponse, *, kubeconfig: bool = True) -> None:
    """No token outside the kubeconfig Secret's data; inside it, a well-formed kubeconfig."""
    if kubeconfig and "kubeconfig" in rsp.desired.resources:
        data = desired(rsp)["kubeconfig"]["data"]["kubeconfig"]
        document = yaml.safe_load(base64.b64decode(data, validate=True).decode())
        assert document["kind"] == "Config"
        [user] = document["users"]
        assert user["user"]["token"].strip() in TOKENS
        [cluster] = document["clusters"]
        assert cluster["cluster"]["server"].startswith("https://")
        assert set(cluster["cluster"]) == {"server"}
    assert leaked_tokens(rsp, TOKENS) == []


def null_where_xrd_defaults(kind: str, spec: Any) -> bool:
    """A null the API server would prune and then default (render-only input)."""
    if not isinstance(spec, dict):
        return False
    defaulted = {"credentials"} | ({"kubernetesVersion"} if kind == "CoreWeaveCluster" else set())
    if any(k in spec and spec[k] is None for k in defaulted):
        return True
    creds = spec.get("credentials")
    if isinstance(creds, dict) and any(k in creds and creds[k] is None for k in ("name", "type")):
        return True
    pools = spec.get("nodePools")
    return isinstance(pools, list) and any(
        isinstance(p, dict) and "nodeCount" in p and p["nodeCount"] is None for p in pools
    )


def check_agrees_with_xrd(kind: str, xr: dict[str, Any], rsp: fnv1.RunFunctionResponse) -> None:
    """The function refuses exactly the specs the XRD refuses (modulo documented extras)."""
    if null_where_xrd_defaults(kind, xr["spec"]):
        return  # the API server would default it; either answer is fine for render-only input
    refused = bool(fatal_messages(rsp))
    assert refused == xrd_refuses(kind, xr), (
        f"function {'refused' if refused else 'accepted'} a spec the XRD "
        f"{'accepts' if refused else 'refuses'}: {spec_problems(xr)[:5]} / {results(rsp)[:1]}"
    )


KINDS = ["CoreWeaveCluster", "CivoCluster"]


def each_kind(max_examples: int, **strategies: Any) -> Callable[[Callable[..., None]], Any]:
    """A property of each kind, run max_examples times on what the strategies generate."""

    def decorate(test: Callable[..., None]) -> Any:
        runs = settings(PROPERTIES, max_examples=max_examples)
        return pytest.mark.parametrize("kind", KINDS)(runs(given(**strategies)(test)))

    return decorate


# --- properties -------------------------------------------------------------------------------


@needs_crds
@each_kind(120, data=st.data())
def test_valid_spec_composes_valid_objects_whatever_is_observed(
    kind: str, data: st.DataObject
) -> None:
    spec = data.draw(spec_strategy(kind), label="spec")
    xr = xr_of(kind, spec)
    assert spec_problems(xr) == [], "the generator builds XRD-valid specs"
    base = grown(xr, data.draw(st.sampled_from([0, 1, 2, 3, 4, 5, 5, 5]), label="rounds"))
    observed = data.draw(perturbed(base), label="observed")
    required = data.draw(required_resources(kind, spec), label="required")
    rsp = run(request(xr, observed, required))
    check_composed(rsp)
    check_token_confined(rsp)
    event(f"composed {len(rsp.desired.resources)} resources")
    event(f"kubeconfig composed: {'kubeconfig' in rsp.desired.resources}")
    event(f"warnings: {any(s == 'Warning' for s, _ in results(rsp))}")


@each_kind(150, data=st.data())
def test_invalid_spec_is_one_fatal_naming_the_field(kind: str, data: st.DataObject) -> None:
    spec, path = data.draw(invalid_spec(kind), label="spec")
    xr = xr_of(kind, spec)
    rounds = data.draw(st.sampled_from([0, 2, 5]), label="rounds")
    observed = grown(example_xr(kind), rounds)  # what an invalid edit of the example meets
    rsp = run(request(xr, observed))
    message = check_fatal(rsp)
    assert re.search(re.escape(path) + r"[.\[:]", message), (path, message[:500])
    check_agrees_with_xrd(kind, xr, rsp)


def keys_of(parent: dict[Any, Any] | list[Any]) -> list[Any] | range:
    return sorted(parent, key=str) if isinstance(parent, dict) else range(len(parent))


@st.composite
def arbitrary_spec(draw: st.DrawFn, kind: str) -> Any:
    """Nested garbage, or a valid spec with random parts replaced by garbage."""
    if draw(st.integers(0, 3)) == 0:
        return draw(GARBAGE)
    spec = draw(spec_strategy(kind))
    for _ in range(draw(st.integers(1, 4))):
        parent: Any = spec
        while isinstance(parent, (dict, list)) and parent and draw(st.booleans()):
            key = draw(st.sampled_from(keys_of(parent)))
            if not isinstance(parent[key], (dict, list)) or not parent[key]:
                break
            parent = parent[key]
        if not isinstance(parent, (dict, list)) or not parent:
            continue
        key = draw(st.sampled_from(keys_of(parent)))
        if isinstance(parent, dict) and draw(st.booleans()):
            del parent[key]
        else:
            parent[key] = draw(GARBAGE | UNICODE | long_text(64))
    return spec


@each_kind(150, data=st.data())
def test_arbitrary_spec_gets_a_fatal_or_valid_objects(kind: str, data: st.DataObject) -> None:
    spec = data.draw(arbitrary_spec(kind), label="spec")
    xr = xr_of(kind, spec)
    rsp = run(request(xr))
    event(f"fatal: {bool(fatal_messages(rsp))}")
    if fatal_messages(rsp):
        check_fatal(rsp)
    elif CRDS is not None:
        check_composed(rsp)
    check_agrees_with_xrd(kind, xr, rsp)


@each_kind(25, data=st.data())
def test_hundreds_of_pools_are_one_bounded_fatal(kind: str, data: st.DataObject) -> None:
    count = data.draw(st.integers(9, 400), label="pools")
    spec = data.draw(spec_strategy(kind), label="spec")
    extra = data.draw(
        st.lists(st.one_of(SCALARS, st.just(spec["nodePools"][0])), min_size=count, max_size=count)
    )
    spec["nodePools"] = spec["nodePools"] + extra
    rsp = run(request(xr_of(kind, spec)))
    message = check_fatal(rsp)
    assert "spec.nodePools: must have at most 8 items" in message
    event(f"message size: {len(message) // 10_000 * 10} KB")


@st.composite
def mangled(draw: st.DrawFn, value: Any, depth: int = 0) -> Any:
    """value with random subtrees removed or replaced by garbage (spec and metadata included)."""
    if isinstance(value, dict) and value:
        out = {}
        for key, item in value.items():
            action = draw(st.sampled_from(["keep", "keep", "keep", "recurse", "drop", "garbage"]))
            if action == "drop":
                continue
            if action == "garbage":
                out[key] = draw(GARBAGE)
            elif action == "recurse" and depth < 6:
                out[key] = draw(mangled(item, depth + 1))
            else:
                out[key] = item
        return out
    if isinstance(value, list) and value and draw(st.booleans()):
        return [draw(mangled(item, depth + 1)) for item in value]
    return value


@each_kind(120, data=st.data())
def test_mangled_observed_objects_never_cause_an_internal_error(
    kind: str, data: st.DataObject
) -> None:
    """Observed objects whose spec or metadata is partial or garbled (an edited or older object):
    the answer may keep odd values, but it is never an exception or a FATAL for a valid spec."""
    xr = example_xr(kind)
    observed = data.draw(mangled(grown(xr, data.draw(st.integers(1, 5)))), label="observed")
    observed = {k: v for k, v in observed.items() if isinstance(v, dict)}
    required = data.draw(required_resources(kind, xr["spec"]))
    rsp = run(request(xr, observed, required))
    assert not fatal_messages(rsp), results(rsp)
    # A garbled observed kubeconfig is re-applied as last known: only confinement is checked.
    check_token_confined(rsp, kubeconfig=False)


@each_kind(40, data=st.data())
def test_answers_do_not_depend_on_earlier_requests(kind: str, data: st.DataObject) -> None:
    """The function caches validated specs, decoded tokens, observed subtrees and encoded
    objects by content: a request must get the same answer whatever was served before it."""
    requests = []
    for _ in range(data.draw(st.integers(2, 4), label="requests")):
        spec = data.draw(spec_strategy(kind), label="spec")
        xr = xr_of(kind, spec)
        observed = data.draw(perturbed(grown(xr, data.draw(st.integers(0, 5)))), label="observed")
        required = data.draw(required_resources(kind, spec))
        requests.append(request(xr, observed, required))
    first = [run(r).SerializeToString(deterministic=True) for r in requests]
    again = [run(r).SerializeToString(deterministic=True) for r in reversed(requests)]
    assert first == again[::-1]


# --- malformed requests -----------------------------------------------------------------------


@settings(PROPERTIES, max_examples=60)
@given(
    extra=st.dictionaries(st.sampled_from(["metadata", "spec", "status"]), GARBAGE, max_size=3),
    kind=st.one_of(st.none(), UNICODE, st.sampled_from(KINDS)),
    api_version=st.one_of(
        st.none(), UNICODE, st.sampled_from([API_VERSION, "infrastructure.modelplane.ai/v2"])
    ),
)
def test_unknown_or_missing_composite_is_one_fatal(
    extra: dict[str, Any], kind: str | None, api_version: str | None
) -> None:
    assume((api_version, kind) not in {(API_VERSION, k) for k in KINDS})
    given = {"kind": kind, "apiVersion": api_version}
    xr = {**extra, **{k: v for k, v in given.items() if v is not None}}
    message = fatal_only(run(request(xr) if xr else fnv1.RunFunctionRequest()))
    assert message.startswith(f'unsupported composite resource "{kind or "<none>"}"'), message
    assert "CoreWeaveCluster" in message
    assert "CivoCluster" in message


def test_request_without_observed_composite_is_one_fatal() -> None:
    rsp = run(fnv1.RunFunctionRequest(meta=fnv1.RequestMeta(tag="t")))
    assert 'unsupported composite resource "<none>" (<none>)' in fatal_only(rsp)


@each_kind(
    60,
    name=st.one_of(st.just(None), st.just(""), NOT_STRING, st.just("inference")),
    namespace=st.one_of(st.just(None), st.just(""), NOT_STRING, st.just(NAMESPACE)),
)
def test_composite_without_name_or_namespace_is_one_fatal(
    kind: str, name: Any, namespace: Any
) -> None:
    given = {"name": name, "namespace": namespace}
    assume(given != {"name": "inference", "namespace": NAMESPACE})
    xr = example_xr(kind)
    xr["metadata"] = {k: v for k, v in given.items() if v is not None}
    message = check_fatal(run(request(xr)))
    for field, value in given.items():
        missing = not isinstance(value, str) or not value
        assert (f"metadata.{field}: required" in message) == missing, message


INPUT_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "coreweave": SOME_NOT_DICT,
    "coreweave.systemPool": SOME_NOT_DICT,
    "coreweave.systemPool.instanceType": _bad_text(63),
    "coreweave.systemPool.nodeCount": st.one_of(
        st.integers(max_value=0), st.integers(min_value=11), NOT_INTEGER
    ),
    "coreweave.vpcPrefixes": SOME_NOT_DICT,
    "coreweave.vpcPrefixes.pod": UNICODE.filter(lambda s: not re.fullmatch(CIDR, s))
    | SOME_NOT_STRING,
    "coreweave.vpcPrefixes.internalLoadBalancer": st.just("10.0.0.0"),
    "coreweave.storageClassName": st.sampled_from(["", "Shared_Vast", "-a", "a" * 254])
    | SOME_NOT_STRING,
    "civo": SOME_NOT_DICT,
    "civo.cni": UNICODE.filter(lambda s: s not in ("flannel", "cilium")) | SOME_NOT_STRING,
    "civo.applications": long_text(1025) | SOME_NOT_STRING,
    "civo.clusterAutoscaler": SOME_NOT_DICT,
    "civo.clusterAutoscaler.chartRepository": st.sampled_from(
        ["", "http://x", "kubernetes.github.io/autoscaler"]
    ),
    "civo.clusterAutoscaler.chartVersion": st.sampled_from(["latest", "9.59", "v9.59.0", ""])
    | SOME_NOT_STRING,
}


@st.composite
def bad_input(draw: st.DrawFn) -> tuple[dict[str, Any], str]:
    field, values = draw(st.sampled_from(list(INPUT_FIELDS.items())))
    document: dict[str, Any] = {"apiVersion": "inference.fn.modelplane.ai/v1beta1", "kind": "Input"}
    *parents, name = field.split(".")
    parent = document
    for part in parents:
        parent = parent.setdefault(part, {})
    parent[name] = draw(values)
    return document, f"input.{field}"


@each_kind(80, case=bad_input())
def test_input_of_wrong_shape_is_one_fatal_naming_the_field(
    kind: str, case: tuple[dict[str, Any], str]
) -> None:
    step_input, path = case
    rsp = run(request(example_xr(kind), step_input=step_input))
    message = check_fatal(rsp)
    assert path in message, (path, message)


@each_kind(40, extra=st.dictionaries(st.text(min_size=1, max_size=8), GARBAGE, max_size=3))
def test_unknown_input_fields_are_ignored(kind: str, extra: dict[str, Any]) -> None:
    assume(not set(extra) & {"coreweave", "civo"})  # wrong shapes of known fields: above
    rsp = run(request(example_xr(kind), step_input={"kind": "Input", **extra}))
    assert not fatal_messages(rsp), results(rsp)


# --- findings of the properties above, each pinned with a minimal request (all fixed) ---------


@needs_crds
@settings(PROPERTIES, max_examples=40)
@given(spec=spec_strategy("CivoCluster", CIVO_XRD_NAMES))
def test_civo_pool_names_give_valid_object_names(spec: dict[str, Any]) -> None:
    world = World(xr_of("CivoCluster", spec))
    world.reconcile()
    world.ready("civo-cluster", atProvider={"id": "c1"})
    check_composed(world.reconcile())


def test_civo_pool_name_with_upper_case_minimal() -> None:
    xr = civo_xr(
        nodePools=[
            {"name": "system", "role": "System", "size": "g4s.kube.medium"},
            {"name": "GPU_Pool", "size": "g4s.kube.medium"},
        ]
    )
    rsp = run(request(xr, grown(xr, 1)))
    names = {k: v["metadata"]["name"] for k, v in desired(rsp).items()}
    assert all(DNS_SUBDOMAIN.fullmatch(n) for n in names.values()), names


@pytest.mark.parametrize("metadata", [None, "garbage"], ids=["no-metadata", "metadata-not-object"])
def test_rwx_storageclass_manifest_without_metadata_name(metadata: Any) -> None:
    observed = grown(coreweave_xr(), 3)
    manifest = observed["rwx-storageclass"]["spec"]["forProvider"]["manifest"]
    if metadata is None:
        del manifest["metadata"]
    else:
        manifest["metadata"] = metadata
    rsp = run(request(coreweave_xr(), observed, {}))
    assert not fatal_messages(rsp), results(rsp)


def test_deeply_nested_credentials_json_is_not_an_internal_error() -> None:
    observed = grown(coreweave_xr(), 2)
    rsp = run(request(coreweave_xr(), observed, required_with(b"[" * 100_000)))
    assert not fatal_messages(rsp), results(rsp)


@pytest.mark.parametrize("value", [float("nan"), float("inf")], ids=["nan", "inf"])
@pytest.mark.parametrize("kind", KINDS)
def test_non_finite_numbers_are_a_field_fatal_or_ignored(kind: str, value: float) -> None:
    """gRPC clients other than Crossplane can send NaN and Infinity (JSON cannot): once an
    internal error (json_format refused them), now a FATAL naming the field."""
    xr = example_xr(kind)
    xr["spec"]["nodePools"][0]["nodeCount"] = value
    assert "spec.nodePools[0].nodeCount: must be an integer" in check_fatal(run(request(xr)))
    xr = example_xr(kind)
    xr["spec"]["unknownField"] = value
    assert not fatal_messages(run(request(xr)))


@pytest.mark.parametrize("kind", KINDS)
def test_accelerator_type_must_be_a_label_value(kind: str) -> None:
    xr = example_xr(kind)
    for item in xr["spec"]["nodePools"]:
        if item.get("role") == "GPU":
            item["gpu"]["acceleratorType"] = "H100 SXM"
    rsp = run(request(xr))
    assert fatal_messages(rsp), "a value Kubernetes rejects as a node label is refused up front"


def test_kubeconfig_has_no_surrogate_escapes() -> None:
    observed = grown(coreweave_xr(), 1)  # the cluster reports its endpoint
    payload = json.dumps({"token": "CW-SECRET-\U0001f600"}).encode()
    rsp = run(request(coreweave_xr(), observed, required_with(payload)))
    secret = desired(rsp)["kubeconfig"]
    text = base64.b64decode(secret["data"]["kubeconfig"]).decode()
    assert not re.search(r"\\ud[89a-f][0-9a-f]{2}", text), text
