"""docs/rbac.md, applied as written, grants what it says: proven with Crossplane's own RBAC
manager and the API server's authorizer.

On a control plane with the XRDs installed, `crossplane rbac start` (the RBAC manager the
Crossplane Helm chart deploys, from the same build as the engine) makes its ClusterRoles for
each XR kind; the page's RoleBinding and Role are applied from its YAML blocks as they are, and
SubjectAccessReviews ask the API server (RBAC authorization) what each subject may do.

The RBAC manager serves controller-runtime's metrics on :8080 with no flag to move them, where
provider-kubernetes listens in every suite (harness/e2e/shards.py), so this runs on a control
plane without providers (`bare_plane`), in the install shard between the others' control planes,
on Crossplane v2.4.0 (the RBAC manager's roles are the same from v2.1 to v2.4).
"""

from __future__ import annotations

import functools
import re
from typing import Any

import yaml

from harness.e2e import kinds
from harness.e2e.binaries import REPO
from harness.e2e.controlplane import ControlPlane
from harness.e2e.kube import wait_for
from harness.e2e.scene import apply_documents, wait_established

RBAC_PAGE = REPO / "docs" / "rbac.md"
XR_GROUP = "infrastructure.modelplane.ai"
# The namespace the page's examples are written for.
TEAM_NAMESPACE = "ml-team"
OTHER_NAMESPACE = "platform"
# A member of the group the page's RoleBinding names, and a consumer bound to its Role.
TEAM_MEMBER = {"user": "alice@example.com", "groups": ["inference-platform"]}
READER = "inference-cluster-reader"
CONSUMER = "system:serviceaccount:ml-team:inference-cluster-reader"
# The RBAC manager makes a XRD's roles within seconds; this is for a loaded machine.
ROLES_SECONDS = 120
ROLE_VERBS = {
    "aggregate-to-edit": ["*"],
    "aggregate-to-view": ["get", "list", "watch"],
    "aggregate-to-browse": ["get", "list", "watch"],
}


def allowed(plane: ControlPlane, subject: dict[str, Any], attributes: dict[str, str]) -> bool:
    review = plane.api.create(
        kinds.SUBJECT_ACCESS_REVIEW,
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "metadata": {},
            "spec": {**subject, "resourceAttributes": attributes},
        },
    )
    return bool(review["status"].get("allowed"))


def xr(verb: str, plural: str, namespace: str) -> dict[str, str]:
    return {"group": XR_GROUP, "resource": plural, "verb": verb, "namespace": namespace}


def secret(verb: str, namespace: str, name: str = "") -> dict[str, str]:
    return {"group": "", "resource": "secrets", "verb": verb, "namespace": namespace, "name": name}


def test_the_rbac_page_grants_what_it_says(bare_plane: ControlPlane) -> None:
    plane = bare_plane
    for definition in sorted((REPO / "apis").glob("*/definition.yaml")):
        apply_documents(plane, definition)
    plane.processes.start(
        "crossplane-rbac",
        [str(plane.binaries.crossplane), "rbac", "start"],
        env={"KUBECONFIG": str(plane.admin_kubeconfig)},
    )
    for plural in ("coreweaveclusters", "civoclusters"):
        name = f"{plural}.{XR_GROUP}"
        wait_established(plane, kinds.XRD, [name])
        # The roles the page's table lists, with the verbs it gives.
        for role_name, verbs in ROLE_VERBS.items():
            made = wait_for(
                f"the RBAC manager's {role_name} role for {plural}",
                functools.partial(
                    plane.api.get, kinds.CLUSTER_ROLE, f"crossplane:composite:{name}:{role_name}"
                ),
                ROLES_SECONDS,
            )
            on_kind = [r for r in made["rules"] if plural in r.get("resources", [])]
            assert [r["verbs"] for r in on_kind] == [verbs], made["rules"]

    for namespace in (TEAM_NAMESPACE, OTHER_NAMESPACE):
        plane.api.apply(kinds.NAMESPACE, {"metadata": {"name": namespace}})
    # The page's YAML blocks, by kind.
    blocks = re.findall(r"^```yaml\n(.*?)^```", RBAC_PAGE.read_text(), flags=re.M | re.S)
    manifests = {doc["kind"]: doc for doc in map(yaml.safe_load, blocks)}
    assert sorted(manifests) == ["Role", "RoleBinding"]
    plane.api.apply(kinds.ROLE_BINDING, manifests["RoleBinding"])
    role = manifests["Role"]
    plane.api.apply(kinds.ROLE, role)
    [kubeconfig] = role["rules"][0]["resourceNames"]
    # The page binds its Role to no one: here, to the consumer it is written for.
    plane.api.apply(
        kinds.ROLE_BINDING,
        {
            "metadata": {"name": READER, "namespace": TEAM_NAMESPACE},
            "subjects": [{"kind": "ServiceAccount", "name": READER, "namespace": TEAM_NAMESPACE}],
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Role",
                "name": role["metadata"]["name"],
            },
        },
    )

    consumer = {"user": CONSUMER, "groups": ["system:serviceaccounts"]}
    cases = [
        # The team manages CoreWeaveClusters in its namespace, and nothing else.
        (TEAM_MEMBER, xr("create", "coreweaveclusters", TEAM_NAMESPACE), True),
        (TEAM_MEMBER, xr("delete", "coreweaveclusters", TEAM_NAMESPACE), True),
        (TEAM_MEMBER, xr("create", "coreweaveclusters", OTHER_NAMESPACE), False),
        (TEAM_MEMBER, xr("create", "civoclusters", TEAM_NAMESPACE), False),
        (TEAM_MEMBER, secret("get", TEAM_NAMESPACE, kubeconfig), False),
        (TEAM_MEMBER, secret("list", TEAM_NAMESPACE), False),
        # The consumer reads that one kubeconfig, no other Secret, and no XR.
        (consumer, secret("get", TEAM_NAMESPACE, kubeconfig), True),
        (consumer, secret("get", TEAM_NAMESPACE, "another-secret"), False),
        (consumer, secret("list", TEAM_NAMESPACE), False),
        (consumer, secret("get", OTHER_NAMESPACE, kubeconfig), False),
        (consumer, xr("create", "coreweaveclusters", TEAM_NAMESPACE), False),
    ]
    answers = [(s, a, allowed(plane, s, a)) for s, a, _ in cases]
    assert answers == cases
