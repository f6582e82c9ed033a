"""harness/required_tools.py: a skip fails the run under FIC_TOOLS_REQUIRED=1, and only there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SKIPPING = """
import pytest

def test_needs_a_tool():
    pytest.skip("promtool is not built")

@pytest.mark.skipif(True, reason="../shared/crds not found")
def test_needs_crds():
    pass
"""
SKIPPING_MODULE = """
import pytest

pytest.skip("../shared/crds not found: CRD validation skipped", allow_module_level=True)

def test_never_collected():
    pass
"""


@pytest.mark.parametrize(
    ("source", "required", "code", "summary"),
    [
        (SKIPPING, "", 0, "2 skipped"),
        (SKIPPING, "1", 1, "1 failed, 1 error"),
        # A module skipped whole collects no test: pytest says so with its code 5.
        (SKIPPING_MODULE, "", 5, "1 skipped"),
        (SKIPPING_MODULE, "1", 2, "1 error"),
    ],
)
def test_a_skip_fails_only_where_tools_are_required(
    tmp_path: Path, source: str, required: str, code: int, summary: str
) -> None:
    test_file = tmp_path / "test_skipping.py"
    test_file.write_text(source)
    plugins = ["-p", "no:cacheprovider", "-p", "harness.required_tools"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", *plugins, "-rA", str(test_file)],
        cwd=tmp_path,
        env={**os.environ, "FIC_TOOLS_REQUIRED": required, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == code, done.stdout + done.stderr
    assert summary in done.stdout.splitlines()[-1], done.stdout
    if required:
        assert "skipped under FIC_TOOLS_REQUIRED=1, where every check must run" in done.stdout
        assert "not built" in done.stdout or "not found" in done.stdout
