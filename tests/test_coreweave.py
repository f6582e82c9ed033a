"""CoreWeaveCluster composition rules, one table per rule, asserting whole objects or exact
messages."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import pytest

from harness.fixtures import (
    CLUSTER_PROVIDER_CONFIG,
    ENDPOINT,
    NAMESPACE,
    ORG_TOKEN,
    conditions,
    coreweave_xr,
    credentials_secret,
    desired,
    fatal_only,
    readiness,
    request,
    results,
    run,
    xr_status,
)
from tests import coreweave_expected as expected


def cluster_up(endpoint: str = ENDPOINT) -> dict[str, dict[str, Any]]:
    """Observed VPC and cluster, both Ready, the cluster reporting its endpoint."""
    return {
        "vpc": expected.as_ready(expected.VPC, atProvider={"id": "3f0c"}),
        "cks-cluster": expected.as_ready(
            expected.CLUSTER, atProvider={"id": "9e1d", "apiServerEndpoint": endpoint}
        ),
    }


CREDENTIALS = {
    "coreweave-providerconfig": [CLUSTER_PROVIDER_CONFIG],
    "coreweave-credentials": [credentials_secret()],
}


def pool(**fields: Any) -> dict[str, Any]:
    return {"name": "p", "role": "CPU", "instanceType": "cd-gp-a192-genoa", **fields}


INVALID_SPECS = {
    "gpu-required": (
        {"nodePools": [pool(role="GPU")]},
        "invalid CoreWeaveCluster spec (1 problem): spec.nodePools[0].gpu: required when "
        "role is GPU",
    ),
    "min-needs-max": (
        {"nodePools": [pool(minNodeCount=1)]},
        "invalid CoreWeaveCluster spec (1 problem): spec.nodePools[0].maxNodeCount: "
        "required when minNodeCount is set",
    ),
    "min-above-max": (
        {"nodePools": [pool(minNodeCount=5, maxNodeCount=3, nodeCount=2)]},
        "invalid CoreWeaveCluster spec (1 problem): spec.nodePools[0].minNodeCount: must "
        "not exceed maxNodeCount (5 > 3)",
    ),
    "count-above-max": (
        {"nodePools": [pool(nodeCount=4, maxNodeCount=3)]},
        "invalid CoreWeaveCluster spec (1 problem): spec.nodePools[0].nodeCount: must not "
        "exceed maxNodeCount (4 > 3)",
    ),
    "duplicate-names": (
        {"nodePools": [pool(), pool(instanceType="other")]},
        "invalid CoreWeaveCluster spec (1 problem): spec.nodePools[1].name: duplicate pool "
        'name "p" (also spec.nodePools[0])',
    ),
    "reserved-name": (
        {"nodePools": [pool(name="modelplane-system")]},
        "invalid CoreWeaveCluster spec (1 problem): spec.nodePools[0].name: "
        '"modelplane-system" is reserved for the system pool the function adds; choose '
        "another name",
    ),
    "every-problem-at-once": (
        {"zone": "", "kubernetesVersion": "v1.37", "nodePools": []},
        "invalid CoreWeaveCluster spec (3 problems): spec.kubernetesVersion: must match "
        '^[0-9]+\\.[0-9]+$ (got "v1.37"); spec.nodePools: must have at least 1 item; '
        "spec.zone: must not be empty",
    ),
    "types-bounds-patterns": (
        {"nodePools": [pool(name="GPU_Pool", role="TPU", nodeCount=2.5, maxNodeCount=0)]},
        "invalid CoreWeaveCluster spec (4 problems): spec.nodePools[0].maxNodeCount: must "
        "be at least 1 (got 0); spec.nodePools[0].name: must match "
        '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ (got "GPU_Pool"); spec.nodePools[0].nodeCount: '
        "must be an integer; spec.nodePools[0].role: must be one of 'GPU' or 'CPU' (got "
        '"TPU")',
    ),
    "too-many-pools": (
        {"nodePools": [pool(instanceType="x" * 64)] + [pool(name=f"p{i}") for i in range(8)]},
        # pydantic checks a list's length before its items; the XRD bounds it first anyway.
        "invalid CoreWeaveCluster spec (1 problem): spec.nodePools: must have at most 8 "
        "items (got 9)",
    ),
    "credentials": (
        {"credentials": {"name": "", "type": "Secret"}},
        "invalid CoreWeaveCluster spec (2 problems): spec.credentials.name: must not be "
        "empty; spec.credentials.type: must be one of 'ProviderConfig' or "
        "'ClusterProviderConfig' (got \"Secret\")",
    ),
    "long-instance-type": (
        {"nodePools": [pool(instanceType="x" * 64)]},
        "invalid CoreWeaveCluster spec (1 problem): spec.nodePools[0].instanceType: must be "
        "at most 63 characters (got 64)",
    ),
    # role is required by the API: a forgotten role must not make a GPU pool untainted.
    "role-required": (
        {"nodePools": [pool(), {"name": "h100", "instanceType": "gd-8xh100ib-i128"}]},
        "invalid CoreWeaveCluster spec (1 problem): spec.nodePools[1].role: required",
    ),
}


@pytest.mark.parametrize(("spec", "message"), INVALID_SPECS.values(), ids=INVALID_SPECS.keys())
def test_invalid_spec_is_one_fatal_naming_every_field(spec: dict[str, Any], message: str) -> None:
    """On a new XR and on a live one alike: a FATAL applies nothing, so nothing composed is lost."""
    for observed, required in ((None, None), (cluster_up(), CREDENTIALS)):
        assert fatal_only(run(request(coreweave_xr(**spec), observed, required))) == message


def test_spec_without_zone_or_pools_names_both_fields() -> None:
    xr = coreweave_xr()
    xr["spec"] = {"kubernetesVersion": "1.37"}
    assert fatal_only(run(request(xr))) == (
        "invalid CoreWeaveCluster spec (2 problems): spec.nodePools: required; spec.zone: required"
    )


def observed_pool(applied: dict[str, Any], live: dict[str, Any] | None) -> dict[str, Any]:
    def manifest(spec: dict[str, Any]) -> dict[str, Any]:
        nodepool = {"apiVersion": "compute.coreweave.com/v1alpha1", "kind": "NodePool"}
        return {"manifest": {**nodepool, "metadata": {"name": "p"}, "spec": spec}}

    body: dict[str, Any] = {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "spec": {"forProvider": manifest(applied)},
    }
    if live is not None:
        body["status"] = {"atProvider": manifest(live)}
    return body


CREATOR, SETTINGS = "nodepool-p", "autoscaled-nodepool-p"
IN_CLUSTER = expected.IN_CLUSTER_POLICIES
TYPE = {"instanceType": "cd-gp-a192-genoa"}
PLACEMENT = {
    "nodeLabels": {"modelplane.ai/pool": "p", "modelplane.ai/cpu": "true"},
    "nodeTaints": [expected.CPU_TAINT],
}


def p_object(spec: dict[str, Any], policies: list[str]) -> dict[str, Any]:
    return expected.nodepool_object("inference-east-nodepool-p-eb567", "p", spec, policies)


def objects_of_p(composed: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in composed.items() if k in (CREATOR, SETTINGS)}


def fixed(target_nodes: int) -> dict[str, dict[str, Any]]:
    """The Object of a fixed pool "p" of that many nodes."""
    spec = {**TYPE, "targetNodes": target_nodes, "autoscaling": False, **PLACEMENT}
    return {CREATOR: p_object(spec, IN_CLUSTER)}


def autoscaled(
    min_nodes: int, max_nodes: int, target_nodes: int, *, live: bool
) -> dict[str, dict[str, Any]]:
    """The Objects of an autoscaled pool "p": the one that creates it and, once it is live, the
    one that updates its settings."""
    bounds = {**TYPE, "autoscaling": True, "minNodes": min_nodes, "maxNodes": max_nodes}
    creator = {**bounds, "targetNodes": target_nodes, **PLACEMENT}
    objects = {CREATOR: p_object(creator, expected.CREATOR_POLICIES)}
    if live:
        objects[SETTINGS] = expected.nodepool_object(
            "inference-east-autoscaled-nodepool-p-d2f76",
            "p",
            {**bounds, **PLACEMENT},
            expected.SETTINGS_POLICIES,
        )
    return objects


AUTOSCALED = {"autoscaling": True, "minNodes": 1, "maxNodes": 8}
# What the creator Object of a pool of 1 to 8 nodes, started at 2, applies.
CREATOR_APPLIED = {**TYPE, "targetNodes": 2, **AUTOSCALED}
LIVE_AUTOSCALED = observed_pool(CREATOR_APPLIED, {**TYPE, "targetNodes": 7, **AUTOSCALED})
READY_ONLY = expected.as_ready(observed_pool(CREATOR_APPLIED, None))
SETTINGS_APPLIED = observed_pool({**TYPE, **AUTOSCALED}, None)
ONE_TO_EIGHT = {"nodeCount": 2, "minNodeCount": 1, "maxNodeCount": 8}


TRANSITIONS = {
    "fixed": ({"nodeCount": 3}, {}, fixed(3)),
    "fixed-at-zero": ({"nodeCount": 0}, {}, fixed(0)),
    "fixed-resize-is-asserted": (
        {"nodeCount": 4},
        {CREATOR: observed_pool({**TYPE, "targetNodes": 2}, {"targetNodes": 2})},
        fixed(4),
    ),
    "autoscaled-new-only-the-creator": (
        {"nodeCount": 3, "minNodeCount": 2, "maxNodeCount": 6},
        {},
        autoscaled(2, 6, 3, live=False),
    ),
    "autoscaled-new-from-zero-starts-at-one": (
        {"nodeCount": 0, "maxNodeCount": 4},
        {},
        autoscaled(1, 4, 1, live=False),
    ),
    "autoscaled-min-defaults-to-count": (
        {"nodeCount": 3, "maxNodeCount": 4},
        {},
        autoscaled(3, 4, 3, live=False),
    ),
    "autoscaled-live-settings-object-without-targetNodes": (
        ONE_TO_EIGHT,
        {CREATOR: LIVE_AUTOSCALED},
        autoscaled(1, 8, 2, live=True),
    ),
    "autoscaled-creator-ready-is-enough": (
        ONE_TO_EIGHT,
        {CREATOR: READY_ONLY},
        autoscaled(1, 8, 2, live=True),
    ),
    "deleted-outside-crossplane-creator-recreates-with-targetNodes": (
        ONE_TO_EIGHT,
        {CREATOR: observed_pool(CREATOR_APPLIED, None), SETTINGS: SETTINGS_APPLIED},
        autoscaled(1, 8, 2, live=True),
    ),
    "bounds-edit-reaches-the-settings-object": (
        {"nodeCount": 2, "minNodeCount": 2, "maxNodeCount": 12},
        {CREATOR: LIVE_AUTOSCALED, SETTINGS: SETTINGS_APPLIED},
        autoscaled(2, 12, 2, live=True),
    ),
    "fixed-made-autoscaled-keeps-its-live-size": (
        ONE_TO_EIGHT,
        {
            CREATOR: observed_pool(
                {**TYPE, "targetNodes": 5, "autoscaling": False},
                {**TYPE, "targetNodes": 5, "autoscaling": False},
            )
        },
        autoscaled(1, 8, 2, live=True),
    ),
    "autoscaled-made-fixed-asserts-nodeCount-settings-object-retired": (
        {"nodeCount": 3},
        {CREATOR: LIVE_AUTOSCALED, SETTINGS: SETTINGS_APPLIED},
        fixed(3),
    ),
}


@pytest.mark.parametrize(
    ("fields", "observed", "want"), TRANSITIONS.values(), ids=TRANSITIONS.keys()
)
def test_pool_objects_for_every_transition(
    fields: dict[str, Any], observed: dict[str, Any], want: dict[str, dict[str, Any]]
) -> None:
    state = {**cluster_up(), **observed}
    rsp = run(request(coreweave_xr(nodePools=[pool(**fields)]), state, CREDENTIALS))
    assert objects_of_p(desired(rsp)) == want


SCALE_TO_ZERO = (
    'spec.nodePools[{index}].minNodeCount: node pool "p" may scale down to zero nodes, and '
    "CKS's cluster autoscaler can't scale a pool whose devices bind through DRA up from zero "
    "nodes, so a pod scheduled to the empty pool waits forever. Keep minNodeCount at 1 or higher."
)


@pytest.mark.parametrize(
    ("fields", "warned"),
    [
        pytest.param({"minNodeCount": 0, "maxNodeCount": 4}, True, id="min-zero"),
        pytest.param({"nodeCount": 0, "maxNodeCount": 4}, False, id="count-zero-min-defaults-1"),
        pytest.param({"minNodeCount": 1, "maxNodeCount": 4}, False, id="min-one"),
        pytest.param({"nodeCount": 0}, False, id="fixed-pool-of-zero"),
    ],
)
def test_autoscaled_pool_that_may_reach_zero_is_warned_about(
    fields: dict[str, Any], warned: bool
) -> None:
    # Warned from the first reconcile, before the pool exists, so the user hears it at once.
    rsp = run(request(coreweave_xr(nodePools=[pool(**fields)])))
    warnings = [m for s, m in results(rsp) if s == "Warning"]
    assert warnings == ([SCALE_TO_ZERO.format(index=0)] if warned else [])


NAMESPACED_PC = copy.deepcopy(CLUSTER_PROVIDER_CONFIG)
NAMESPACED_PC.update(kind="ProviderConfig", metadata={"name": "team", "namespace": NAMESPACE})
# The provider reads it from the MR's namespace whatever this says; so do we.
NAMESPACED_PC["spec"]["credentials"]["secretRef"]["namespace"] = "other-team"


def config_and_secret(data: dict[str, str]) -> dict[str, list[dict[str, Any]]]:
    """The ClusterProviderConfig found, naming a Secret that holds data."""
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "coreweave-creds"}}
    return {
        "coreweave-providerconfig": [CLUSTER_PROVIDER_CONFIG],
        "coreweave-credentials": [{**secret, "data": data}],
    }


CLUSTER_CREDENTIALS = {"name": "coreweave", "type": "ClusterProviderConfig"}
CONFIG_ASKED = {"coreweave-providerconfig": ("ClusterProviderConfig", "coreweave", "")}
SECRET_ASKED = {
    **CONFIG_ASKED,
    "coreweave-credentials": ("Secret", "coreweave-creds", "crossplane-system"),
}
NO_TOKEN = (
    'Secret "crossplane-system/coreweave-creds" key "credentials" does not hold JSON with a '
    'non-empty "token"'
)


WAITING_FOR_CREDENTIALS = {
    "cluster-providerconfig-missing": (
        CLUSTER_CREDENTIALS,
        {"coreweave-providerconfig": []},
        CONFIG_ASKED,
        'ClusterProviderConfig "coreweave" not found',
    ),
    "namespaced-providerconfig-reads-secret-in-xr-namespace": (
        {"name": "team", "type": "ProviderConfig"},
        {"coreweave-providerconfig": [NAMESPACED_PC], "coreweave-credentials": []},
        {
            "coreweave-providerconfig": ("ProviderConfig", "team", NAMESPACE),
            "coreweave-credentials": ("Secret", "coreweave-creds", NAMESPACE),
        },
        f'Secret "{NAMESPACE}/coreweave-creds" not found',
    ),
    "providerconfig-not-from-secret": (
        CLUSTER_CREDENTIALS,
        {
            "coreweave-providerconfig": [
                {**CLUSTER_PROVIDER_CONFIG, "spec": {"credentials": {"source": "InjectedIdentity"}}}
            ]
        },
        CONFIG_ASKED,
        'ClusterProviderConfig "coreweave" does not take its credentials from a Secret '
        "(spec.credentials.source: Secret with secretRef name and key); the kubeconfig needs "
        "the org API token",
    ),
    "secret-without-token": (
        CLUSTER_CREDENTIALS,
        config_and_secret(
            {"credentials": base64.b64encode(json.dumps({"endpoint": "x"}).encode()).decode()}
        ),
        SECRET_ASKED,
        NO_TOKEN,
    ),
    "bare-token-not-json-is-not-quoted": (
        CLUSTER_CREDENTIALS,
        config_and_secret({"credentials": base64.b64encode(ORG_TOKEN.encode()).decode()}),
        SECRET_ASKED,
        NO_TOKEN,
    ),
    "secret-without-key": (CLUSTER_CREDENTIALS, config_and_secret({}), SECRET_ASKED, NO_TOKEN),
}


@pytest.mark.parametrize(
    ("credentials", "required", "requirements", "problem"),
    WAITING_FOR_CREDENTIALS.values(),
    ids=WAITING_FOR_CREDENTIALS.keys(),
)
def test_waiting_for_credentials(
    credentials: dict[str, str],
    required: dict[str, list[dict[str, Any]]],
    requirements: dict[str, tuple[str, str, str]],
    problem: str,
) -> None:
    rsp = run(request(coreweave_xr(credentials=credentials), cluster_up(), required))
    assert {
        name: (s.kind, s.match_name, s.namespace) for name, s in rsp.requirements.resources.items()
    } == requirements
    assert set(desired(rsp)) == {"vpc", "cks-cluster", "usage-vpc-by-cluster"}
    why = f"waiting for credentials: {problem}"
    assert results(rsp) == [("Normal", why)]
    assert conditions(rsp)["ClusterAccess"] == ("False", "WaitingForCredentials", why)
    assert ORG_TOKEN not in str(rsp)


def kubeconfig_text(rsp: Any) -> str:
    return base64.b64decode(desired(rsp)["kubeconfig"]["data"]["kubeconfig"]).decode()


def test_kubeconfig_follows_token_rotation() -> None:
    rotated = "CW-SECRET-rotated-fake-token"
    required = {**CREDENTIALS, "coreweave-credentials": [credentials_secret(rotated)]}
    state = {**cluster_up(), "kubeconfig": expected.KUBECONFIG_SECRET}
    rsp = run(request(coreweave_xr(), state, required))
    assert kubeconfig_text(rsp) == expected.KUBECONFIG_TEXT.replace(ORG_TOKEN, rotated)


def test_endpoint_with_scheme_is_not_prefixed_twice() -> None:
    rsp = run(request(coreweave_xr(), cluster_up(f"https://{ENDPOINT}"), CREDENTIALS))
    assert kubeconfig_text(rsp) == expected.KUBECONFIG_TEXT


def test_zone_change_on_live_cluster_keeps_live_zone() -> None:
    rsp = run(request(coreweave_xr(zone="US-WEST-04A"), cluster_up(), CREDENTIALS))
    assert desired(rsp)["cks-cluster"] == expected.CLUSTER
    assert desired(rsp)["vpc"] == expected.VPC
    assert results(rsp)[0] == (
        "Warning",
        'spec.zone: the CKS cluster and its VPC stay in "US-EAST-04A"; a zone cannot change on '
        'a live cluster. To run in "US-WEST-04A", create a new CoreWeaveCluster there and move '
        "workloads.",
    )


CUSTOM_INPUT = {
    "apiVersion": "inference.fn.modelplane.ai/v1beta1",
    "kind": "Input",
    "coreweave": {
        "systemPool": {"instanceType": "cd-gp-l-i64-erapids", "nodeCount": 2},
        "vpcPrefixes": {
            "pod": "10.64.0.0/13",
            "service": "10.80.0.0/22",
            "internalLoadBalancer": "10.96.4.0/22",
        },
        "storageClassName": "model-cache",
    },
}


def shared_vast_observed(manifest: dict[str, Any] = expected.SHARED_VAST_LIVE) -> dict[str, Any]:
    return expected.as_ready(expected.SHARED_VAST_OBSERVER, atProvider={"manifest": manifest})


def test_step_input_shapes_new_resources() -> None:
    state = cluster_up()
    del state["vpc"]
    state["shared-vast-observer"] = shared_vast_observed()
    rsp = run(request(coreweave_xr(), state, CREDENTIALS, CUSTOM_INPUT))
    composed = desired(rsp)
    assert composed["vpc"]["spec"]["forProvider"]["vpcPrefixes"] == [
        {"name": "pod", "value": "10.64.0.0/13"},
        {"name": "service", "value": "10.80.0.0/22"},
        {"name": "internal-lb", "value": "10.96.4.0/22"},
    ]
    system = composed["system-nodepool"]["spec"]["forProvider"]["manifest"]["spec"]
    assert system == {
        "instanceType": "cd-gp-l-i64-erapids",
        "targetNodes": 2,
        "autoscaling": False,
        "nodeLabels": {"modelplane.ai/pool": "modelplane-system", "modelplane.ai/system": "true"},
    }
    clone = composed["rwx-storageclass"]["spec"]["forProvider"]["manifest"]
    assert clone["metadata"] == {"name": "model-cache"}
    assert xr_status(rsp)["cache"] == {"storageClassName": "model-cache"}


def test_live_vpc_keeps_its_prefixes_when_input_changes() -> None:
    rsp = run(request(coreweave_xr(), cluster_up(), CREDENTIALS, CUSTOM_INPUT))
    assert desired(rsp)["vpc"] == expected.VPC


def test_live_storage_class_is_never_edited_in_place() -> None:
    changed = {**expected.SHARED_VAST_LIVE, "parameters": {"vip_pool_name": "other"}}
    state = {
        **cluster_up(),
        "rwx-storageclass": expected.as_ready(expected.RWX_STORAGE_CLASS),
        "shared-vast-observer": shared_vast_observed(changed),
    }
    rsp = run(request(coreweave_xr(), state, CREDENTIALS, CUSTOM_INPUT))
    assert desired(rsp)["rwx-storageclass"] == expected.RWX_STORAGE_CLASS
    assert xr_status(rsp)["cache"] == {"storageClassName": "shared-vast-delete"}
    assert (
        "Warning",
        'input.coreweave.storageClassName: keeping StorageClass "shared-vast-delete"; a '
        "StorageClass cannot be renamed in place.",
    ) in results(rsp)


def test_system_pool_instance_type_is_kept_on_live_pool() -> None:
    state = {**cluster_up(), "system-nodepool": copy.deepcopy(expected.SYSTEM_POOL)}
    rsp = run(request(coreweave_xr(), state, CREDENTIALS, CUSTOM_INPUT))
    spec = desired(rsp)["system-nodepool"]["spec"]["forProvider"]["manifest"]["spec"]
    assert spec["instanceType"] == "cd-gp-i64-erapids"
    assert (
        "Warning",
        'input.coreweave.systemPool.instanceType: node pool "modelplane-system" keeps '
        'instanceType "cd-gp-i64-erapids"; CKS cannot change the instance type of a live pool. '
        'To use "cd-gp-l-i64-erapids", add a pool under a new name and remove this one once it '
        "is no longer needed.",
    ) in results(rsp)


INVALID_STEP_INPUTS = {
    "system-pool-count": (
        {"coreweave": {"systemPool": {"nodeCount": 0}}},
        "invalid function input (1 problem): input.coreweave.systemPool.nodeCount: must be "
        "at least 1 (got 0)",
    ),
    "prefix-and-class-name": (
        {"coreweave": {"vpcPrefixes": {"pod": "10.0.0.0"}, "storageClassName": "Bad_Name"}},
        "invalid function input (2 problems): input.coreweave.storageClassName: must match "
        '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$ (got "Bad_Name"); '
        "input.coreweave.vpcPrefixes.pod: must be at least 9 characters",
    ),
}


@pytest.mark.parametrize(
    ("step_input", "message"), INVALID_STEP_INPUTS.values(), ids=INVALID_STEP_INPUTS.keys()
)
def test_invalid_step_input_is_fatal(step_input: dict[str, Any], message: str) -> None:
    rsp = run(request(coreweave_xr(), cluster_up(), CREDENTIALS, step_input))
    assert fatal_only(rsp) == message


def test_composed_resource_names_are_stable() -> None:
    """Keys and object names are a public contract: coreweave_expected spells every one out."""
    state = {
        **cluster_up(),
        "shared-vast-observer": shared_vast_observed(),
        "nodepool-h100": expected.as_ready(expected.H100_POOL),
    }
    rsp = run(request(coreweave_xr(), state, CREDENTIALS))
    assert desired(rsp) == expected.converged()
    assert len(expected.CLOUD_NAME) <= 30


@pytest.mark.parametrize(
    ("namespace", "name", "cloud"),
    [
        ("ml-team", "inference-east", "inference-east-c7d16"),
        ("other-team", "inference-east", "inference-east-7fe70"),
        ("ml-team", "a-very-long-cluster-name-for-llama-serving", "a-very-long-cluster-name-8e589"),
        ("ml-team", "prod.us-east.v2", "prod-us-east-v2-1f20c"),
    ],
)
def test_cloud_names_fit_cks_limits_and_differ_per_namespace(
    namespace: str, name: str, cloud: str
) -> None:
    from function.shared.naming import cloud_name

    assert cloud_name(namespace, name, 30) == cloud
    assert len(cloud) <= 30


RETIRING_FIXED = [*IN_CLUSTER, "Delete"]
RETIRING_CREATOR = ["Observe", "Create", "Delete"]
P_SPEC = {**TYPE, "targetNodes": 2, "autoscaling": False, **PLACEMENT}
P_CREATOR_SPEC = {**CREATOR_APPLIED, **PLACEMENT}
P_SETTINGS_SPEC = {**TYPE, **AUTOSCALED, **PLACEMENT}
NOT_ANSWERING = (
    'connect failed: Get "https://ml-team-prod-a1b2c3.k8s.us-east-04a.coreweave.com/api": EOF'
)


def gone_pool(
    spec: dict[str, Any],
    policies: list[str] | None,
    synced: bool | None,
    generations: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """The observed Object of pool "p", which left spec.nodePools; policies None: 0.1.0's
    default ("*"); synced None: provider-kubernetes never reported on it; generations: the
    Object's, and the one its Synced condition was reported for."""
    body = observed_pool(spec, spec)
    if policies is not None:
        body["spec"]["managementPolicies"] = policies
    if synced is not None:
        extra: dict[str, Any] = {} if synced else {"message": NOT_ANSWERING}
        if generations is not None:
            body["metadata"] = {"generation": generations[0]}
            extra["observedGeneration"] = generations[1]
        body["status"]["conditions"] = [
            {"type": "Ready", "status": "True", "reason": "Available"},
            {
                "type": "Synced",
                "status": "True" if synced else "False",
                "reason": "ReconcileSuccess" if synced else "ReconcileError",
                **extra,
            },
        ]
    return body


