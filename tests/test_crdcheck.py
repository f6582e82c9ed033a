"""The offline CRD validator against the real provider and Crossplane CRDs in ../shared/crds:
realistic objects pass, and every kind of mistake is caught with the text the API server uses."""

from __future__ import annotations

import copy
import dataclasses
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import crdcheck
from tests.crdcheck import CrdCatalog, CrdError, default_catalog, shared_crds_dir

if shared_crds_dir() is None:
    pytest.skip("../shared/crds not found: CRD validation skipped", allow_module_level=True)

NS = "ml-team"
NOT_CHECKED = (
    '<nil>: Invalid value: "null": some validation rules were not checked because the object '
    "was invalid; correct the existing errors to complete validation"
)
HELM_PC = {"kind": "ProviderConfig", "name": "workload"}

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
        "spec": {
            "credentials": {
                "source": "Secret",
                "secretRef": {"name": "kubeconfig", "namespace": NS, "key": "kubeconfig"},
            }
        },
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
            "providerConfigRef": HELM_PC,
        },
    },
    "helm-providerconfig": {
        "apiVersion": "helm.m.crossplane.io/v1beta1",
        "kind": "ProviderConfig",
        "metadata": {"name": "workload", "namespace": NS},
        "spec": {
            "credentials": {
                "source": "Secret",
                "secretRef": {"name": "kubeconfig", "namespace": NS, "key": "kubeconfig"},
            }
        },
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


@pytest.fixture(scope="module")
def catalog() -> CrdCatalog:
    return default_catalog()


@pytest.mark.parametrize("name", sorted(VALID))
def test_realistic_objects_pass(catalog: CrdCatalog, name: str) -> None:
    assert catalog.has_schema(VALID[name]["apiVersion"], VALID[name]["kind"])
    assert catalog.validate(VALID[name]) == []


@pytest.mark.parametrize(
    ("obj", "errors"),
    [
        # -- missing required fields
        pytest.param(
            changed("coreweave-vpc", ("spec.forProvider", DELETE)),
            ["spec.forProvider: Required value", NOT_CHECKED],
            id="vpc-required-forProvider",
        ),
        pytest.param(
            changed("helm-release", ("spec.forProvider.chart", DELETE)),
            ["spec.forProvider.chart: Required value"],  # no CEL rules in this CRD
            id="release-required-chart",
        ),
        pytest.param(
            changed("kubernetes-providerconfig", ("spec.credentials.secretRef.namespace", DELETE)),
            ["spec.credentials.secretRef.namespace: Required value"],
            id="kubernetes-providerconfig-required-namespace",
        ),
        pytest.param(
            changed("usage", ("spec.of", DELETE)),
            ["spec.of: Required value", NOT_CHECKED],
            id="usage-required-of",
        ),
        pytest.param(
            changed("kubernetes-object", ("spec.forProvider.manifest.kind", DELETE)),
            ["spec.forProvider.manifest.kind: Required value", NOT_CHECKED],
            id="object-embedded-resource-needs-kind",
        ),
        pytest.param(
            # A null is dropped before validation, exactly like an absent field.
            changed("civo-cluster", ("spec.forProvider", None)),
            ["spec.forProvider: Required value", NOT_CHECKED],
            id="civo-cluster-null-is-absent",
        ),
        # -- wrong types
        pytest.param(
            changed("civo-nodepool", ("spec.initProvider.nodeCount", "1")),
            [
                'spec.initProvider.nodeCount: Invalid value: "string": '
                'spec.initProvider.nodeCount in body must be of type integer: "string"',
                NOT_CHECKED,
            ],
            id="nodepool-count-string",
        ),
        pytest.param(
            changed("civo-nodepool", ("spec.initProvider.nodeCount", 1.5)),
            [
                'spec.initProvider.nodeCount: Invalid value: "number": '
                'spec.initProvider.nodeCount in body must be of type integer: "number"',
                NOT_CHECKED,
            ],
            id="nodepool-count-fraction",
        ),
        pytest.param(
            changed("coreweave-cks-cluster", ("spec.forProvider.public", "true")),
            [
                'spec.forProvider.public: Invalid value: "string": '
                'spec.forProvider.public in body must be of type boolean: "string"',
                NOT_CHECKED,
            ],
            id="cks-public-string",
        ),
        pytest.param(
            changed("coreweave-cks-cluster", ("spec.forProvider.nodePortRange.start", True)),
            [
                'spec.forProvider.nodePortRange.start: Invalid value: "boolean": '
                'spec.forProvider.nodePortRange.start in body must be of type number: "boolean"',
                NOT_CHECKED,
            ],
            id="cks-bool-is-not-a-number",
        ),
        pytest.param(
            changed("coreweave-cks-cluster", ("spec.forProvider.internalLbCidrNames", "lb")),
            [
                'spec.forProvider.internalLbCidrNames: Invalid value: "string": '
                'spec.forProvider.internalLbCidrNames in body must be of type array: "string"',
                NOT_CHECKED,
            ],
            id="cks-list-as-string",
        ),
        pytest.param(
            changed("helm-providerconfig", ("metadata", "workload")),
            [
                'metadata: Invalid value: "string": metadata in body must be of type object: "string"'
            ],
            id="metadata-not-an-object",
        ),
        pytest.param(
            changed("helm-providerconfig", ("metadata.name", 7)),
            [
                'metadata.name: Invalid value: "integer": '
                'metadata.name in body must be of type string: "integer"'
            ],
            id="metadata-name-not-a-string",
        ),
        # -- unknown fields
        pytest.param(
            changed("coreweave-cks-cluster", ("spec.forProvider.nodePools", [{"name": "h100"}])),
            ["spec.forProvider.nodePools: unknown field"],
            id="cks-unknown-nodePools",
        ),
        pytest.param(
            changed("civo-nodepool", ("spec.forProvider.nodeCout", 2)),
            ["spec.forProvider.nodeCout: unknown field"],
            id="nodepool-typo",
        ),
        pytest.param(
            changed("helm-release", ("spec.forProvider.chart.repo", "https://example.com")),
            ["spec.forProvider.chart.repo: unknown field"],
            id="release-unknown-chart-field",
        ),
        pytest.param(
            changed("usage", ("status", {"phase": "InUse"})),
            ["status.phase: unknown field"],
            id="usage-unknown-status-field",
        ),
        # -- enum violations
        pytest.param(
            changed("civo-nodepool", ("spec.managementPolicies", ["Observe", "Creat"])),
            [
                'spec.managementPolicies[1]: Unsupported value: "Creat": supported values: '
                '"Observe", "Create", "Update", "Delete", "LateInitialize", "*"',
                NOT_CHECKED,
            ],
            id="nodepool-management-policy",
        ),
        pytest.param(
            changed("helm-providerconfig", ("spec.credentials.source", "Kubeconfig")),
            [
                'spec.credentials.source: Unsupported value: "Kubeconfig": supported values: '
                '"None", "Secret", "InjectedIdentity", "Environment", "Filesystem"'
            ],
            id="helm-providerconfig-source",
        ),
        pytest.param(
            changed("kubernetes-object", ("spec.readiness.policy", "Ready")),
            [
                'spec.readiness.policy: Unsupported value: "Ready": supported values: '
                '"SuccessfulCreate", "DeriveFromObject", "AllTrue", "DeriveFromCelQuery"',
                NOT_CHECKED,
            ],
            id="object-readiness-policy",
        ),
        # -- other OpenAPI checks
        pytest.param(
            changed("helm-release", ("spec.forProvider.chart.digest", "sha256:abc")),
            [
                'spec.forProvider.chart.digest: Invalid value: "sha256:abc": '
                "spec.forProvider.chart.digest in body should match '^sha256:[a-f0-9]{64}$'"
            ],
            id="release-digest-pattern",
        ),
        pytest.param(
            changed("coreweave-vpc", ("spec.forProvider.dhcp.dns.servers", ["1.1.1.1"] * 3)),
            ['spec.forProvider.dhcp.dns.servers[1]: Duplicate value: "1.1.1.1"'],
            id="vpc-list-type-set",
        ),
        pytest.param(
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
                'status.conditions[1]: Duplicate value: map[string]interface {}{"type":"Ready"}',
            ],
            id="providerconfig-list-type-map",
        ),
        # -- CEL rules from the CRDs
        pytest.param(
            changed("coreweave-cks-cluster", ("spec.forProvider.zone", DELETE)),
            ["spec: Invalid value: spec.forProvider.zone is a required parameter"],
            id="cks-cel-zone-required-on-create",
        ),
        pytest.param(
            changed(
                "coreweave-cks-cluster",
                ("spec.forProvider.zone", DELETE),
                ("spec.initProvider", {"zone": "US-EAST-04A"}),
            ),
            [],
            id="cks-cel-zone-from-initProvider",
        ),
        pytest.param(
            changed(
                "coreweave-cks-cluster",
                ("spec.forProvider", {"vpcId": "a1b2"}),
                ("spec.managementPolicies", ["Observe"]),
            ),
            [],
            id="cks-cel-observe-only-needs-nothing",
        ),
        pytest.param(
            # managementPolicies defaults to ["*"] before the rules run.
            changed(
                "coreweave-vpc",
                ("spec.forProvider.name", DELETE),
                ("spec.forProvider.zone", DELETE),
            ),
            [
                "spec: Invalid value: spec.forProvider.name is a required parameter",
                "spec: Invalid value: spec.forProvider.zone is a required parameter",
            ],
            id="vpc-cel-defaulted-policies",
        ),
        pytest.param(
            changed("civo-cluster", ("spec.forProvider.pools", DELETE)),
            ["spec: Invalid value: spec.forProvider.pools is a required parameter"],
            id="civo-cluster-cel-pools",
        ),
        pytest.param(
            changed("civo-nodepool", ("spec.forProvider.size", DELETE)),
            ["spec: Invalid value: spec.forProvider.size is a required parameter"],
            id="nodepool-cel-size",
        ),
        pytest.param(
            changed("civo-nodepool", ("spec.initProvider", DELETE)),
            ["spec: Invalid value: spec.forProvider.nodeCount is a required parameter"],
            id="nodepool-cel-nodeCount",
        ),
        pytest.param(
            changed("usage", ("spec.by", DELETE)),
            ['spec: Invalid value: either "spec.by" or "spec.reason" must be specified.'],
            id="usage-cel-by-or-reason",
        ),
        pytest.param(
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
            id="usage-cel-cross-namespace",
        ),
        pytest.param(
            changed("usage", ("spec.by.resourceSelector", DELETE)),
            [
                "spec.by: Invalid value: either a resource reference or a resource selector "
                "should be set."
            ],
            id="usage-cel-by-ref-or-selector",
        ),
        pytest.param(
            # Kubernetes reports a rule that fails at runtime (here: no such key)
            # as an error, with the rule's message.
            changed("kubernetes-object", ("spec.readiness.celQuery", DELETE)),
            [
                'spec.readiness: Invalid value: "object": no such key: celQuery evaluating '
                "rule: celQuery must be set if policy is DeriveFromCelQuery"
            ],
            id="object-cel-runtime-no-such-key",
        ),
        pytest.param(
            changed("kubernetes-object", ("spec.readiness.celQuery", "")),
            ["spec.readiness: Invalid value: celQuery must be set if policy is DeriveFromCelQuery"],
            id="object-cel-empty-query",
        ),
    ],
)
def test_mistakes_are_caught(catalog: CrdCatalog, obj: dict[str, Any], errors: list[str]) -> None:
    assert catalog.validate(obj) == errors


