"""The deletion guard (examples/deletion-guard.yaml) as the e2e suite drives it: applied with
docs/install.md's command, what it refuses, in kubectl's words, and when it is in force."""

from __future__ import annotations

import subprocess
import time

from harness.doc_commands import code_blocks, sh_blocks
from harness.example_sets import documents

from .binaries import REPO
from .kube import wait_for
from .packages import API_NAMES
from .user_cli import run_as_user

NAME = "inference-clusters-deletion-guard"
INSTALL_SECTION = "### The deletion guard"
# What it refuses, each as (kubectl's resource, the kind its message names, the name): the
# XRDs, their XR CRDs, and the Configurations under the names examples/configurations.yaml gives.
GUARDED = [
    (resource, kind, name)
    for name in API_NAMES
    for resource, kind in (
        ("compositeresourcedefinitions.apiextensions.crossplane.io", "CompositeResourceDefinition"),
        ("customresourcedefinitions.apiextensions.k8s.io", "CustomResourceDefinition"),
    )
] + [
    ("configurations.pkg.crossplane.io", "Configuration", doc["metadata"]["name"])
    for doc in documents(REPO / "examples" / "configurations.yaml")
    if doc["kind"] == "Configuration"
]
# The API server loads a policy or a binding change a moment after it is written.
TAKES_EFFECT_SECONDS = 30


def refusal(resource: str, kind: str, name: str) -> str:
    """What `kubectl delete` prints when the guard refuses it."""
    return (
        f'Error from server (Forbidden): {resource} "{name}" is forbidden: '
        f"ValidatingAdmissionPolicy '{NAME}' with binding '{NAME}' denied request: the "
        f"inference-clusters deletion guard refuses to delete {kind} {name}: that can delete "
        "every CoreWeaveCluster or CivoCluster of its kind, and their cloud clusters. To "
        "uninstall, delete every XR of the kind first, then the guard: kubectl delete "
        f"validatingadmissionpolicybinding {NAME} (docs/uninstall.md)"
    )


def kubectl(env: dict[str, str], *args: str) -> tuple[int, str]:
    """A kubectl command that may fail: its exit code and what it printed."""
    done = subprocess.run(
        ["kubectl", *args],
        check=False,
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.returncode, (done.stdout + done.stderr).strip()


def quoted_refusal(page: str, section: str) -> str:
    """The refusal a doc page quotes in a section: its one unlabelled code block."""
    [quoted] = code_blocks((REPO / "docs" / page).read_text(), section, language="")
    return quoted.strip()


def wait_in_force(env: dict[str, str], in_force: bool) -> float:
    """Waits until the API server applies the guard (or no longer does), asking with a
    server-side dry run, which the policy judges and which deletes nothing; the seconds it took."""
    resource, _, name = GUARDED[0]
    started = time.monotonic()
    wait_for(
        f"the deletion guard {'in force' if in_force else 'lifted'}",
        lambda: (kubectl(env, "delete", "--dry-run=server", resource, name)[0] != 0) == in_force,
        TAKES_EFFECT_SECONDS,
        interval=0.2,
    )
    return time.monotonic() - started


def apply_as_installed(env: dict[str, str]) -> float:
    """docs/install.md's command, as written; the seconds until the guard is in force."""
    [command] = sh_blocks((REPO / "docs" / "install.md").read_text(), INSTALL_SECTION)
    run_as_user(command, env)
    return wait_in_force(env, in_force=True)