def gone(
    policies: list[str] | None,
    synced: bool | None,
    generations: tuple[int, int] | None = None,
    spec: dict[str, Any] = P_SPEC,
) -> dict[str, dict[str, Any]]:
    """Observed: only the creator Object of pool "p", fixed unless spec says otherwise (see
    gone_pool)."""
    return {CREATOR: gone_pool(spec, policies, synced, generations)}


def autoscaled_gone(creator_policies: list[str]) -> dict[str, dict[str, Any]]:
    """Observed: both Objects of autoscaled pool "p", both answering."""
    return {
        CREATOR: gone_pool(P_CREATOR_SPEC, creator_policies, True),
        SETTINGS: gone_pool(P_SETTINGS_SPEC, expected.SETTINGS_POLICIES, True),
    }


Outcome = tuple[dict[str, Any], list[tuple[str, str]]]
# The pool's Objects dropped, which deletes it.
DROPPED: Outcome = ({}, [("Normal", expected.DELETING % "p")])


def re_applied(policies: list[str], spec: dict[str, Any] = P_SPEC) -> Outcome:
    """The creator applied with these policies, the user told the pool is on its way out."""
    return {CREATOR: p_object(spec, policies)}, [("Normal", expected.RETIRING % "p")]


def waiting(
    policies: list[str] = IN_CLUSTER,
    why: str = NOT_ANSWERING,
    spec: dict[str, Any] = P_SPEC,
) -> Outcome:
    """The creator applied with these policies (no Delete), the user told why it waits."""
    return {CREATOR: p_object(spec, policies)}, [("Warning", expected.WAITING % "p" + why)]


