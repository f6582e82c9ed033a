"""The Configuration install upgraded and uninstalled as docs/upgrading.md and docs/uninstall.md
say, their commands run as written (and troubleshooting.md's and deleting.md's on the way), under
a live CoreWeaveCluster and CivoCluster.

Both Configurations are installed as a user installs them (harness/e2e/packages.py) and a pair
of XRs brought to Ready through them. Then:

1. **Upgrading the function** (upgrading.md): its commands patch the Function to v0.2.1, a
   package with a digest of its own. Asserted: the v0.2.1 revision is the one Active, both
   Configurations are Healthy after them, and nothing composed or live is re-created or changed. Then
   the move to the next minor: with the function alone at v0.3.0, outside the Configurations'
   range, both report the message the page quotes while every XR is still composed; the page's
   commands, as written, move both to a release built to admit v0.3.0, and they are Healthy
   on it with the same XRDs and Compositions and nothing composed changed.
2. **Deleting a Configuration with a live XR** (uninstall.md, "Before you delete a
   Configuration"): its check lists the XRs; the deletion guard, applied after the
   Configurations as install.md says, refuses to delete the Civo Configuration with the message
   the page quotes; with the guard lifted, it is deleted under the live CivoCluster. Asserted,
   as the page says: the Composition goes, the XR turns Synced=False on the missing
   Composition, the XRD is terminating, nothing composed or live is deleted and the cluster
   runs; deleting the XR (with docs/deleting.md's command, as written) deletes its
   cluster and the old XRD; the Configuration, put back only then, brings the API back with a
   new XRD, and the guard is applied again.
3. **Removing everything** (uninstall.md): the XRs' foreground delete returns only once
   everything they composed and the CKS cluster are gone, and after the page's remaining
   commands (the guard deleted first) nothing of the install is left: no Configuration, XRD,
   XR CRD, Composition, Function, Provider, runtime config, ImageConfig, credentials Secret or
   guard.
"""

from __future__ import annotations

import functools
import textwrap
import time
from pathlib import Path
from typing import Any

import yaml

from hack.configurations import CLOUDS
from hack.configurations import build as build_configuration
from harness.doc_commands import code_blocks, sh_blocks
from harness.e2e import guard, kinds
from harness.e2e.binaries import REPO
from harness.e2e.kube import WaitTimedOut, condition, is_true, wait_for
from harness.e2e.packages import (
    API_NAMES,
    PARENT_PACKAGE,
    brought_by_configurations,
    configuration_reference,
    identities,
    install_configurations,
    report_package_runtimes,
)
from harness.e2e.pair import NAMESPACE, Pair, differences
from harness.e2e.runtime import INSTALL_SECONDS, build_package, push
from harness.e2e.stages import CONVERGE_SECONDS, delete_xr, not_synced
from harness.e2e.suite import Suite
from harness.e2e.user_cli import run_as_user, user_environment
from harness.e2e.xr import composed, external_name
from harness.example_sets import documents
from harness.fixtures import civo_pool

DOCS = REPO / "docs"
UPGRADE_STEPS = "## Upgrading the function"
CHECK_STEPS = "## Before you delete a Configuration"
LOG_STEPS = "## Reading the function's log"
# install.md's section whose YAML pins provider-kubernetes.
PIN_STEPS = "### Which provider versions you get"
# deleting.md's commands come before its first heading.
DELETING = "# Deleting a cluster"
# The runtime config examples/function-runtime.yaml creates, whose container the log steps edit.
RUNTIME_CONFIG = "function-inference-clusters"
REMOVAL_STEPS = "## Removing everything"
FUNCTION = "modelplane-function-inference-clusters"
# The tag upgrading.md's commands move the function to, and one outside the Configurations'
# function range (>=v0.2.0, <v0.3.0).
NEXT_TAG = "v0.2.1"
# The next minor, which upgrading.md moves the function and both Configurations to together,
# and the function range the Configurations of that release declare.
NEXT_MINOR = "v0.3.0"
NEXT_MINOR_RANGE = ">=v0.3.0, <v0.4.0"
NEXT_MINOR_STEPS = "## Upgrading to a function the Configurations do not admit"
FUNCTION_REPOSITORY = "xpkg.upbound.io/modelplane/function-inference-clusters"
# What docs/upgrading.md quotes of a Configuration whose function is outside its range.
OUT_OF_RANGE_MESSAGE = (
    'Package revision health is "False" with message: cannot resolve package dependencies: '
    f"incompatible dependencies: existing package {FUNCTION_REPOSITORY}@{NEXT_MINOR} is "
    "incompatible with constraint >=v0.2.0, <v0.3.0"
)
# What upgrading.md quotes of a Configuration while the package manager swaps the function's
# revision in its lock.
SWAPPING_MESSAGE = (
    'Package revision health is "False" with message: cannot resolve package dependencies: '
    f'missing dependencies: "{FUNCTION_REPOSITORY}" (>=v0.2.0, <v0.3.0)'
)
CONFIGURATIONS = ("inference-clusters-coreweave", "inference-clusters-civo")
CIVO_CONFIGURATION = "inference-clusters-civo"
CIVO_API = API_NAMES[1]
# A fixed pool only: the suite's hand-installed Composition, which this install replaces, takes
# the autoscaler chart from a mirror (tests/e2e/test_migration.py says why that matters).
CIVO_POOLS = [civo_pool("system", "g4s.kube.medium", 2)]


