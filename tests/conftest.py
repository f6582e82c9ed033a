"""Hooks for every suite here: in CI (FIC_TOOLS_REQUIRED=1) a skip fails (harness/required_tools.py).
Imported rather than named in pytest_plugins, which pytest refuses in a conftest below the
rootdir."""

from harness.required_tools import (  # noqa: F401 - pytest finds hooks by name here
    pytest_make_collect_report,
    pytest_runtest_makereport,
)
