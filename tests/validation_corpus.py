"""Realistic objects of every kind the function composes, and a corpus of mistakes in them, with
the errors kube-apiserver answers a create of each with (fieldValidation=Strict).

tests/test_validator.py holds harness/validator.py to these answers, and
tests/e2e/test_server_validation.py holds the real kube-apiserver to the validator's on every case,
so a message here is the API server's, not an author's guess.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

NS = "ml-team"
NOT_CHECKED = (
    "<nil>: Invalid value: null: some validation rules were not checked because the object "
    "was invalid; correct the existing errors to complete validation"
)
KUBECONFIG_CREDENTIALS = {
    "source": "Secret",
    "secretRef": {"name": "kubeconfig", "namespace": NS, "key": "kubeconfig"},
}

VALID: dict[str, dict[str, Any]] = {
    "coreweave-vpc": {
        "apiVersion": "networking.coreweave.m.crossplane.io/v1alpha1",
        "kind": "VPC",
        "metadata": {"name": "inference-east-vpc", "namespace": NS},
        "spec": {
            "forProvider": {
                "name": "inference-east",
                "zone": "US-EAST-04A",
                "hostPrefixes": [
                    {"name": "primary", "type": "PRIMARY", "prefixes": ["10.16.192.0/18"]}
                ],
                "vpcPrefixes": [
                    {"name": "pods", "value": "10.0.0.0/13"},
                    {"name": "services", "value": "10.16.0.0/22"},
                    {"name": "internal-lb", "value": "10.32.4.0/22"},
                ],
                "dhcp": {"dns": {"servers": ["1.1.1.1", "8.8.8.8"]}},
            },
            "providerConfigRef": {"kind": "ClusterProviderConfig", "name": "coreweave"},
        },
    },
    "coreweave-cks-cluster": {
        "apiVersion": "cks.coreweave.m.crossplane.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": "inference-east", "namespace": NS},
        "spec": {
            "forProvider": {
                "name": "inference-east",
                "zone": "US-EAST-04A",
                "version": "v1.35",
                "public": True,
                "vpcIdRef": {"name": "inference-east-vpc"},
                "podCidrName": "pods",
                "serviceCidrName": "services",
                "internalLbCidrNames": ["internal-lb"],
                "nodePortRange": {"start": 30000, "end": 32767.0},
            },
            "managementPolicies": ["Observe", "Create", "Update", "Delete"],
            "providerConfigRef": {"kind": "ClusterProviderConfig", "name": "coreweave"},
        },
    },
    "civo-cluster": {
        "apiVersion": "kubernetes.civo.m.upbound.io/v1beta1",
        "kind": "Cluster",
        "metadata": {"name": "inference-lon", "namespace": NS},
        "spec": {
            "forProvider": {
                "name": "inference-lon",
                "region": "LON1",
                "cni": "flannel",
                "networkIdRef": {"name": "inference-lon-net"},
                "firewallIdSelector": {"matchControllerRef": True},
                "pools": {
                    "label": "system",
                    "size": "g4s.kube.medium",
                    "nodeCount": 2,
                    "labels": {"role": "system"},
                },
                "writeKubeconfig": True,
            },
            "writeConnectionSecretToRef": {"name": "inference-lon-kubeconfig"},
            "providerConfigRef": {"kind": "ProviderConfig", "name": "civo"},
        },
    },
    "civo-nodepool": {
        "apiVersion": "kubernetes.civo.m.upbound.io/v1beta1",
        "kind": "NodePool",
        "metadata": {"name": "inference-lon-l40s", "namespace": NS},
        "spec": {
            "forProvider": {
                "clusterIdRef": {"name": "inference-lon", "policy": {"resolve": "Always"}},
                "label": "l40s",
                "size": "an.g1.l40s.kube.x1",
                "region": "LON1",
                "taint": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
            },
            # The SDK's struct_to_dict hands every number back as a float.
            "initProvider": {"nodeCount": 1.0},
            "managementPolicies": ["Observe", "Create", "Update", "Delete"],
            "providerConfigRef": {"kind": "ProviderConfig", "name": "civo"},
        },
    },
    "kubernetes-object": {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "metadata": {"name": "inference-east-h100", "namespace": NS},
        "spec": {
            "forProvider": {
                "manifest": {
                    "apiVersion": "compute.coreweave.com/v1alpha1",
                    "kind": "NodePool",
                    "metadata": {"name": "h100"},
                    "spec": {"instanceType": "gd-8xh100ib-i128", "targetNodes": 2},
                }
            },
            "readiness": {
                "policy": "DeriveFromCelQuery",
                "celQuery": "object.status.currentNodes >= 1",
            },
            "providerConfigRef": {"kind": "ProviderConfig", "name": "inference-east"},
        },
    },
    "kubernetes-providerconfig": {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "ProviderConfig",
        "metadata": {"name": "inference-east", "namespace": NS},
        "spec": {"credentials": KUBECONFIG_CREDENTIALS},
    },
    "helm-release": {
        "apiVersion": "helm.m.crossplane.io/v1beta1",
        "kind": "Release",
        "metadata": {"name": "inference-lon-autoscaler", "namespace": NS},
        "spec": {
            "forProvider": {
                "chart": {
                    "name": "cluster-autoscaler",
                    "repository": "https://kubernetes.github.io/autoscaler",
                    "version": "9.54.0",
                },
                "namespace": "kube-system",
                "values": {
                    "cloudProvider": "civo",
                    "autoscalingGroups": [{"name": "l40s", "minSize": 1, "maxSize": 4}],
                },
            },
            "providerConfigRef": {"kind": "ProviderConfig", "name": "workload"},
        },
    },
    "helm-providerconfig": {
        "apiVersion": "helm.m.crossplane.io/v1beta1",
        "kind": "ProviderConfig",
        "metadata": {"name": "workload", "namespace": NS},
        "spec": {"credentials": KUBECONFIG_CREDENTIALS},
    },
    "usage": {
        "apiVersion": "protection.crossplane.io/v1beta1",
        "kind": "Usage",
        "metadata": {"name": "workload-in-use", "namespace": NS},
        "spec": {
            "of": {
                "apiVersion": "helm.m.crossplane.io/v1beta1",
                "kind": "ProviderConfig",
                "resourceRef": {"name": "workload"},
            },
            "by": {
                "apiVersion": "helm.m.crossplane.io/v1beta1",
                "kind": "Release",
                "resourceSelector": {"matchControllerRef": True},
            },
            "replayDeletion": True,
        },
    },
}

# The XRs as users write them: checked against the CRDs Crossplane derives from apis/*/definition.yaml.
VALID["coreweave-xr"] = yaml.safe_load((EXAMPLES / "coreweave" / "xr.yaml").read_text())
VALID["civo-xr"] = yaml.safe_load((EXAMPLES / "civo" / "xr.yaml").read_text())

DELETE = object()


def changed(name: str, *edits: tuple[str, Any]) -> dict[str, Any]:
    """A copy of VALID[name] with each dotted path set to a value, or removed with DELETE."""
    obj = copy.deepcopy(VALID[name])
    for path, value in edits:
        *parents, last = path.split(".")
        target = obj
        for part in parents:
            target = target.setdefault(part, {})
        if value is DELETE:
            del target[last]
        else:
            target[last] = value
    return obj


def wrong_type(path: str, expected: str, got: str) -> str:
    """The API server's error for a value of JSON type got where path's schema wants expected."""
    return f'{path}: Invalid value: "{got}": {path} in body must be of type {expected}: "{got}"'


@dataclass(frozen=True)
class Case:
    """An object to create and the errors the API server refuses it with ([]: accepted);
    `with_status` keeps its status and checks it as a status update does (a create drops it)."""

    obj: dict[str, Any]
    errors: list[str]
    id: str
    with_status: bool = False


# Each mistake by id: the object, and the errors its create gets.
MISTAKES: dict[str, tuple[dict[str, Any], list[str]]] = {
    # -- missing required fields
    "vpc-required-forProvider": (
        changed("coreweave-vpc", ("spec.forProvider", DELETE)),
        ["spec.forProvider: Required value", NOT_CHECKED],
    ),
    "release-required-chart": (
        changed("helm-release", ("spec.forProvider.chart", DELETE)),
        ["spec.forProvider.chart: Required value"],  # no CEL rules in this CRD
    ),
    "kubernetes-providerconfig-required-namespace": (
        changed("kubernetes-providerconfig", ("spec.credentials.secretRef.namespace", DELETE)),
        ["spec.credentials.secretRef.namespace: Required value"],
    ),
    "usage-required-of": (
        changed("usage", ("spec.of", DELETE)),
        ["spec.of: Required value", NOT_CHECKED],
    ),
    "object-embedded-resource-needs-kind": (
        changed("kubernetes-object", ("spec.forProvider.manifest.kind", DELETE)),
        ["spec.forProvider.manifest.kind: Required value", NOT_CHECKED],
    ),
    # A null is dropped before validation, exactly like an absent field.
    "civo-cluster-null-is-absent": (
        changed("civo-cluster", ("spec.forProvider", None)),
        ["spec.forProvider: Required value", NOT_CHECKED],
    ),
    # -- wrong types
    "nodepool-count-string": (
        changed("civo-nodepool", ("spec.initProvider.nodeCount", "1")),
        [wrong_type("spec.initProvider.nodeCount", "integer", "string"), NOT_CHECKED],
    ),
    "nodepool-count-fraction": (
        changed("civo-nodepool", ("spec.initProvider.nodeCount", 1.5)),
        [
            wrong_type("spec.initProvider.nodeCount", "int64", "float64"),
            '<nil>: Invalid value: "": Checked value must be of type integer with format '
            "int64 in spec.initProvider.nodeCount",
            NOT_CHECKED,
        ],
    ),
    "cks-public-string": (
        changed("coreweave-cks-cluster", ("spec.forProvider.public", "true")),
        [wrong_type("spec.forProvider.public", "boolean", "string"), NOT_CHECKED],
    ),
    "cks-bool-is-not-a-number": (
        changed("coreweave-cks-cluster", ("spec.forProvider.nodePortRange.start", True)),
        [wrong_type("spec.forProvider.nodePortRange.start", "number", "boolean"), NOT_CHECKED],
    ),
    "cks-list-as-string": (
        changed("coreweave-cks-cluster", ("spec.forProvider.internalLbCidrNames", "lb")),
        [wrong_type("spec.forProvider.internalLbCidrNames", "array", "string"), NOT_CHECKED],
    ),
    # Refused while decoding the body, before any validation.
    "metadata-not-an-object": (
        changed("helm-providerconfig", ("metadata", "workload")),
        ["json: cannot unmarshal string into Go value of type v1.ObjectMeta"],
    ),
    "metadata-name-not-a-string": (
        changed("helm-providerconfig", ("metadata.name", 7)),
        ["json: cannot unmarshal number into Go struct field ObjectMeta.name of type string"],
    ),
    # -- unknown fields
    "cks-unknown-nodePools": (
        changed("coreweave-cks-cluster", ("spec.forProvider.nodePools", [{"name": "h100"}])),
        ['unknown field "spec.forProvider.nodePools"'],
    ),
    "nodepool-typo": (
        changed("civo-nodepool", ("spec.forProvider.nodeCout", 2)),
        ['unknown field "spec.forProvider.nodeCout"'],
    ),
    "release-unknown-chart-field": (
        changed("helm-release", ("spec.forProvider.chart.repo", "https://example.com")),
        ['unknown field "spec.forProvider.chart.repo"'],
    ),
    "usage-unknown-status-field": (
        changed("usage", ("status", {"phase": "InUse"})),
        ['unknown field "status.phase"'],
    ),
    # -- enum violations
    "nodepool-management-policy": (
        changed("civo-nodepool", ("spec.managementPolicies", ["Observe", "Creat"])),
        [
            'spec.managementPolicies[1]: Unsupported value: "Creat": supported values: '
            '"Observe", "Create", "Update", "Delete", "LateInitialize", "*"',
            NOT_CHECKED,
        ],
    ),
    "helm-providerconfig-source": (
        changed("helm-providerconfig", ("spec.credentials.source", "Kubeconfig")),
        [
            'spec.credentials.source: Unsupported value: "Kubeconfig": supported values: '
            '"None", "Secret", "InjectedIdentity", "Environment", "Filesystem"'
        ],
    ),
    "object-readiness-policy": (
        changed("kubernetes-object", ("spec.readiness.policy", "Ready")),
        [
            'spec.readiness.policy: Unsupported value: "Ready": supported values: '
            '"SuccessfulCreate", "DeriveFromObject", "AllTrue", "DeriveFromCelQuery"',
            NOT_CHECKED,
        ],
    ),
    # -- other OpenAPI checks
    "release-digest-pattern": (
        changed("helm-release", ("spec.forProvider.chart.digest", "sha256:abc")),
        [
            'spec.forProvider.chart.digest: Invalid value: "sha256:abc": '
            "spec.forProvider.chart.digest in body should match '^sha256:[a-f0-9]{64}$'"
        ],
    ),
    "vpc-list-type-set": (
        changed("coreweave-vpc", ("spec.forProvider.dhcp.dns.servers", ["1.1.1.1"] * 3)),
        ['spec.forProvider.dhcp.dns.servers[1]: Duplicate value: "1.1.1.1"'],
    ),
    "providerconfig-list-type-map": (
        changed(
            "kubernetes-providerconfig",
            ("status", {"conditions": [{"type": "Ready"}, {"type": "Ready"}]}),
        ),
        [
            "status.conditions[0].lastTransitionTime: Required value",
            "status.conditions[0].reason: Required value",
            "status.conditions[0].status: Required value",
            "status.conditions[1].lastTransitionTime: Required value",
            "status.conditions[1].reason: Required value",
            "status.conditions[1].status: Required value",
            'status.conditions[1]: Duplicate value: {"type":"Ready"}',
        ],
    ),
    # -- CEL rules from the CRDs
    "cks-cel-zone-required-on-create": (
        changed("coreweave-cks-cluster", ("spec.forProvider.zone", DELETE)),
        ["spec: Invalid value: spec.forProvider.zone is a required parameter"],
    ),
    "cks-cel-zone-from-initProvider": (
        changed(
            "coreweave-cks-cluster",
            ("spec.forProvider.zone", DELETE),
            ("spec.initProvider", {"zone": "US-EAST-04A"}),
        ),
        [],
    ),
    "cks-cel-observe-only-needs-nothing": (
        changed(
            "coreweave-cks-cluster",
            ("spec.forProvider", {"vpcId": "a1b2"}),
            ("spec.managementPolicies", ["Observe"]),
        ),
        [],
    ),
    # managementPolicies defaults to ["*"] before the rules run.
    "vpc-cel-defaulted-policies": (
        changed(
            "coreweave-vpc",
            ("spec.forProvider.name", DELETE),
            ("spec.forProvider.zone", DELETE),
        ),
        [
            "spec: Invalid value: spec.forProvider.name is a required parameter",
            "spec: Invalid value: spec.forProvider.zone is a required parameter",
        ],
    ),
    "civo-cluster-cel-pools": (
        changed("civo-cluster", ("spec.forProvider.pools", DELETE)),
        ["spec: Invalid value: spec.forProvider.pools is a required parameter"],
    ),
    "nodepool-cel-size": (
        changed("civo-nodepool", ("spec.forProvider.size", DELETE)),
        ["spec: Invalid value: spec.forProvider.size is a required parameter"],
    ),
    "nodepool-cel-nodeCount": (
        changed("civo-nodepool", ("spec.initProvider", DELETE)),
        ["spec: Invalid value: spec.forProvider.nodeCount is a required parameter"],
    ),
    "usage-cel-by-or-reason": (
        changed("usage", ("spec.by", DELETE)),
        ['spec: Invalid value: either "spec.by" or "spec.reason" must be specified.'],
    ),
    "usage-cel-cross-namespace": (
        changed(
            "usage",
            ("spec.by", DELETE),
            ("spec.reason", "kubeconfig must outlive the release"),
            ("spec.of.resourceRef.namespace", "other-team"),
        ),
        [
            'spec: Invalid value: cross-namespace "spec.of" is not allowed without '
            '"spec.by" resource.'
        ],
    ),
    "usage-cel-by-ref-or-selector": (
        changed("usage", ("spec.by.resourceSelector", DELETE)),
        [
            "spec.by: Invalid value: either a resource reference or a resource selector "
            "should be set."
        ],
    ),
    # Kubernetes reports a rule that fails at runtime (here: no such key)
    # as an error, with the rule's message.
    "object-cel-runtime-no-such-key": (
        changed("kubernetes-object", ("spec.readiness.celQuery", DELETE)),
        [
            'spec.readiness: Invalid value: "object": no such key: celQuery evaluating '
            "rule: celQuery must be set if policy is DeriveFromCelQuery"
        ],
    ),
    "object-cel-empty-query": (
        changed("kubernetes-object", ("spec.readiness.celQuery", "")),
        ["spec.readiness: Invalid value: celQuery must be set if policy is DeriveFromCelQuery"],
    ),
    # -- XRs, against the CRDs Crossplane derives from our XRDs
    "xr-civo-required-region": (
        changed("civo-xr", ("spec.region", DELETE)),
        ["spec.region: Required value", NOT_CHECKED],
    ),
    "xr-coreweave-unknown-field": (
        changed("coreweave-xr", ("spec.zonee", "US-EAST-04A")),
        ['unknown field "spec.zonee"'],
    ),
    "xr-crossplane-field-added-by-crossplane": (
        changed("coreweave-xr", ("spec.crossplane", {"compositionRef": {"name": 5}})),
        [wrong_type("spec.crossplane.compositionRef.name", "string", "integer"), NOT_CHECKED],
    ),
}
CASES = [
    Case(obj, errors, id=case_id, with_status=case_id == "providerconfig-list-type-map")
    for case_id, (obj, errors) in MISTAKES.items()
]