def healthy(api: Any, name: str) -> bool:
    return is_true(api.get(kinds.CONFIGURATION, name), "Healthy")


def wait_unhealthy_with(api: Any, name: str, message: str, description: str) -> str:
    """The Configuration's Healthy message once it is False and says `message`. A timeout names
    every Healthy state the Configuration and its revisions went through meanwhile (a bare
    timeout tells nothing of what the package manager said instead)."""
    seen: dict[str, None] = {}  # in the order first seen

    def probe() -> str:
        found = condition(api.get(kinds.CONFIGURATION, name), "Healthy")
        text = str(found.get("message", ""))
        seen[f"{name}: {found.get('status')}: {text}"] = None
        for revision in api.list(kinds.CONFIGURATION_REVISION, labels=f"{PARENT_PACKAGE}={name}"):
            said, meta = condition(revision, "Healthy"), revision["metadata"]
            deleting = " (deleting)" if meta.get("deletionTimestamp") else ""
            state = f"{said.get('status')}: {said.get('message', '')}"
            seen[f"{meta['name']} {meta['uid']}{deleting}: {state}"] = None
        return text if found.get("status") == "False" and message in text else ""

    try:
        return wait_for(description, probe, INSTALL_SECONDS)
    except WaitTimedOut as timed_out:
        raise WaitTimedOut(f"{timed_out}; seen meanwhile: {list(seen)}"[:8000]) from None


def active_function_revision(api: Any) -> dict[str, Any] | None:
    revisions = [
        r
        for r in api.list(kinds.FUNCTION_REVISION, labels=f"{PARENT_PACKAGE}={FUNCTION}")
        if r["spec"].get("desiredState") == "Active"
    ]
    return revisions[0] if len(revisions) == 1 else None


def of_member(snapshot: dict[str, Any], name: str) -> dict[str, Any]:
    return {key: value for key, value in snapshot.items() if key.startswith(f"{name}/")}