def test_validate_does_not_modify_its_input(catalog: CrdCatalog) -> None:
    obj = changed("coreweave-vpc", ("spec.bogus", 1))
    before = copy.deepcopy(obj)
    catalog.validate(obj)
    assert obj == before


def test_kinds_without_a_crd(catalog: CrdCatalog) -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}
    assert not catalog.has_schema("v1", "Secret")
    assert catalog.validate(secret) == ["no schema for v1/Secret"]
    wrong_version = {**VALID["usage"], "apiVersion": "protection.crossplane.io/v1"}
    assert catalog.validate(wrong_version) == ["no schema for protection.crossplane.io/v1/Usage"]


# --------------------------------------------------------------------------
# Every CEL rule in ../shared/crds, evaluated at the schema node it is attached to


def upjet_cases(field: str) -> list[tuple[dict[str, Any], bool]]:
    """Upjet's "required parameter" rule for one field."""
    return [
        ({"managementPolicies": ["*"], "forProvider": {field: "x"}}, True),
        ({"managementPolicies": ["Create"], "forProvider": {}, "initProvider": {field: "x"}}, True),
        ({"managementPolicies": ["Observe", "Delete"], "forProvider": {}}, True),
        ({"managementPolicies": ["Update"], "forProvider": {}, "initProvider": {}}, False),
        ({"managementPolicies": ["*"], "forProvider": {}}, False),
    ]


