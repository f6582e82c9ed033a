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
from typing import Any

import pytest

REQUIRED = "FIC_TOOLS_REQUIRED"


def required() -> bool:
    return os.environ.get(REQUIRED) == "1"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport() -> Generator[None, Any, None]:
    """A test's report (and, as pytest_make_collect_report, a collector's): failed, not skipped,
    where every check must run."""
    report: pytest.TestReport | pytest.CollectReport = (yield).get_result()
    if required() and report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped under {REQUIRED}=1, where every check must run: {reason}"


pytest_make_collect_report = pytest_runtest_makereport
