"""Builds the Configuration packages, one per cloud: the Crossplane way to install an API.

    python hack/configurations.py --crank CRANK --out build

configurations/<cloud>/ holds what only the package has: its metadata (crossplane.yaml, with
what it depends on) and its ManagedResourceActivationPolicy (activation.yaml). The XRD and the
Composition stay in apis/<kind>/, the one copy that users who install by hand apply too; the
package's Composition differs from it in one field: its pipeline calls the function by the name
Crossplane's package manager installs the function dependency under. The examples of the cloud
ship as the package's examples. Each package is built with `crank xpkg build` (no Docker) into
<out>/configuration-<cloud>.xpkg.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from harness.package_names import (
    CONFIGURATIONS,
    configuration_package_file,
    declared,
    dependency_name,
)

ROOT = Path(__file__).resolve().parents[1]
# The name users who install by hand give the Function (examples/function.yaml); the
# Compositions in apis/ call it so.
HAND_INSTALLED_FUNCTION = "function-inference-clusters"


@dataclasses.dataclass(frozen=True)
class Cloud:
    name: str
    api: Path  # apis/<kind>/: definition.yaml and composition.yaml
    examples: tuple[str, ...]  # example sets under examples/ shipped with the package

    @property
    def source(self) -> Path:
        return CONFIGURATIONS / self.name


CLOUDS = (
    Cloud(
        "coreweave", ROOT / "apis" / "coreweaveclusters", ("coreweave", "coreweave-api-reference")
    ),
    Cloud("civo", ROOT / "apis" / "civoclusters", ("civo", "civo-api-reference")),
)


def load(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(path.read_text())
    return loaded


def function_dependency(cloud: Cloud) -> dict[str, Any]:
    """The package's one Function dependency: the function its Composition calls."""
    (function,) = [d for d in declared(cloud.name) if d.get("kind") == "Function"]
    return dict(function)


def packaged_function_name() -> str:
    """The name the package manager installs the Configurations' function under: the same for
    every cloud, so both Configurations share one Function."""
    (name,) = {dependency_name(function_dependency(c)["package"]) for c in CLOUDS}
    return name


def packaged_composition(cloud: Cloud) -> dict[str, Any]:
    """apis/<kind>/composition.yaml with its pipeline calling the function by the name the
    package manager installs the Configuration's function dependency under."""
    composition = load(cloud.api / "composition.yaml")
    name = dependency_name(function_dependency(cloud)["package"])
    for step in composition["spec"]["pipeline"]:
        if step["functionRef"]["name"] != HAND_INSTALLED_FUNCTION:
            raise SystemExit(
                f"{cloud.api}/composition.yaml: step {step['step']!r} calls "
                f"{step['functionRef']['name']!r}, not {HAND_INSTALLED_FUNCTION!r}"
            )
        step["functionRef"]["name"] = name
    return composition


def stage(cloud: Cloud, into: Path, function_range: str | None = None) -> tuple[Path, Path]:
    """The package root and examples root crank packs, written under `into`; with
    `function_range`, the function dependency's version constraint replaced by it (what a later
    release of the Configuration declares, for tests that move to one)."""
    root, examples = into / "package", into / "examples"
    root.mkdir(parents=True)
    if function_range is None:
        shutil.copy(cloud.source / "crossplane.yaml", root / "crossplane.yaml")
    else:
        meta = load(cloud.source / "crossplane.yaml")
        for dependency in meta["spec"]["dependsOn"]:
            if dependency.get("kind") == "Function":
                dependency["version"] = function_range
        (root / "crossplane.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
    shutil.copy(cloud.source / "activation.yaml", root / "activation.yaml")
    shutil.copy(cloud.api / "definition.yaml", root / "definition.yaml")
    (root / "composition.yaml").write_text(yaml.safe_dump(packaged_composition(cloud)))
    for example in cloud.examples:
        shutil.copytree(ROOT / "examples" / example, examples / example)
    return root, examples


def build(crank: str, cloud: Cloud, out: Path, function_range: str | None = None) -> Path:
    target = out / configuration_package_file(cloud.name)
    with tempfile.TemporaryDirectory(prefix=f"configuration-{cloud.name}-") as work:
        root, examples = stage(cloud, Path(work), function_range)
        subprocess.run(
            [
                crank,
                "xpkg",
                "build",
                f"--package-root={root}",
                f"--examples-root={examples}",
                f"--package-file={target}",
            ],
            check=True,
        )
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crank", required=True, help="the Crossplane CLI")
    parser.add_argument("--out", type=Path, default=ROOT / "build")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for cloud in CLOUDS:
        print(f"built {build(args.crank, cloud, args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