UPJET_FIELDS = [
    "internalLbCidrNames",
    "label",
    "name",
    "nodeCount",
    "podCidrName",
    "pools",
    "serviceCidrName",
    "size",
    "version",
    "zone",
]

# rule text -> [(self, passes)]; `self` is raw JSON, converted through the schema
# node the rule sits on (so escaping such as __namespace__ is exercised too).
RULE_CASES: dict[str, list[tuple[Any, bool]]] = {
    **{
        "!('*' in self.managementPolicies || 'Create' in self.managementPolicies || "
        "'Update' in self.managementPolicies) || has(self.forProvider."
        f"{field}) || (has(self.initProvider) && has(self.initProvider.{field}))": upjet_cases(
            field
        )
        for field in UPJET_FIELDS
    },
    "duration(self) >= duration('1s')": [("1s", True), ("1m30s", True), ("500ms", False)],
    "duration(self) >= duration('60s')": [("1m", True), ("1h", True), ("59.9s", False)],
    "!has(self.maxDelay) || !has(self.baseDelay) || duration(self.maxDelay) >= "
    "duration(self.baseDelay)": [
        ({"baseDelay": "1s"}, True),
        ({"baseDelay": "2s", "maxDelay": "2m"}, True),
        ({"baseDelay": "3m", "maxDelay": "2m"}, False),
    ],
    "!has(self.exponentialFailureRateLimiter) || !has(self.exponentialFailureRateLimiter."
    "baseDelay) || has(self.exponentialFailureRateLimiter.maxDelay) || duration(self."
    "exponentialFailureRateLimiter.baseDelay) <= duration('60s')": [
        ({}, True),
        ({"exponentialFailureRateLimiter": {"baseDelay": "60s"}}, True),
        ({"exponentialFailureRateLimiter": {"baseDelay": "5m", "maxDelay": "10m"}}, True),
        ({"exponentialFailureRateLimiter": {"baseDelay": "61s"}}, False),
    ],
    "self.scope == 'LegacyCluster' || !has(self.claimNames)": [
        ({"scope": "LegacyCluster", "claimNames": {}}, True),
        ({"scope": "Namespaced"}, True),
        ({"scope": "Namespaced", "claimNames": {}}, False),
    ],
    "self.scope == 'LegacyCluster' || !has(self.connectionSecretKeys)": [
        ({"scope": "LegacyCluster", "connectionSecretKeys": ["kubeconfig"]}, True),
        ({"scope": "Cluster", "connectionSecretKeys": ["kubeconfig"]}, False),
    ],
    "self.plural == self.plural.lowerAscii()": [
        ({"plural": "coreweaveclusters"}, True),
        ({"plural": "CoreWeaveClusters"}, False),
    ],
    "!has(self.singular) || self.singular == self.singular.lowerAscii()": [
        ({"plural": "xs"}, True),
        ({"plural": "xs", "singular": "x"}, True),
        ({"plural": "xs", "singular": "X"}, False),
    ],
    "self.strategy == 'Webhook' && has(self.webhook)": [
        ({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"]}}, True),
        ({"strategy": "Webhook"}, False),
        ({"strategy": "None"}, False),
    ],
    "!has(self.claimNames)": [({}, True), ({"claimNames": {"kind": "C"}}, False)],
    "!has(self.connectionSecretKeys)": [({}, True), ({"connectionSecretKeys": []}, False)],
    "self.mode == 'Pipeline' && has(self.pipeline)": [
        ({"mode": "Pipeline", "pipeline": []}, True),
        ({"mode": "Pipeline"}, False),
    ],
    "self.source == 'Secret' && has(self.secretRef)": [
        ({"source": "Secret", "secretRef": {"name": "s"}}, True),
        ({"source": "Secret"}, False),
    ],
    "!(has(self.name) && has(self.matchLabels))": [
        ({"name": "a"}, True),
        ({"matchLabels": {"a": "b"}}, True),
        ({"name": "a", "matchLabels": {"a": "b"}}, False),
    ],
    "self.matches('^[^\\\\.\\\\/]+(\\\\.[^\\\\.\\\\/]+)+(\\\\/[^\\\\/:@]+)+(:[^:@]+"
    "(@sha256.+)?|@sha256.+)$')": [
        ("xpkg.crossplane.io/crossplane-contrib/function-kcl:v0.11.0", True),
        ("registry.example.com/repo/package@sha256:0123abcd", True),
        ("crossplane-contrib/function-kcl:v0.11.0", False),
        ("xpkg.crossplane.io/crossplane-contrib/function-kcl", False),
    ],
    "has(self.by) || has(self.reason)": [
        ({"of": {}, "reason": "kept"}, True),
        ({"of": {}, "by": {}}, True),
        ({"of": {}}, False),
    ],
    "has(self.by) || (!has(self.of.resourceRef) || !has(self.of.resourceRef.__namespace__)) "
    "&& (!has(self.of.resourceSelector) || !has(self.of.resourceSelector.__namespace__))": [
        ({"of": {"resourceRef": {"name": "a"}}}, True),
        ({"of": {"resourceRef": {"name": "a", "namespace": "b"}}, "by": {}}, True),
        ({"of": {"resourceRef": {"name": "a", "namespace": "b"}}}, False),
        ({"of": {"resourceSelector": {"namespace": "b"}}}, False),
    ],
    "has(self.resourceRef) || has(self.resourceSelector)": [
        ({"resourceRef": {"name": "a"}}, True),
        ({"resourceSelector": {}}, True),
        ({"apiVersion": "v1", "kind": "Secret"}, False),
    ],
    "self.policy != 'DeriveFromCelQuery' || (self.policy == 'DeriveFromCelQuery' && "
    "size(self.celQuery) > 0)": [
        ({"policy": "SuccessfulCreate"}, True),
        ({"policy": "DeriveFromCelQuery", "celQuery": "true"}, True),
        ({"policy": "DeriveFromCelQuery", "celQuery": ""}, False),
    ],
}


@dataclasses.dataclass(frozen=True)
class RuleSite:
    where: str
    path: str
    node: Any
    rule: Any


def rule_sites(catalog: CrdCatalog) -> Iterator[RuleSite]:
    for (group, version, kind), entry in catalog._versions.items():
        stack: list[tuple[str, Any]] = [("", entry.root)]
        while stack:
            path, node = stack.pop()
            for rule in node.rules:
                yield RuleSite(f"{group}/{version} {kind}", path, node, rule)
            stack.extend((crdcheck._child(path, k), n) for k, n in node.properties.items())
            if node.items is not None:
                stack.append((path + "[0]", node.items))
            if node.additional is not None:
                stack.append((path + "[key]", node.additional))


def shared_rule_texts() -> set[str]:
    """Every x-kubernetes-validations rule in the YAML itself, independent of the loader."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for rule in value.get("x-kubernetes-validations") or []:
                found.add(rule["rule"])
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    directory = shared_crds_dir()
    assert directory is not None
    for path in sorted(directory.rglob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            walk(document)
    return found


def test_every_rule_in_the_shared_crds_is_covered(catalog: CrdCatalog) -> None:
    texts = shared_rule_texts()
    loaded = {site.rule.rule for site in rule_sites(catalog)}
    transition = {t for t in texts if "oldSelf" in t}
    assert transition == {"self == oldSelf"}
    assert loaded == texts
    assert texts - transition == set(RULE_CASES)
    for site in rule_sites(catalog):
        assert (site.rule.program is None) == (site.rule.rule in transition), site


@pytest.mark.parametrize("text", sorted(RULE_CASES))
def test_every_rule_evaluates_like_kubernetes(catalog: CrdCatalog, text: str) -> None:
    sites = [s for s in rule_sites(catalog) if s.rule.rule == text]
    assert sites, "rule not found in the shared CRDs"
    assert {passes for _, passes in RULE_CASES[text]} == {True, False}
    for site in sites:
        node = dataclasses.replace(site.node, rules=(site.rule,))
        for value, passes in RULE_CASES[text]:
            run = crdcheck._Validation()
            run._run_rules(node, value, site.path, resource_root=False)
            errors = [str(e) for e in run.cel]
            if passes:
                assert errors == [], (site.where, site.path, value)
            else:
                assert len(errors) == 1, (site.where, site.path, value, errors)
                assert site.rule.message in errors[0], (site.where, errors)
                assert "evaluating rule" not in errors[0], (site.where, errors)


# --------------------------------------------------------------------------
# CEL semantics that differ between cel-python and Kubernetes


CEL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "properties": {
                "namespace": {"type": "string"},
                "dotted.name": {"type": "string"},
                "ratio": {"type": "number"},
                "count": {"type": "integer"},
                "port": {"x-kubernetes-int-or-string": True},
                "timeout": {"type": "string", "format": "duration"},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "ref": {"type": "object", "properties": {"name": {"type": "string"}}},
                "items": {"type": "array", "items": {"type": "string"}},
            },
        },
    },
}


def cel_catalog(tmp_path: Path, *rules: dict[str, Any]) -> CrdCatalog:
    schema = copy.deepcopy(CEL_SCHEMA)
    schema["properties"]["spec"]["x-kubernetes-validations"] = list(rules)
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.org"},
        "spec": {
            "group": "example.org",
            "names": {"kind": "Widget", "plural": "widgets"},
            "scope": "Namespaced",
            "versions": [
                {"name": "v1", "served": True, "schema": {"openAPIV3Schema": schema}},
            ],
        },
    }
    path = tmp_path / "crd.yaml"
    path.write_text(yaml.safe_dump(crd))
    return CrdCatalog.load(path)


def widget(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.org/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": spec,
    }


@pytest.mark.parametrize(
    ("rule", "spec", "errors"),
    [
        # has() on an absent parent is an error in CEL (celpy would say false).
        (
            "!has(self.ref.name)",
            {},
            [
                'spec: Invalid value: "object": no such key: ref evaluating rule: !has(self.ref.name)'
            ],
        ),
        ("has(self.ref.name)", {"ref": {"name": "a"}}, []),
        # Reserved words and special characters are escaped.
        ("self.__namespace__ == 'ns'", {"namespace": "ns"}, []),
        ("self.dotted__dot__name == 'x'", {"dotted.name": "x"}, []),
        # Maps from additionalProperties are plain maps: no escaping, index access.
        (
            "self.labels['app.kubernetes.io/name'] == 'x'",
            {"labels": {"app.kubernetes.io/name": "x"}},
            [],
        ),
        ("'team' in self.labels", {"labels": {"team": "a"}}, []),
        # number is always a double; cross-type numeric comparison and equality.
        ("self.ratio == 1 && self.ratio < 2 && self.count > 0.5", {"ratio": 1, "count": 1}, []),
        ("self.port == 80 || self.port == 'http'", {"port": "http"}, []),
        ("self.port == 80 || self.port == 'http'", {"port": 80.0}, []),
        # format: duration values are durations, Go duration syntax.
        ("self.timeout > duration('1m30s')", {"timeout": "2m"}, []),
        ("duration('1500ms') < duration('1.6s') && duration('1µs') > duration('0')", {}, []),
        (
            "duration('1d') > duration('0s')",
            {},
            [
                'spec: Invalid value: "object": time: invalid duration "1d" evaluating rule: '
                "duration('1d') > duration('0s')"
            ],
        ),
        # Kubernetes string and list extensions.
        (
            "'A-b'.lowerAscii() == 'a-b' && 'a'.upperAscii() == 'A' && ' x '.trim() == 'x' && "
            "'a,b'.split(',') == ['a', 'b'] && ['a', 'b'].join('-') == 'a-b' && "
            "'abc'.indexOf('c') == 2 && 'abca'.lastIndexOf('a') == 3 && "
            "'abc'.substring(1) == 'bc' && 'abc'.charAt(1) == 'b' && "
            "'aXbX'.replace('X', '-') == 'a-b-' && 'a1b22'.find('[0-9]+') == '1' && "
            "'a1b22'.findAll('[0-9]+') == ['1', '22'] && [1, 2].isSorted() && [1, 2].sum() == 3",
            {},
            [],
        ),
        (
            "self.items.all(i, i.startsWith('a')) && self.items.exists_one(i, i.endsWith('2')) "
            "&& self.items.map(i, i + '!').exists(i, i.contains('!')) "
            "&& size(self.items.filter(i, i.matches('^a[0-9]$'))) == 2",
            {"items": ["a1", "a2"]},
            [],
        ),
        # messageExpression, fieldPath and reason.
        (
            {
                "rule": "self.count < 3",
                "messageExpression": "'count ' + string(self.count) + ' is too high'",
                "fieldPath": ".count",
                "reason": "FieldValueForbidden",
            },
            {"count": 5},
            ["spec.count: Forbidden: count 5 is too high"],
        ),
        (
            {"rule": "self.count < 3"},
            {"count": 5},
            ["spec: Invalid value: failed rule: self.count < 3"],
        ),
        # Transition rules never run on create.
        ("self == oldSelf", {"count": 5}, []),
    ],
)
def test_kubernetes_cel_semantics(
    tmp_path: Path, rule: str | dict[str, Any], spec: dict[str, Any], errors: list[str]
) -> None:
    entry = {"rule": rule} if isinstance(rule, str) else rule
    assert cel_catalog(tmp_path, entry).validate(widget(**spec)) == errors


@pytest.mark.parametrize(
    ("rule", "problem"),
    [
        ("self.count <", "does not compile"),
        ("quantity(self.size) > 1", "undeclared function 'quantity'"),
        ("self.name.reverse() == 'x'", "undeclared function 'reverse'"),
        ("object.spec.count > 1", "undeclared reference to 'object'"),
        ("has(self)", "invalid argument to has() macro"),
        ("self.items.reduce(a, b, a + b) > 1", "undeclared function 'reduce'"),
    ],
)
def test_rules_that_do_not_compile_raise(tmp_path: Path, rule: str, problem: str) -> None:
    with pytest.raises(CrdError, match=re.escape(problem)):
        cel_catalog(tmp_path, {"rule": rule})


# --------------------------------------------------------------------------
# Crossplane XRDs


XRD = {
    "apiVersion": "apiextensions.crossplane.io/v2",
    "kind": "CompositeResourceDefinition",
    "metadata": {"name": "gadgets.example.org"},
    "spec": {
        "group": "example.org",
        "names": {"kind": "Gadget", "plural": "gadgets"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1alpha1",
                "served": True,
                "referenceable": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "required": ["zone"],
                                "properties": {
                                    "zone": {"type": "string", "enum": ["east", "west"]},
                                    "nodes": {"type": "integer", "minimum": 1, "default": 1},
                                },
                                "x-kubernetes-validations": [
                                    {"rule": "self.nodes <= 8", "message": "at most 8 nodes"}
                                ],
                            },
                            "status": {
                                "type": "object",
                                "properties": {"endpoint": {"type": "string"}},
                            },
                        },
                    }
                },
            }
        ],
    },
}


def gadget(**edits: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "example.org/v1alpha1",
        "kind": "Gadget",
        "metadata": {"name": "g", "namespace": NS, "labels": {"team": "ml"}},
        "spec": {
            "zone": "east",
            "crossplane": {
                "compositionRef": {"name": "gadgets"},
                "resourceRefs": [{"apiVersion": "v1", "kind": "Secret", "name": "s"}],
            },
        },
        "status": {
            "endpoint": "https://gadget.example.org",
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "Available",
                    "lastTransitionTime": "2025-01-02T03:04:05Z",
                }
            ],
        },
    }
    obj.update(edits)
    return obj


@pytest.fixture
def xrd_catalog(tmp_path: Path) -> CrdCatalog:
    (tmp_path / "xrds").mkdir()
    (tmp_path / "xrds" / "gadget.yaml").write_text(yaml.safe_dump(XRD))
    return CrdCatalog.load(tmp_path / "xrds")


@pytest.mark.parametrize(
    ("obj", "errors"),
    [
        (gadget(), []),
        (
            gadget(spec={"zone": "north"}),
            [
                'spec.zone: Unsupported value: "north": supported values: "east", "west"',
                NOT_CHECKED,
            ],
        ),
        (gadget(spec={}), ["spec.zone: Required value", NOT_CHECKED]),
        (gadget(spec={"zone": "east", "nodes": 9}), ["spec: Invalid value: at most 8 nodes"]),
        (
            gadget(spec={"zone": "east", "nodes": 0}),
            [
                "spec.nodes: Invalid value: 0: spec.nodes in body should be greater than or equal to 1"
            ],
        ),
        (
            gadget(spec={"zone": "east", "compositionRef": {"name": "x"}}),
            ["spec.compositionRef: unknown field"],
        ),
        (gadget(status={"phase": "Ready"}), ["status.phase: unknown field"]),
        (
            gadget(
                status={
                    "conditions": [
                        {
                            "type": "Ready",
                            "status": "True",
                            "reason": "R",
                            "lastTransitionTime": "yesterday",
                        }
                    ]
                }
            ),
            [
                'status.conditions[0].lastTransitionTime: Invalid value: "yesterday": '
                'status.conditions[0].lastTransitionTime in body must be of type date-time: "yesterday"',
                NOT_CHECKED,
            ],
        ),
        (
            gadget(metadata={"name": "g" * 64}),
            [
                "metadata.name: Too long: may not be longer than 63",
                NOT_CHECKED,
            ],
        ),
    ],
)
def test_xrd_becomes_the_xr_schema(
    xrd_catalog: CrdCatalog, obj: dict[str, Any], errors: list[str]
) -> None:
    assert xrd_catalog.validate(obj) == errors


def test_extra_definitions_load_alongside_the_shared_ones(tmp_path: Path) -> None:
    xrd_file = tmp_path / "gadget.yaml"
    xrd_file.write_text(yaml.safe_dump(XRD))
    directory = shared_crds_dir()
    assert directory is not None
    both = CrdCatalog.load(directory, xrd_file)
    assert both.has_schema("example.org/v1alpha1", "Gadget")
    assert both.validate(VALID["usage"]) == []
    assert both.validate(gadget()) == []


# --------------------------------------------------------------------------
# Locating the folder, caching, speed


def test_shared_crds_dir_honours_the_override(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHARED_CRDS_DIR", str(tmp_path))
    assert shared_crds_dir() == tmp_path
    monkeypatch.setenv("SHARED_CRDS_DIR", str(tmp_path / "missing"))
    assert shared_crds_dir() is None
    monkeypatch.delenv("SHARED_CRDS_DIR")
    beside_repo = Path(crdcheck.__file__).resolve().parents[2] / "shared" / "crds"
    assert shared_crds_dir() == (beside_repo if beside_repo.is_dir() else None)


def test_default_catalog_is_loaded_once() -> None:
    assert default_catalog() is default_catalog()


def test_validation_is_fast_once_loaded(catalog: CrdCatalog) -> None:
    objects = [*VALID.values(), *VALID.values(), changed("usage", ("spec.by", DELETE))]
    start = time.perf_counter()
    for obj in objects[:20]:
        catalog.validate(obj)
    assert time.perf_counter() - start < 1.0
