"""The names the docs' commands and queries use are the names the install creates.

The README installs through the Configuration packages, which run the function as
`modelplane-function-inference-clusters` (the name the package manager gives the dependency,
which examples/configurations.yaml creates first); only a hand install names it
`function-inference-clusters`. A command that patches or inspects the other name fails with
NotFound, and a query on the other `function_name` returns no data, so each is checked here
against the Function objects the examples create: a command must name the Configuration
install's Function except in the sections about the hand install, and every `function_name`
matcher must match the Function of either install.

The same holds for the other names a user copies: a command naming an XR by namespace and name
names one an example creates, and every query in a ```promql block reads series, labels and
label values the function (function/metrics.py) or Crossplane core exports.
"""

from __future__ import annotations

import re

import pytest

from function import metrics
from harness.doc_commands import sections
from harness.e2e.operability import CROSSPLANE_CORE_SERIES
from harness.example_sets import ROOT, documents
from harness.promql import exported_labels, series_names

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Where a doc may name the hand-installed Function: what it says about the hand install.
HAND_INSTALL_SECTIONS = {
    ("install.md", "### Moving from a hand install"),
    ("composition.md", ""),
    ("composition.md", "# Using it from your own Composition"),
}
# `kubectl <verb> function[s][.pkg.crossplane.io] NAME`, across the line breaks of inline code.
FUNCTION_COMMAND = re.compile(
    r"kubectl\s+(?:get|describe|patch|delete|edit|wait|label|annotate)\s+"
    r"functions?(?:\.pkg\.crossplane\.io)?\s+([a-z0-9][a-z0-9.-]*)"
)
FUNCTION_NAME_MATCHER = re.compile(r'function_name\s*(=~|=|!=|!~)\s*"([^"]*)"')


def functions_created(example: str) -> set[str]:
    """The Function objects an examples/ file creates."""
    found = documents(ROOT / "examples" / example)
    return {d["metadata"]["name"] for d in found if d["kind"] == "Function"}


CONFIGURATION_INSTALL = functions_created("configurations.yaml")
HAND_INSTALL = functions_created("function.yaml")


def named_functions() -> list[tuple[str, str, str]]:
    """(page, section, Function name) of every command in the docs that names a Function."""
    return [
        (page.name, heading, match.group(1))
        for page in PAGES
        for heading, text in sections(page.read_text())
        for match in FUNCTION_COMMAND.finditer(text)
    ]


def test_both_installs_create_one_function_each() -> None:
    assert functions_created("configurations.yaml") == {"modelplane-function-inference-clusters"}
    assert functions_created("function.yaml") == {"function-inference-clusters"}


def test_the_scan_finds_the_commands_that_name_a_function() -> None:
    found = named_functions()
    places = {(page, heading) for page, heading, _ in found}
    assert ("upgrading.md", "## Upgrading the function") in places
    assert ("uninstall.md", "## Removing everything") in places
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


# A PromQL query a page gives users: every line of a ```promql block but comments.
PROMQL_BLOCK = re.compile(r"^```promql\n(.*?)^```", re.M | re.S)
# `series{matchers}`: a selector and its label matchers.
SELECTOR = re.compile(r"([A-Za-z_:][A-Za-z0-9_:]*)\{([^}]*)\}")
LABEL_MATCHER = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!=|!~|=)\s*"([^"]*)"')
# The values each of the function's labels takes (function/metrics.py's fixed lists).
LABEL_VALUES = {"kind": metrics.KINDS, "result": metrics.RESULTS, "outcome": metrics.MEMO_OUTCOMES}
# The labels Crossplane core puts on its series about function calls, as v2.1.0-v2.4.0 define
# them (internal/xfn/function_runner_metrics.go), and a histogram's bucket bound.
CROSSPLANE_LABELS = frozenset({"function_name", "grpc_code", "result_severity", "le"})


def doc_queries() -> list[tuple[str, str]]:
    """(page, query) of every query in the docs' ```promql blocks."""
    return [
        (page.name, line.strip())
        for page in PAGES
        for block in PROMQL_BLOCK.findall(page.read_text())
        for line in block.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


def test_the_scan_finds_the_queries_of_the_operations_page() -> None:
    queries = doc_queries()
    assert {page for page, _ in queries} == {"operations.md"}
    assert len(queries) == 5, queries


@pytest.mark.parametrize(("page", "query"), doc_queries(), ids=lambda value: str(value)[:50])
def test_every_doc_query_reads_series_and_labels_that_are_exported(
    page: str, query: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    exported = exported_labels(monkeypatch)
    exported.update({series: set(CROSSPLANE_LABELS) for series in CROSSPLANE_CORE_SERIES})
    read = series_names(query)
    assert read, f"{page}: {query!r} reads no series"
    assert read <= set(exported), f"{page}: {query!r} reads {sorted(read - set(exported))}"
    for series, matchers in SELECTOR.findall(query):
        for label, operator, value in LABEL_MATCHER.findall(matchers):
            assert label in exported[series], f"{page}: {series} has no label {label!r}"
            if label in LABEL_VALUES and operator == "=":
                assert value in LABEL_VALUES[label], f"{page}: {label}={value!r} never occurs"


# `kubectl <verb> coreweavecluster[s] -n NAMESPACE NAME` (or civocluster, or both kinds).
XR_COMMAND = re.compile(
    r"kubectl\s+[a-z]+\s+((?:coreweave|civo)clusters?(?:,(?:coreweave|civo)clusters?)?)"
    r"\s+(?:-n|--namespace)[ =]([a-z0-9<][a-z0-9<>-]*)(?:\s+([a-z0-9<][a-z0-9<> -]*[a-z0-9>]))?"
)


def xrs_created() -> set[tuple[str, str, str]]:
    """(kind, namespace, name) of every XR an examples/ folder creates."""
    return {
        (doc["kind"].lower(), doc["metadata"]["namespace"], doc["metadata"]["name"])
        for path in sorted((ROOT / "examples").glob("*/xr.yaml"))
        for doc in documents(path)
    }


def named_xrs() -> list[tuple[str, str, str, str]]:
    """(page, kind, namespace, name) of every command naming XRs by a namespace (and a name)
    that are not placeholders; an empty name where the command lists the namespace's XRs."""
    found = []
    for page in PAGES:
        for match in XR_COMMAND.finditer(page.read_text()):
            kinds, namespace, name = match.groups("")
            if "<" in namespace or "<" in name:
                continue
            first_name = name.split()[0] if name else ""
            for kind in kinds.split(","):
                found.append((page.name, kind.removesuffix("s"), namespace, first_name))
    return found


def test_the_scan_finds_the_commands_that_name_an_xr() -> None:
    assert ("deleting.md", "coreweavecluster", "ml-team", "inference-east") in named_xrs()
    assert ("README.md", "civocluster", "platform", "") in named_xrs()


@pytest.mark.parametrize(("page", "kind", "namespace", "name"), named_xrs())
def test_every_command_names_an_xr_and_namespace_an_example_creates(
    page: str, kind: str, namespace: str, name: str
) -> None:
    created = xrs_created()
    if name:
        assert (kind, namespace, name) in created, (
            f"{page}: no example creates {kind} {namespace}/{name}"
        )
    else:
        assert (kind, namespace) in {(k, n) for k, n, _ in created}, (
            f"{page}: no example creates a {kind} in namespace {namespace}"
        )
