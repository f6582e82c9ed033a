"""Where each example set's files live, in this checkout or in an earlier release's.

A set is one example XR with what rendering it needs. What a user applies lives in `examples/`
(crank packs that folder into the Function package): `examples/<set>/xr.yaml` and
`examples/<set>/credentials/` (the provider config, and its Secret with a placeholder key); the
Function for `crossplane render` is `examples/render/functions.yaml`. What tests render it
against lives in `tests/stages/<set>/`: `observed/<stage>.yaml`, `required/` (resources a provider writes,
such as a Civo connection Secret) and the committed `rendered/<stage>.yaml`.

Release 0.1.0 kept all of a set in `example/<set>/`; the release tests render that
checkout too, so both layouts are read here.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
# Stages in lifecycle order; each has observed/<stage>.yaml and rendered/<stage>.yaml.
STAGES = ("new", "cluster-ready", "converged", "ready-flap")


@dataclasses.dataclass(frozen=True)
class ExampleSet:
    name: str
    xr: Path
    functions: Path
    # Required resources for crank render (a file or a folder), if the set has any.
    required: Path | None
    # Holds observed/ and rendered/.
    stages: Path

    def observed(self, stage: str) -> Path:
        return self.stages / "observed" / f"{stage}.yaml"

    def rendered(self, stage: str) -> Path:
        return self.stages / "rendered" / f"{stage}.yaml"

    def kind(self) -> str:
        for line in self.xr.read_text().splitlines():
            if line.startswith("kind:"):
                return line.split(":", 1)[1].strip()
        raise SystemExit(f"{self.xr}: no kind")


def documents(path: Path) -> list[dict[str, Any]]:
    """Every object in a YAML file, or in the YAML files of a folder (as crank reads one)."""
    files = sorted(path.glob("*.yaml")) if path.is_dir() else [path]
    return [d for f in files for d in yaml.safe_load_all(f.read_text()) if d]


def _current(root: Path, name: str) -> ExampleSet:
    credentials = root / "examples" / name / "credentials"
    stages = root / "tests" / "stages" / name
    return ExampleSet(
        name=name,
        xr=root / "examples" / name / "xr.yaml",
        functions=root / "examples" / "render" / "functions.yaml",
        # What the function reads: a Civo set's connection Secret (which a provider writes), else
        # a CoreWeave set's credentials (which a user creates). A Civo set's credentials are the
        # provider's alone.
        required=next((p for p in (stages / "required", credentials) if p.is_dir()), None),
        stages=stages,
    )


def _release_0_1(root: Path, name: str) -> ExampleSet:
    folder = root / "example" / name
    return ExampleSet(
        name=name,
        xr=folder / "xr.yaml",
        functions=folder / "functions.yaml",
        required=folder / "required" if (folder / "required").is_dir() else None,
        stages=folder,
    )


def example_sets(root: Path = ROOT) -> list[ExampleSet]:
    """Every set of the checkout at root: the team examples and the API reference's."""
    if (root / "tests" / "stages").is_dir():
        names = sorted(p.parent.name for p in (root / "examples").glob("*/xr.yaml"))
        return [_current(root, name) for name in names]
    names = sorted(p.parent.name for p in (root / "example").glob("*/xr.yaml"))
    return [_release_0_1(root, name) for name in names]


def example_set(name: str, root: Path = ROOT) -> ExampleSet:
    found = {s.name: s for s in example_sets(root)}
    if name not in found:
        raise KeyError(f"no example set {name!r} in {root}; there are {sorted(found)}")
    return found[name]