REMOVED_POOL_CASES: dict[str, tuple[dict[str, Any], Outcome]] = {
    "fixed-answering-re-applied-with-delete": (gone(IN_CLUSTER, True), re_applied(RETIRING_FIXED)),
    "fixed-with-delete-answering-dropped": (gone(RETIRING_FIXED, True), DROPPED),
    "fixed-not-answering-waits-without-delete": (gone(IN_CLUSTER, False), waiting()),
    "fixed-stopped-answering-delete-withdrawn": (gone(RETIRING_FIXED, False), waiting()),
    "fixed-with-delete-synced-on-its-generation-dropped": (
        gone(RETIRING_FIXED, True, generations=(4, 4)),
        DROPPED,
    ),
    "fixed-with-delete-synced-before-it-kept-until-reconciled": (
        gone(RETIRING_FIXED, True, generations=(4, 3)),
        re_applied(RETIRING_FIXED),
    ),
    "fixed-delete-withdrawn-not-yet-reconciled-waits": (
        gone(IN_CLUSTER, True, generations=(5, 4)),
        re_applied(IN_CLUSTER),
    ),
    "fixed-with-delete-refused-on-its-generation-withdrawn": (
        gone(RETIRING_FIXED, False, generations=(4, 4)),
        waiting(),
    ),
    "fixed-from-0.1.0-answering-dropped": (gone(None, True), DROPPED),
    "fixed-from-0.1.0-not-answering-loses-delete": (gone(None, False), waiting()),
    "fixed-never-reported-waits": (
        gone(IN_CLUSTER, None),
        waiting(why="provider-kubernetes has not reported on it yet"),
    ),
    "autoscaled-settings-dropped-creator-re-applied-with-delete": (
        autoscaled_gone(expected.CREATOR_POLICIES),
        re_applied(RETIRING_CREATOR, P_CREATOR_SPEC),
    ),
    "autoscaled-creator-with-delete-dropped": (autoscaled_gone(RETIRING_CREATOR), DROPPED),
    "autoscaled-creator-not-answering-delete-withdrawn": (
        gone(RETIRING_CREATOR, False, spec=P_CREATOR_SPEC),
        waiting(expected.CREATOR_POLICIES, spec=P_CREATOR_SPEC),
    ),
    "without-manifest-dropped": (
        {CREATOR: {"apiVersion": "kubernetes.m.crossplane.io/v1alpha1", "kind": "Object"}},
        DROPPED,
    ),
}


@pytest.mark.parametrize(
    ("observed", "outcome"), REMOVED_POOL_CASES.values(), ids=REMOVED_POOL_CASES.keys()
)
def test_a_removed_pool_is_deleted_only_through_an_answering_cluster(
    observed: dict[str, Any], outcome: Outcome
) -> None:
    want, told = outcome
    xr = coreweave_xr(nodePools=[pool(name="q")])
    rsp = run(request(xr, {**cluster_up(), **observed}, CREDENTIALS))
    composed = desired(rsp)
    assert objects_of_p(composed) == want
    assert readiness(rsp).get(CREATOR, True) is True, "a pool on its way out never holds Ready"
    assert [r for r in results(rsp) if 'node pool "p"' in r[1]] == told
    assert "nodepool-q" in composed, "the wanted pool is untouched"
