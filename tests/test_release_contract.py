"""Upgrading from the previous release recreates nothing: what it composed keeps its key and its
names when this version composes it.

The previous release is pinned by its commit in hack/release/previous.env (read and exported
by harness/e2e/releases.py). Its example inputs (XRs, observed stages, required resources,
functions) and its Compositions, as they were at that commit, are rendered with this version's function through the real crank; every composed
resource the previous release's committed render has must come out under the same key with the
same identity: kind, object name, and the names the providers and the cluster know it by. A
changed one makes Crossplane delete and recreate it: a CKS cluster, a Civo pool, a NodePool.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from hack import render as render_script
from harness.e2e.releases import export, pinned
from harness.example_sets import ROOT, STAGES, example_sets

RESOURCE_KEY = "crossplane.io/composition-resource-name"
EXTERNAL_NAME = "crossplane.io/external-name"
# Keys this version stops composing on purpose, each with why; only Usages may be retired,
# since dropping one deletes no infrastructure.
RETIRED = {
    "usage-cluster-by-providerconfig": "kept a CKS cluster billing while Objects could not reach "
    'it (docs/design.md, "Deletion order")',
}


def git(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, check=False)


@pytest.fixture(scope="module")
def commit() -> str:
    if shutil.which("git") is None or git("rev-parse", "--git-dir").returncode != 0:
        pytest.skip("not a git checkout: the previous release is read from main's history")
    release, sha = pinned()
    assert git("cat-file", "-e", f"{sha}^{{commit}}").returncode == 0, (
        f"commit {sha} of release {release} is not in this clone "
        "(a shallow clone? `git fetch --unshallow`)"
    )
    return sha


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in tomllib.loads(text)["project"]["version"].split("."))


def test_the_previous_release_is_in_mains_history_and_older(commit: str) -> None:
    assert git("merge-base", "--is-ancestor", commit, "HEAD").returncode == 0, (
        f"{commit} is not an ancestor of HEAD"
    )
    then = git("show", f"{commit}:pyproject.toml").stdout.decode()
    now = (ROOT / "pyproject.toml").read_text()
    release, _ = pinned()
    assert _version(then) == tuple(int(p) for p in release.split(".")), "pin and version differ"
    assert _version(now) > _version(then), "pyproject.toml's version is not past the release"
    changelog = (ROOT / "CHANGELOG.md").read_text()
    for version in (release, ".".join(str(p) for p in _version(now))):
        assert re.search(rf"^## {re.escape(version)}\b", changelog, re.MULTILINE), (
            f"CHANGELOG.md has no section for {version}"
        )


# Kinds whose provider sets an unset external name to the object's name (crossplane-runtime's
# default NameAsExternalName initializer): composing that same name explicitly changes nothing.
NAMED_AFTER_OBJECT = {("helm.m.crossplane.io/v1beta1", "Release")}


def names(obj: dict[str, Any]) -> dict[str, Any]:
    """An object's type, name and namespace."""
    meta = obj.get("metadata") or {}
    type_ = {key: obj.get(key) for key in ("apiVersion", "kind")}
    return type_ | {key: meta.get(key) for key in ("name", "namespace")}


def identity(doc: dict[str, Any]) -> dict[str, Any]:
    """What a composed resource is known by: a change to any of it recreates the resource."""
    meta = doc.get("metadata") or {}
    for_provider = (doc.get("spec") or {}).get("forProvider") or {}
    manifest = for_provider.get("manifest") or {}
    named_after_object = (doc.get("apiVersion"), doc.get("kind")) in NAMED_AFTER_OBJECT
    found = {
        **names(doc),
        "external name": (meta.get("annotations") or {}).get(EXTERNAL_NAME)
        or (meta.get("name") if named_after_object else None),
        # The cloud's names: a CKS cluster's, a VPC's, a Civo cluster's and firewall's...
        "provider name": for_provider.get("name"),
        # ...a Civo network's and pool's label (a pool's Civo ID)...
        "provider label": for_provider.get("label"),
        # ...and the in-cluster object a provider-kubernetes Object manages.
        "manifest": names(manifest) if manifest else None,
    }
    return {k: v for k, v in found.items() if v is not None}


def composed_identities(rendered: str) -> dict[str, dict[str, Any]]:
    """Every composed resource of a crank render, by resource key."""
    return {
        doc["metadata"]["annotations"][RESOURCE_KEY]: identity(doc)
        for doc in yaml.safe_load_all(rendered)
        if doc and RESOURCE_KEY in ((doc.get("metadata") or {}).get("annotations") or {})
    }


@pytest.fixture(scope="module")
def previous_checkout(commit: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The previous release's tree as committed there: its example sets (in example/ in 0.1.0,
    in examples/ and tests/stages/ since) and its apis/."""
    root = tmp_path_factory.mktemp("previous-release")
    export(commit, root)
    return root


def test_this_version_composes_what_the_previous_release_did_under_the_same_names(
    previous_checkout: Path, crank: str, tmp_path: Path
) -> None:
    stages = [
        (example, stage)
        for example in example_sets(previous_checkout)
        for stage in STAGES
        if example.rendered(stage).is_file()
    ]
    assert len(stages) >= 8, f"the previous release has too few committed renders: {stages}"
    problems = []
    with render_script.function_server() as port:
        for example, stage in stages:
            then = composed_identities(example.rendered(stage).read_text())
            rendered = render_script.render(
                crank, example, stage, port, tmp_path, results=False, root=previous_checkout
            )
            now = composed_identities(rendered)
            for key, was in then.items():
                name = f"{example.name}/{stage}: {key}"
                if key in RETIRED:
                    if was.get("kind") != "Usage" or key in now:
                        problems.append(f"{name} is retired, but was {was}")
                elif key not in now:
                    problems.append(f"{name} is no longer composed")
                elif now[key] != was:
                    problems.append(f"{name} was {was}, is {now[key]}")
    assert not problems, "\n".join(problems)
