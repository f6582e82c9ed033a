"""Hooks for every suite here: in CI (FIC_TOOLS_REQUIRED=1) a skip fails (harness/required_tools.py).
Imported rather than named in pytest_plugins, which pytest refuses in a conftest below the
rootdir."""

import pytest

from harness.e2e.binaries import crank as pinned_crank
from harness.required_tools import (  # noqa: F401 - pytest finds hooks by name here
    pytest_make_collect_report,
    pytest_runtest_makereport,
)
from harness.validator import Validator, provider_crds


@pytest.fixture(scope="session")
def crank() -> str:
    """The Crossplane CLI built here; the test skips, saying so, without it."""
    found = pinned_crank()
    if found is None:
        pytest.skip("the Crossplane CLI (crank) is not installed: run `make crank` (needs Go)")
    return str(found)


@pytest.fixture(scope="session")
def validator() -> Validator:
    """harness/validator.py over ../shared/crds and our XRDs; the test skips without them."""
    return provider_crds()
