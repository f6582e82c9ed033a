"""The package's folders say what each part is, and imports keep them honest: the clouds' rules
know nothing of the servicer's machinery, and function/shared/ holds only what both clouds use."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "function"
CLOUDS = ("civo", "coreweave")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def absolute_imports(path: Path) -> set[str]:
    """The modules a file imports by absolute name (a `from x import y` counts as x and, when y
    is a module of it, x.y)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}
# The function.* modules each one imports.
IMPORTS = {name: absolute_imports(path) & MODULES.keys() for name, path in MODULES.items()}


def within(folder: str) -> list[str]:
    return sorted(name for name in MODULES if name.startswith(f"function.{folder}."))


def reached(start: str) -> set[str]:
    """Every function.* module start imports, directly or through others."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for name in IMPORTS[todo.pop()] - seen:
            seen.add(name)
            todo.append(name)
    return seen


SERVICER = ("runner", "server", "main", "metrics", "health", "addresses", "memo")
SERVICER_MACHINERY = {f"function.{name}" for name in SERVICER} | set(within("memo"))


@pytest.mark.parametrize("module", [*within("shared"), *within("civo"), *within("coreweave")])
def test_the_rules_never_reach_the_servicer_machinery(module: str) -> None:
    assert reached(module) & SERVICER_MACHINERY == set()


@pytest.mark.parametrize("module", [m for m in within("shared") if not m.endswith(".__init__")])
def test_shared_holds_only_what_both_clouds_use(module: str) -> None:
    users = {cloud for cloud in CLOUDS if any(module in reached(m) for m in within(cloud))}
    assert users == set(CLOUDS), f"{module} is used by {sorted(users) or 'neither cloud'}"


def test_each_cloud_keeps_to_its_own_folder() -> None:
    for cloud, other in (CLOUDS, CLOUDS[::-1]):
        leaks = {m: reached(m) & set(within(other)) for m in within(cloud)}
        assert {m: found for m, found in leaks.items() if found} == {}, f"{cloud} imports {other}"


REPO = PACKAGE.parent
# Which top-level folders the code in each may import from: harness/ is what tests/ and hack/
# share, so neither needs the other (tests import hack/ only to test its tools).
MAY_IMPORT = {
    "harness": {"function", "harness"},
    "hack": {"function", "harness", "hack"},
    "tests": {"function", "harness", "hack", "tests"},
}


def top_level_imports(path: Path) -> set[str]:
    """The repository's own top-level folders a file imports from (absolute imports only)."""
    return {name.split(".")[0] for name in absolute_imports(path)} & {*MAY_IMPORT, "function"}


@pytest.mark.parametrize("folder", sorted(MAY_IMPORT))
def test_shared_harness_code_has_one_home(folder: str) -> None:
    crossings = {
        str(path.relative_to(REPO)): sorted(top_level_imports(path) - MAY_IMPORT[folder])
        for path in sorted((REPO / folder).rglob("*.py"))
    }
    assert {path: found for path, found in crossings.items() if found} == {}
