"""A pytest plugin: under FIC_TOOLS_REQUIRED=1 (what .ci/run exports) a skipped test is a failed
one.

Tests that need a tool built with Go (crank, Helm, promtool, the validator), the real CRDs in ../shared/crds or
the pinned chart skip with a message where those are absent, so that `make test` works on a
fresh clone with Python alone. In CI that would let a broken build pass with none of those
checks run, so there every skip fails, naming what was missing.
"""

from __future__ import annotations

import os
from collections.abc import Generator

import pytest

REQUIRED = "FIC_TOOLS_REQUIRED"


def required() -> bool:
    return os.environ.get(REQUIRED) == "1"


def _fail_skipped(report: pytest.TestReport | pytest.CollectReport) -> None:
    if required() and report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped under {REQUIRED}=1, where every check must run: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, None]:
    outcome = yield
    _fail_skipped(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, None]:
    outcome = yield
    _fail_skipped(outcome.get_result())
