"""The committed observed stages are what hack/example_stages.py generates from the example XRs
and the function as it is now: a change to what the function composes shows up here, and
`python hack/example_stages.py` then `make render` refresh the stages and their renders."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from hack import example_stages
from harness.example_sets import ROOT, ExampleSet, example_sets

EXAMPLES = example_sets()


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.name for e in EXAMPLES])
def test_committed_stages_are_generated(example: ExampleSet, tmp_path: Path) -> None:
    fresh = dataclasses.replace(example, stages=tmp_path)
    example_stages.generate(fresh)
    generated = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.yaml"))
    committed = sorted(
        p.relative_to(example.stages)
        for folder in ("observed", "required")
        for p in (example.stages / folder).glob("*.yaml")
    )
    assert generated == committed
    stale = [
        str((example.stages / path).relative_to(ROOT))
        for path in generated
        if (tmp_path / path).read_text() != (example.stages / path).read_text()
    ]
    assert stale == [], "run `python hack/example_stages.py` then `make render`"
