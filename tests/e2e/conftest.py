"""The e2e suite's fixtures: one real control plane per session, or a skip that says why.

Plain `pytest` without the binaries skips these tests with the command that builds them;
`make e2e` builds (or reuses) the binaries and runs them.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from .harness.binaries import locate
from .harness.suite import SHARED_CRDS, Suite, start

SUITE_KEY = pytest.StashKey[Suite]()


def _cannot_run(reason: str) -> None:
    """Skips, except under `make e2e` (FIC_E2E_REQUIRED=1), where a skip would pass silently."""
    if os.environ.get("FIC_E2E_REQUIRED") == "1":
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def suite(request: pytest.FixtureRequest) -> Iterator[Suite]:
    binaries = locate()
    missing = binaries.missing()
    if missing:
        _cannot_run(
            f"e2e: {len(missing)} control-plane binaries not built, e.g. {missing[0]}; "
            "run `make e2e` (or hack/controlplane/build-all.sh first)"
        )
    if not SHARED_CRDS.is_dir():
        _cannot_run(f"e2e: provider CRDs not found in {SHARED_CRDS}")
    # Its own folder, not pytest's numbered tmp dirs: a concurrent pytest run (another checkout
    # on the same machine) prunes those, and could delete this one while it is in use.
    work = Path(tempfile.mkdtemp(prefix="fic-e2e-"))
    running = start(work, binaries)
    request.config.stash[SUITE_KEY] = running
    failed_before = request.session.testsfailed
    try:
        yield running
    finally:
        running.stop()
        # FIC_E2E_KEEP=1 keeps a green run's folder too (logs, watch-events.tsv) for reading.
        if request.session.testsfailed == failed_before and os.environ.get("FIC_E2E_KEEP") != "1":
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"\ne2e: logs and state kept in {work}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
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
    running = config.stash.get(SUITE_KEY, None)
    if running is None:
        return
    terminalreporter.section("e2e churn: watch events per XR and stage")
    for report in running.churn_reports:
        terminalreporter.write_line(report)
    for note in running.notes:
        terminalreporter.write_line(note)
    terminalreporter.write_line(f"fake cloud status writes: {running.cloud.status_writes}")
