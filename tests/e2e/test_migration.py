"""Moving live XRs from the hand-installed APIs (0.2.0's way) to the Configuration packages
recreates nothing.

A CoreWeaveCluster and a CivoCluster are brought to Ready on the APIs the suite installs by hand
(the XRDs and Compositions applied, the function a `Function` of its own), then both
Configurations are installed as examples/configurations.yaml has a user install them, with
dependency resolution (harness/e2e/packages.py). Crossplane takes the XRDs and Compositions over,
each Composition gets a new revision calling the function under its dependency name, and each
XR moves to it: every composed resource and every live object in the clusters must keep its UID
and its spec, and both XRs must be Ready again, composed through the Configuration's
Composition. Then the Function installed by hand is deleted, as docs/install.md says, and
nothing changes.

The CivoCluster has no autoscaled pool: the suite's hand-installed Composition takes the
cluster-autoscaler chart from a mirror, the packaged one from the public repository, so an
autoscaled pool's Release would change its chart source, as it would for a user who mirrors the
chart (docs/composition.md says what such a user does). With the default repository nothing changes.
"""

from __future__ import annotations

import datetime
import functools
from pathlib import Path
from typing import Any

from harness.doc_commands import sh_blocks
from harness.e2e import kinds
from harness.e2e.binaries import REPO
from harness.e2e.kube import wait_for
from harness.e2e.packages import install_configurations
from harness.e2e.pair import NAMESPACE, Member, Pair, differences
from harness.e2e.runtime import FUNCTION_NAME
from harness.e2e.stages import CONVERGE_SECONDS
from harness.e2e.suite import Suite
from harness.e2e.user_cli import run_as_user, user_environment
from harness.fixtures import civo_pool

# docs/install.md's steps for the move, whose commands run here as written.
MIGRATION_STEPS = "### Moving from a hand install"
# The name the Configurations' Compositions call the function by (hack/configurations.py).
DEPENDENCY_FUNCTION = "modelplane-function-inference-clusters"
# Fixed pools only (see the module docstring).
CIVO_POOLS = [
    civo_pool("system", "g4s.kube.medium", 2),
    civo_pool("a100", "g4g.kube.small", 1, "nvidia-a100"),
]


def composed_by(suite: Suite, member: Member) -> list[str]:
    """The functions the Composition revision the XR uses calls, step by step."""
    xr = suite.plane.api.get(member.kind, member.name, NAMESPACE) or {}
    reference = xr.get("spec", {}).get("crossplane", {}).get("compositionRevisionRef") or {}
    revision = suite.plane.api.get(kinds.COMPOSITION_REVISION, reference.get("name", "")) or {}
    return [s["functionRef"]["name"] for s in revision.get("spec", {}).get("pipeline", [])]


def columns(output: str) -> tuple[dict[str, str], dict[str, str]]:
    """What the docs' check prints: each Composition revision's functions, and each XR's
    revision (the second column of each table, by the first)."""
    tables: list[dict[str, str]] = []
    for line in output.splitlines():
        cells = line.split()
        if cells[:1] == ["NAME"]:
            tables.append({})
        elif len(cells) == 2 and tables:
            tables[-1][cells[0]] = cells[1]
    # kubectl prints a header per kind it lists: the XR kinds' tables after the revisions'.
    revisions, *xr_tables = tables
    return revisions, {name: r for table in xr_tables for name, r in table.items()}


def calls_only_the_dependency(suite: Suite, member: Member) -> bool:
    return composed_by(suite, member) == [DEPENDENCY_FUNCTION]


def uid(suite: Suite, member: Member) -> str:
    xr: dict[str, Any] = suite.plane.api.get(member.kind, member.name, NAMESPACE) or {}
    return str(xr["metadata"]["uid"])


def test_moving_live_xrs_to_the_configurations_recreates_nothing(
    own_suite: Suite, tmp_path: Path
) -> None:
    suite = own_suite
    plane, runtime = suite.plane, suite.runtime
    pair = Pair.of(suite, "migrate", civo_pools=CIVO_POOLS)
    pair.apply()
    before = pair.settled()
    xrs = {m.name: uid(suite, m) for m in pair.members}
    for member in pair.members:
        assert composed_by(suite, member) == [FUNCTION_NAME]

    took = install_configurations(plane, function_endpoint=runtime.endpoint)
    for member in pair.members:
        wait_for(
            f"{member.name} on a Composition revision calling {DEPENDENCY_FUNCTION}",
            functools.partial(calls_only_the_dependency, suite, member),
            CONVERGE_SECONDS,
        )
    # The revision switch is a spec change: Synced and Ready on the new generation prove a
    # reconcile through the packaged Composition succeeded.
    after = pair.settled()
    assert differences(before, after) == [], "moving to the Configurations"
    assert {m.name: uid(suite, m) for m in pair.members} == xrs

    # docs/install.md's steps 2 and 3, as written: the check shows every XR on a revision
    # calling the function by its new name; then the hand-installed Function is deleted, which
    # changes nothing.
    check, delete = sh_blocks((REPO / "docs" / "install.md").read_text(), MIGRATION_STEPS)
    env = user_environment(plane, tmp_path)
    revisions, xr_revisions = columns(run_as_user(check, env))
    assert {name: revisions[r] for name, r in xr_revisions.items()} == {
        m.name: DEPENDENCY_FUNCTION for m in pair.members
    }
    run_as_user(delete, env)
    wait_for(
        f"Function {FUNCTION_NAME} gone",
        lambda: plane.api.get(kinds.FUNCTION, FUNCTION_NAME) is None,
        CONVERGE_SECONDS,
    )
    # Composed again since (the next poll), so through the Configuration's function alone.
    runtime.serving_since = datetime.datetime.now(datetime.UTC)
    assert differences(before, pair.settled()) == [], "deleting the hand-installed Function"
    suite.notes.append(
        f"hand install -> Configurations: installed and Healthy in {took:.1f} s, "
        f"{len(before)} composed and live objects kept their UIDs and specs"
    )
    pair.delete()
