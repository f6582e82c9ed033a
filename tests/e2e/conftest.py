"""The e2e suite's fixtures: one real control plane per Crossplane engine of the version matrix,
or a skip that says why.

Every test runs on the primary engine; a test marked `every_engine` also runs on each older one.
Test IDs name the engine and what runs under it
(`test_civo_cluster_lifecycle[crossplane-v2.4.0+kubernetes-v1.37.2+...]`). Under pytest-xdist
(`make e2e`: `-n auto`) the suite runs as shards side by side, each on a worker
and control plane of its own (harness/e2e/shards.py); without it, shard after shard.

Plain `pytest` without the binaries skips these tests with the command that builds them;
`make e2e` builds (or reuses) the binaries and runs them.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
import tempfile
from collections.abc import Generator, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from pluggy import Result

from harness.e2e.binaries import REPO, locate, provider_kubernetes
from harness.e2e.charts import chart_archive
from harness.e2e.controlplane import ControlPlane
from harness.e2e.engine import Engine, engines
from harness.e2e.packages import configuration_file, function_file
from harness.e2e.processes import ProcessGroup
from harness.e2e.shards import OWN_NETWORK, make_scheduler, own_network_available, shards
from harness.e2e.suite import SHARED_CRDS, Suite, start
from harness.package_names import CONFIGURATION_CLOUDS

SUITE_KEY = pytest.StashKey[Suite]()
# What each engine's suite found worth a line (churn tables, idle windows), kept past its teardown.
SUMMARY_KEY = pytest.StashKey[list[str]]()
# How a worker hands its summary lines to the controller (pytest-xdist's workeroutput).
SUMMARY_OUTPUT = "e2e_summary"
ENGINES = engines()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "every_engine: runs on every Crossplane engine of the matrix, not only the primary",
    )
    config.stash[SUMMARY_KEY] = []


# About twice the slowest e2e test seen, setup included (the uninstall test: 884 s on a slow day,
# 630 s on another), and well inside CI's 90 minutes; the units' 300 s (pyproject.toml) would
# fail the slow ones.
E2E_TEST_TIMEOUT = 1800
E2E_DIR = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # A conftest's collection hook sees every collected item, not only its folder's.
    for item in items:
        if E2E_DIR in item.path.parents:
            item.add_marker(pytest.mark.timeout(E2E_TEST_TIMEOUT))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "engine" not in metafunc.fixturenames:
        return
    every = metafunc.definition.get_closest_marker("every_engine") is not None
    chosen = ENGINES if every else [e for e in ENGINES if e.primary]
    metafunc.parametrize(
        "engine", chosen, ids=[e.test_id for e in chosen], indirect=True, scope="session"
    )


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under pytest-xdist each worker takes whole shards (harness/e2e/shards.py)."""
    return make_scheduler(config, log, ENGINES)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: a worker per shard where each can have its own network, else one."""
    return len(shards(ENGINES)) if own_network_available() else 1


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_setupnodes(config: pytest.Config, specs: Sequence[Any]) -> None:
    """Starts every worker in a network namespace of its own, where that is available."""
    if len(specs) > 1 and own_network_available():
        for spec in specs:
            spec.python = f"{OWN_NETWORK} {spec.python or sys.executable}"


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """Collects a worker's summary lines on the controller."""
    lines = getattr(node, "workeroutput", {}).get(SUMMARY_OUTPUT, [])
    node.config.stash.setdefault(SUMMARY_KEY, []).extend(lines)


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput[SUMMARY_OUTPUT] = session.config.stash.get(SUMMARY_KEY, [])


@pytest.fixture(scope="session")
def engine(request: pytest.FixtureRequest) -> Engine:
    chosen: Engine = request.param
    return chosen


def _cannot_run(reason: str) -> None:
    """Skips, except under `make e2e` (FIC_E2E_REQUIRED=1), where a skip would pass silently."""
    if os.environ.get("FIC_E2E_REQUIRED") == "1":
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def suite(request: pytest.FixtureRequest, engine: Engine) -> Iterator[Suite]:
    running = _started(request, engine, apis_by_hand=True, label=engine.version)
    request.config.stash[SUITE_KEY] = next(running)
    yield request.config.stash[SUITE_KEY]
    next(running, None)


@pytest.fixture(scope="module")
def fresh_suite(request: pytest.FixtureRequest, engine: Engine) -> Iterator[Suite]:
    """The whole world without the function, the APIs or the credentials: for a test that
    installs them as a user does, from nothing."""
    yield from _module_suite(request, engine, apis_by_hand=False)


@pytest.fixture(scope="module")
def own_suite(request: pytest.FixtureRequest, engine: Engine) -> Iterator[Suite]:
    """The whole world as `suite` has it, for one module alone: for a test that changes what
    every later test would rely on (the APIs' packaging)."""
    yield from _module_suite(request, engine, apis_by_hand=True)


@pytest.fixture(scope="module")
def oldest_provider_suite(request: pytest.FixtureRequest, engine: Engine) -> Iterator[Suite]:
    """The whole world as `suite` has it, for one module alone, but running the oldest
    provider-kubernetes of the matrix with its CRDs: for a test that upgrades it."""
    oldest = ENGINES[-1].provider_kubernetes
    yield from _module_suite(request, engine, apis_by_hand=True, provider_kubernetes=oldest)


