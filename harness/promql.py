"""Reading PromQL and the function's series, for the tests that check the shipped alerts
(tests/test_deploy.py) and the docs' queries (tests/test_doc_names.py) against what is exported."""

from __future__ import annotations

import re
from typing import Any

import pytest

from function import metrics, runner
from harness.fixtures import civo_xr, coreweave_xr, request

PROMQL_KEYWORDS = frozenset({"and", "or", "unless", "bool", "offset"})


def series_names(expr: str) -> set[str]:
    """The series a PromQL expression reads: its identifiers, less functions, keywords, label
    matchers, ranges and grouping clauses."""
    expr = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    expr = re.sub(r"\{[^}]*\}", " ", expr)
    expr = re.sub(r"\[[^\]]*\]", " ", expr)
    expr = re.sub(r"\b\d+(?:\.\d+)?(?:ms|[smhdwy])?\b", " ", expr)  # numbers, durations
    expr = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", expr)
    found = set()
    for match in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", expr):
        word, rest = match.group(0), expr[match.end() :].lstrip()
        if not rest.startswith("(") and word not in PROMQL_KEYWORDS:
            found.add(word)
    return found


def exported_labels(monkeypatch: pytest.MonkeyPatch) -> dict[str, set[str]]:
    """The label names of every series a metered function serves, by series: one that has
    answered both kinds and failed internally once, so that every series has a sample."""
    counted = metrics.Metrics()
    served = runner.FunctionRunner(metrics=counted)
    for xr in (coreweave_xr(), civo_xr()):
        served.reply(request(xr))

    def broken(*_: Any) -> Any:
        raise RuntimeError

    monkeypatch.setitem(runner.CORES, (civo_xr()["apiVersion"], "CivoCluster"), broken)
    served.reply(request(civo_xr()))
    labels: dict[str, set[str]] = {}
    for family in counted.registry.collect():
        for sample in family.samples:
            labels.setdefault(sample.name, set()).update(sample.labels)
    return labels
