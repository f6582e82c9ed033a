"""The names the docs' commands and queries use are the names the install creates.

The README installs through the Configuration packages, which run the function as
`modelplane-function-inference-clusters` (the name the package manager gives the dependency,
which examples/configurations.yaml creates first); only a hand install names it
`function-inference-clusters`. A command that patches or inspects the other name fails with
NotFound, and a query on the other `function_name` returns no data, so each is checked here
against the Function objects the examples create: a command must name the Configuration
install's Function except in the sections about the hand install, and every `function_name`
matcher must match the Function of either install.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Where a doc may name the hand-installed Function: what it says about the hand install.
HAND_INSTALL_SECTIONS = {
    ("install.md", "### Moving from a hand install"),
    ("install.md", "## Using it from a Composition"),
}
# `kubectl <verb> function[s][.pkg.crossplane.io] NAME`, across the line breaks of inline code.
FUNCTION_COMMAND = re.compile(
    r"kubectl\s+(?:get|describe|patch|delete|edit|wait|label|annotate)\s+"
    r"functions?(?:\.pkg\.crossplane\.io)?\s+([a-z0-9][a-z0-9.-]*)"
)
FUNCTION_NAME_MATCHER = re.compile(r'function_name\s*(=~|=|!=|!~)\s*"([^"]*)"')


def functions_created(example: str) -> set[str]:
    """The Function objects an examples/ file creates."""
    documents = yaml.safe_load_all((ROOT / "examples" / example).read_text())
    return {d["metadata"]["name"] for d in documents if d and d["kind"] == "Function"}


CONFIGURATION_INSTALL = functions_created("configurations.yaml")
HAND_INSTALL = functions_created("function.yaml")


def sections(page: Path) -> list[tuple[str, str]]:
    """The page as (heading, text) pairs, a heading line opening each; the text before the
    first heading under ''. Headings inside code blocks are not headings."""
    found: list[tuple[str, str]] = [("", "")]
    fenced = False
    for line in page.read_text().splitlines(keepends=True):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not fenced and re.match(r"#{1,6} ", line):
            found.append((line.strip(), ""))
        else:
            heading, text = found[-1]
            found[-1] = (heading, text + line)
    return found


def named_functions() -> list[tuple[str, str, str]]:
    """(page, section, Function name) of every command in the docs that names a Function."""
    return [
        (page.name, heading, match.group(1))
        for page in PAGES
        for heading, text in sections(page)
        for match in FUNCTION_COMMAND.finditer(text)
    ]


def test_both_installs_create_one_function_each() -> None:
    assert functions_created("configurations.yaml") == {"modelplane-function-inference-clusters"}
    assert functions_created("function.yaml") == {"function-inference-clusters"}


def test_the_scan_finds_the_commands_that_name_a_function() -> None:
    found = named_functions()
    assert ("upgrading.md", "# Upgrading") in {(page, heading) for page, heading, _ in found}
    assert any(
        (page, heading) in HAND_INSTALL_SECTIONS and name in HAND_INSTALL
        for page, heading, name in found
    ), "the hand install's own commands are not found"


@pytest.mark.parametrize(
    ("page", "heading", "name"), named_functions(), ids=lambda value: str(value)[:40]
)
def test_every_command_names_a_function_the_install_creates(
    page: str, heading: str, name: str
) -> None:
    allowed = set(CONFIGURATION_INSTALL)
    if (page, heading) in HAND_INSTALL_SECTIONS:
        allowed |= HAND_INSTALL
    assert name in allowed, (
        f"{page}, {heading!r}: `{name}` is not a Function the install creates ({sorted(allowed)})"
    )


def function_name_matchers() -> list[tuple[str, str, str]]:
    """(file, operator, value) of every `function_name` label matcher in the docs' queries and
    the shipped monitoring rules."""
    files = [*PAGES, *sorted((ROOT / "deploy").glob("*.yaml"))]
    return [
        (path.name, match.group(1), match.group(2))
        for path in files
        for match in FUNCTION_NAME_MATCHER.finditer(path.read_text())
    ]


def test_the_scan_finds_the_queries_on_crossplanes_function_metrics() -> None:
    assert {file for file, _, _ in function_name_matchers()} >= {"operations.md", "monitoring.yaml"}


@pytest.mark.parametrize(("file", "operator", "value"), function_name_matchers())
def test_every_function_name_matcher_selects_the_function_of_either_install(
    file: str, operator: str, value: str
) -> None:
    assert operator in ("=", "=~"), f"{file}: function_name{operator}{value!r} excludes a name"
    for name in sorted(CONFIGURATION_INSTALL | HAND_INSTALL):
        selected = value == name if operator == "=" else re.fullmatch(value, name) is not None
        assert selected, f"{file}: function_name{operator}{value!r} misses the Function {name}"