def _module_suite(
    request: pytest.FixtureRequest,
    engine: Engine,
    apis_by_hand: bool,
    provider_kubernetes: str = "",
) -> Iterator[Suite]:
    """A suite for one module. It runs providers with fixed ports (harness/e2e/shards.py), so it
    needs a worker without another suite running: a shard of its own under `make e2e`."""
    if SUITE_KEY in request.config.stash:
        _cannot_run(
            "e2e: a control plane of its own cannot start beside this worker's suite (provider "
            "ports); run its module alone, or under `make e2e` as root (a shard of its own)"
        )
    label = f"{engine.version}-{'own' if apis_by_hand else 'fresh'}"
    yield from _started(
        request, engine, apis_by_hand=apis_by_hand, label=label, provider=provider_kubernetes
    )


def _started(
    request: pytest.FixtureRequest,
    engine: Engine,
    apis_by_hand: bool,
    label: str,
    provider: str = "",
) -> Iterator[Suite]:
    """Starts a suite, yields it once, and on the next step stops it (keeping its folder on a
    failure, or with FIC_E2E_KEEP=1) and keeps its summary. With `provider`, that
    provider-kubernetes runs in place of the row's."""
    binaries = locate(engine.row)
    if provider:
        binary, crds = provider_kubernetes(provider)
        binaries = dataclasses.replace(
            binaries, provider_kubernetes=binary, provider_kubernetes_crds=crds
        )
    missing = binaries.missing()
    if missing:
        _cannot_run(
            f"e2e: {len(missing)} control-plane binaries not built, e.g. {missing[0]}; "
            "run `make e2e` (or hack/controlplane/build-all.sh first)"
        )
    if not SHARED_CRDS.is_dir():
        _cannot_run(f"e2e: provider CRDs not found in {SHARED_CRDS}")
    if not chart_archive().is_file():
        _cannot_run(
            f"e2e: the cluster-autoscaler chart provider-helm installs is not at {chart_archive()}"
        )
    # Its own folder, not pytest's numbered tmp dirs: a concurrent pytest run (another checkout
    # on the same machine) prunes those, and could delete this one while it is in use.
    work = Path(tempfile.mkdtemp(prefix=f"fic-e2e-{label}-"))
    running = start(work, binaries, engine, apis_by_hand=apis_by_hand)
    failed_before = request.session.testsfailed
    try:
        yield running
    finally:
        running.stop()
        request.config.stash[SUMMARY_KEY].extend(running.summary())
        # FIC_E2E_KEEP=1 keeps a green run's folder too (logs, watch-events.tsv) for reading.
        if request.session.testsfailed == failed_before and os.environ.get("FIC_E2E_KEEP") != "1":
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"\ne2e: logs and state kept in {work}")


def require_packages() -> None:
    """For a test that installs the packages `make xpkg` builds: fails without them."""
    for cloud in CONFIGURATION_CLOUDS:
        if not configuration_file(REPO, cloud).exists() or not function_file(REPO).exists():
            pytest.fail("the packages are not built: run `make xpkg`", pytrace=False)


@pytest.fixture
def summary(request: pytest.FixtureRequest) -> list[str]:
    """Lines for the e2e summary at the end of the run, for a test without a suite."""
    return request.config.stash[SUMMARY_KEY]


@pytest.fixture(scope="module")
def bare_plane(request: pytest.FixtureRequest, engine: Engine) -> Iterator[ControlPlane]:
    """A control plane with Crossplane and the suite's registry, nothing installed: for a test
    that installs everything through the package manager."""
    binaries = locate(engine.row)
    missing = binaries.missing()
    if missing:
        _cannot_run(f"e2e: control-plane binaries not built, e.g. {missing[0]}; run `make e2e`")
    if not SHARED_CRDS.is_dir():
        _cannot_run(f"e2e: provider CRDs not found in {SHARED_CRDS}")
    work = Path(tempfile.mkdtemp(prefix=f"fic-e2e-{engine.version}-packages-"))
    processes = ProcessGroup(work / "logs")
    plane = ControlPlane(work, binaries, processes)
    failed_before = request.session.testsfailed
    try:
        plane.start()
        yield plane
    finally:
        if request.session.testsfailed != failed_before:
            print(processes.log_tails())
        processes.stop_all()
        if request.session.testsfailed == failed_before and os.environ.get("FIC_E2E_KEEP") != "1":
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"\ne2e: logs and state kept in {work}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Result[pytest.TestReport], None]:
    """On a failure, attach the tail of every component's log and the fake cloud's errors."""
    outcome = yield
    report = outcome.get_result()
    running = item.config.stash.get(SUITE_KEY, None)
    if report.failed and running is not None:
        report.sections.append(("component logs", running.plane.processes.log_tails()))
        if running.cloud.errors:
            report.sections.append(("fake cloud errors", "\n".join(running.cloud.errors[-20:])))


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    lines = config.stash.get(SUMMARY_KEY, [])
    if not lines:
        return
    terminalreporter.section("e2e churn, idle windows and findings, per engine")
    for line in lines:
        terminalreporter.write_line(line)