def test_upgrading_and_uninstalling_the_configuration_install_as_the_docs_say(
    own_suite: Suite, tmp_path: Path
) -> None:
    suite = own_suite
    plane, api = suite.plane, suite.plane.api
    # install.md's pin, as written: provider-kubernetes created first, under the name the
    # CoreWeave Configuration installs it as, which the package manager then uses as it is.
    [pin_yaml] = code_blocks((DOCS / "install.md").read_text(), PIN_STEPS, "yaml")
    pin = yaml.safe_load(textwrap.dedent(pin_yaml))
    pinned = api.apply(kinds.PROVIDER, pin)["metadata"]["uid"]
    install_configurations(plane, function_endpoint=suite.runtime.endpoint)
    env = user_environment(plane, tmp_path)
    guard.apply_as_installed(env)
    provider = api.get(kinds.PROVIDER, pin["metadata"]["name"]) or {}
    assert (provider["metadata"]["uid"], provider["spec"]["package"]) == (
        pinned,
        pin["spec"]["package"],
    )
    brought = brought_by_configurations(REPO)

    def play_runtime() -> bool:
        return report_package_runtimes(plane, brought, suite.runtime.endpoint)

    # inference-east and inference-lon in ml-team: the XRs docs/deleting.md's commands name.
    pair = Pair.of(suite, "inference", civo_pools=CIVO_POOLS)
    pair.apply()
    before = pair.settled()

    # 1. upgrading.md's commands, as written, to a package of another digest.
    variant = build_package(plane, REPO, reuse_make_output=False)
    mirrored = f"127.0.0.1:{plane.registry_port}/modelplane/{FUNCTION_REPOSITORY.split('/', 2)[2]}"
    for tag in (NEXT_TAG, NEXT_MINOR):
        push(plane, variant, f"{mirrored}:{tag}")
    previous = active_function_revision(api)
    assert previous is not None
    [upgrade] = sh_blocks((DOCS / "upgrading.md").read_text(), UPGRADE_STEPS)
    took = {}
    # Every Healthy state the Configurations show while the commands run, as a user watching
    # them would see it.
    seen: dict[str, set[str]] = {name: set() for name in CONFIGURATIONS}

    def play_runtime_and_watch() -> bool:
        for name in CONFIGURATIONS:
            found = condition(api.get(kinds.CONFIGURATION, name), "Healthy")
            seen[name].add(f"{found.get('status')}: {found.get('message', '')}".strip())
        return play_runtime()

    started = time.monotonic()
    listed = run_as_user(upgrade, env, INSTALL_SECONDS, meanwhile=play_runtime_and_watch)
    took["upgrading.md's patch to v0.2.1"] = time.monotonic() - started
    current = active_function_revision(api)
    assert current is not None and current["metadata"]["name"] != previous["metadata"]["name"]
    assert current["spec"]["image"].endswith(f":{NEXT_TAG}"), current["spec"]["image"]
    assert current["metadata"]["name"] in listed, listed
    play_runtime_and_watch()
    suite.notes.append(
        f"Configurations' Healthy while the function moved to {NEXT_TAG}: "
        + "; ".join(f"{name}: {sorted(states)}" for name, states in seen.items())
    )
    assert all(healthy(api, name) for name in CONFIGURATIONS), seen
    # What upgrading.md says a Configuration may report meanwhile, and nothing else.
    assert SWAPPING_MESSAGE in " ".join((DOCS / "upgrading.md").read_text().split())
    assert {
        state
        for states in seen.values()
        for state in states
        if state != "True:" and SWAPPING_MESSAGE not in state
    } == set()
    assert differences(before, pair.settled()) == [], "upgrading the function"

    # upgrading.md's move to the next minor: the function alone first, as its first command
    # does, which the Configurations' range does not admit; then the page's commands, as
    # written, with Configurations built to admit it.
    def moved_to(tag: str) -> bool:
        # Played for its side (the runtime's report); with a Configuration unhealthy it is False.
        play_runtime()
        revision = active_function_revision(api) or {}
        image = str(revision.get("spec", {}).get("image", ""))
        return image.endswith(f":{tag}") and is_true(revision, "RuntimeHealthy")

    (plane.work / NEXT_MINOR).mkdir(exist_ok=True)
    for cloud in CLOUDS:
        built = build_configuration(
            str(plane.binaries.crank), cloud, plane.work / NEXT_MINOR, NEXT_MINOR_RANGE
        )
        push(plane, built, configuration_reference(plane.registry_port, cloud.name, NEXT_MINOR))
    apis_before = identities(plane)
    patch = {"spec": {"package": f"{FUNCTION_REPOSITORY}:{NEXT_MINOR}"}}
    api.merge_patch(kinds.FUNCTION, FUNCTION, patch)
    wait_for(
        f"the Function's {NEXT_MINOR} revision Active",
        functools.partial(moved_to, NEXT_MINOR),
        INSTALL_SECONDS,
    )
    out_of_range = {
        name: wait_unhealthy_with(
            api, name, OUT_OF_RANGE_MESSAGE, f"{name} unhealthy on a function outside its range"
        )
        for name in CONFIGURATIONS
    }
    assert OUT_OF_RANGE_MESSAGE in " ".join((DOCS / "upgrading.md").read_text().split())
    # The APIs stay, and every XR is still composed.
    assert differences(before, pair.settled()) == [], "a function outside the range"
    [next_minor] = sh_blocks((DOCS / "upgrading.md").read_text(), NEXT_MINOR_STEPS)
    started = time.monotonic()
    run_as_user(next_minor, env, INSTALL_SECONDS, meanwhile=play_runtime)
    took["the move to v0.3.0"] = time.monotonic() - started
    for name in CONFIGURATIONS:
        configuration = api.get(kinds.CONFIGURATION, name) or {}
        assert configuration["spec"]["package"].endswith(f":{NEXT_MINOR}")
        assert is_true(configuration, "Healthy"), configuration.get("status")
    # The new releases took the same XRDs and Compositions over.
    assert identities(plane) == apis_before
    assert differences(before, pair.settled()) == [], "moving to the next minor"

    # troubleshooting.md's log commands, as written: the log selector (no pods here: the suite
    # runs the function itself), then --debug on and off in the runtime config.
    logs, debug_on, debug_off = sh_blocks((DOCS / "troubleshooting.md").read_text(), LOG_STEPS)
    run_as_user(logs, env)
    for block, args in ((debug_on, ["--debug"]), (debug_off, None)):
        run_as_user(block, env)
        runtime_config = api.get(kinds.DEPLOYMENT_RUNTIME_CONFIG, RUNTIME_CONFIG) or {}
        template = runtime_config["spec"]["deploymentTemplate"]["spec"]["template"]["spec"]
        [container] = template["containers"]
        assert (container["name"], container.get("args")) == ("package-runtime", args)

    # 2. uninstall.md's check, then the Civo Configuration deleted under a live CivoCluster.
    [check] = sh_blocks((DOCS / "uninstall.md").read_text(), CHECK_STEPS)
    listing = run_as_user(check, env)
    assert pair.coreweave.name in listing and pair.civo.name in listing, listing
    civo = pair.civo
    cluster_id = external_name(api, civo.name, NAMESPACE, kinds.CIVO_CLUSTER, "civo-cluster")
    xr_uid = (api.get(civo.kind, civo.name, NAMESPACE) or {})["metadata"]["uid"]
    old_xrd_uid = (api.get(kinds.XRD, CIVO_API) or {})["metadata"]["uid"]
    configuration = api.get(kinds.CONFIGURATION, CIVO_CONFIGURATION) or {}
    # The guard, applied as the install says, refuses the delete as the page quotes it.
    configurations = "configurations.pkg.crossplane.io"
    refused = guard.kubectl(env, "delete", configurations, CIVO_CONFIGURATION)
    assert refused == (1, guard.refusal(configurations, "Configuration", CIVO_CONFIGURATION))
    assert refused[1] == guard.quoted_refusal("uninstall.md", CHECK_STEPS)
    assert (api.get(kinds.CONFIGURATION, CIVO_CONFIGURATION) or {})["metadata"]["uid"] == (
        configuration["metadata"]["uid"]
    )
    # Without it, what the page says happens next: the guard lifted, the delete goes through.
    api.delete(kinds.VALIDATING_ADMISSION_POLICY_BINDING, guard.NAME)
    guard.wait_in_force(env, in_force=False)
    api.delete(kinds.CONFIGURATION, CIVO_CONFIGURATION)

    stopped = wait_for(
        "the CivoCluster Synced=False",
        lambda: not_synced(api.get(civo.kind, civo.name, NAMESPACE)),
        CONVERGE_SECONDS,
    )
    assert stopped == (
        "cannot fetch Composition: cannot get Composition: Composition.apiextensions.crossplane.io "
        f'"{CIVO_API}" not found'
    )
    uninstall_page = " ".join((DOCS / "uninstall.md").read_text().split())
    assert "`cannot fetch Composition: ... not found`" in uninstall_page
    assert api.get(kinds.COMPOSITION, CIVO_API) is None

    # The XRD controller reports the termination on its own reconcile, which may come after
    # the XR's (the cold run of 5d325ec saw Established=True a moment after Synced=False).
    def terminating() -> dict[str, Any] | None:
        xrd = api.get(kinds.XRD, CIVO_API) or {}
        established = condition(xrd, "Established")
        said = (established.get("status"), established.get("reason"))
        deleting = xrd.get("metadata", {}).get("deletionTimestamp")
        return xrd if deleting and said == ("False", "TerminatingCompositeResource") else None

    wait_for("the XRD terminating, Established=False", terminating, INSTALL_SECONDS)
    assert (api.get(civo.kind, civo.name, NAMESPACE) or {})["metadata"]["uid"] == xr_uid
    assert differences(of_member(before, civo.name), of_member(pair.snapshot(), civo.name)) == []
    assert cluster_id in suite.clusters.running()

    # The way back, as the page says: the XR deleted by deleting.md's command, as written (the
    # pair is named as the page's examples), its cluster with it; the old XRD then goes, and
    # only then is the Configuration put back. (Put back while the XR still existed, its
    # revision could take control of the terminating XRD and delete the XR and its cluster:
    # uninstall.md's second rule, design.md's "Known Crossplane issues".)
    _, delete_civo = sh_blocks((DOCS / "deleting.md").read_text(), DELETING)
    assert civo.name in delete_civo, delete_civo
    run_as_user(delete_civo, env)
    delete_xr(suite, civo.kind, civo.composed_kinds, civo.name, NAMESPACE, cluster_id)
    wait_for("the old XRD gone", lambda: api.get(kinds.XRD, CIVO_API) is None, INSTALL_SECONDS)
    assert "Put the Configuration back only after that" in uninstall_page
    api.apply(
        kinds.CONFIGURATION,
        {"metadata": {"name": CIVO_CONFIGURATION}, "spec": configuration["spec"]},
    )
    wait_for(
        "the Configuration Healthy with a new XRD",
        lambda: (
            healthy(api, CIVO_CONFIGURATION)
            and (api.get(kinds.XRD, CIVO_API) or {}).get("metadata", {}).get("uid", old_xrd_uid)
            != old_xrd_uid
            and is_true(api.get(kinds.XRD, CIVO_API), "Established")
        ),
        CONVERGE_SECONDS,
    )
    guard.apply_as_installed(env)

    # 3. uninstall.md's removal: the XRs first, waited for, then the rest.
    delete_xrs, delete_configurations, delete_the_rest = sh_blocks(
        (DOCS / "uninstall.md").read_text(), REMOVAL_STEPS
    )
    coreweave = pair.coreweave
    cks_id = external_name(api, coreweave.name, NAMESPACE, kinds.CKS_CLUSTER, "cks-cluster")
    started = time.monotonic()
    run_as_user(delete_xrs, env, CONVERGE_SECONDS)
    took["the foreground delete of the CoreWeaveCluster"] = time.monotonic() - started
    # Returned only once everything composed, and the cluster, were gone.
    assert api.get(coreweave.kind, coreweave.name, NAMESPACE) is None
    assert composed(api, coreweave.name, NAMESPACE, coreweave.composed_kinds) == {}
    assert cks_id not in suite.clusters.running()
    run_as_user(delete_configurations, env, INSTALL_SECONDS)
    # What examples/configurations.yaml has a user create, its ImageConfig included (the suite
    # mirrors the registries with ImageConfigs of its own).
    [image_config] = [
        d
        for d in documents(REPO / "examples" / "configurations.yaml")
        if d["kind"] == "ImageConfig"
    ]
    api.apply(kinds.IMAGE_CONFIG, image_config)
    run_as_user(delete_the_rest, env, INSTALL_SECONDS)

    left = [
        f"{kind.kind}/{name}"
        for kind, names in (
            (kinds.CONFIGURATION, CONFIGURATIONS),
            (kinds.XRD, API_NAMES),
            (kinds.CRD, API_NAMES),
            (kinds.COMPOSITION, API_NAMES),
            (kinds.FUNCTION, (FUNCTION,)),
            (kinds.PROVIDER, tuple(sorted(brought - {FUNCTION, *CONFIGURATIONS}))),
            (kinds.DEPLOYMENT_RUNTIME_CONFIG, (RUNTIME_CONFIG, "provider-helm")),
            (kinds.IMAGE_CONFIG, ("modelplane-packages",)),
            (kinds.VALIDATING_ADMISSION_POLICY, (guard.NAME,)),
            (kinds.VALIDATING_ADMISSION_POLICY_BINDING, (guard.NAME,)),
        )
        for name in names
        if api.get(kind, name) is not None
    ]
    left += [
        f"Secret/{name}"
        for name in ("coreweave-credentials", "civo-credentials")
        if api.get(kinds.SECRET, name, "crossplane-system") is not None
    ]
    assert left == [], left
    suite.notes.append(
        "upgrading and uninstalling as the docs say: "
        + ", ".join(f"{step} {seconds:.0f} s" for step, seconds in took.items())
        + f"; {len(out_of_range)} Configurations unhealthy while only the function moved"
    )
