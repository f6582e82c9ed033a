"""The docs hold together: every relative link resolves (file and heading), every condition the
function can set is explained in docs/troubleshooting.md, and the README stays short."""

from __future__ import annotations

import ast
import importlib
import re
import shlex
import subprocess
from pathlib import Path
from urllib.parse import unquote

import pytest
import yaml

from hack import render as render_script
from harness import doc_commands
from harness.example_sets import ROOT, example_set

DOCS = ROOT / "docs"
TROUBLESHOOTING = DOCS / "troubleshooting.md"
PAGES = sorted(
    [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "bench" / "README.md", *DOCS.glob("*.md")]
)
# "At most about 200 lines": what it is, install, a first XR of each kind, render, links.
README_MAX_LINES = 200
# [text](target): inline links; images too. Code spans and fences are left out before matching.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
CLOUD_PACKAGES = {"CoreWeaveCluster": "function.coreweave", "CivoCluster": "function.civo"}
SHARED_PACKAGE = "function.shared"


def prose(text: str) -> list[str]:
    """The page's lines outside fenced code, with inline code spans removed."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            lines.append(re.sub(r"`[^`]*`", "", line))
    return lines


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives the page's headings: lower case, punctuation dropped, spaces as
    hyphens."""
    headings = [h.lstrip("#").strip().lower() for h, _ in doc_commands.sections(page.read_text())]
    return {re.sub(r"[^\w\- ]", "", h).replace(" ", "-") for h in headings if h}


def relative_links(page: Path) -> list[str]:
    return [
        target
        for line in prose(page.read_text())
        for target in LINK.findall(line)
        if not re.match(r"[a-z][a-z0-9+.-]*:", target)
    ]


def broken(page: Path, target: str) -> str | None:
    path_part, _, anchor = target.partition("#")
    destination = (page.parent / unquote(path_part)).resolve() if path_part else page
    if not destination.exists():
        return f"{target}: {destination.relative_to(ROOT)} does not exist"
    if anchor and destination.suffix == ".md" and anchor not in anchors(destination):
        return f"{target}: {destination.relative_to(ROOT)} has no heading #{anchor}"
    return None


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_relative_link_resolves(page: Path) -> None:
    problems = [p for t in relative_links(page) if (p := broken(page, t)) is not None]
    assert problems == []


def test_the_link_check_sees_links() -> None:
    # Guards the check itself: a page whose links it failed to parse would pass vacuously.
    readme = set(relative_links(ROOT / "README.md"))
    assert {"docs/README.md", "docs/api.md", "docs/troubleshooting.md"} <= readme
    assert broken(ROOT / "README.md", "docs/no-such-page.md") is not None
    assert broken(DOCS / "api.md", "troubleshooting.md#no-such-heading") is not None


@pytest.mark.parametrize(
    ("index", "section"), [("docs/README.md", ""), ("README.md", "## Documentation")]
)
def test_every_doc_page_is_listed_in_each_index(index: str, section: str) -> None:
    page = ROOT / index
    text = dict(doc_commands.sections(page.read_text()))[section] if section else page.read_text()
    listed = {(page.parent / t.partition("#")[0]).resolve() for t in LINK.findall(text)}
    assert set(DOCS.glob("*.md")) - {page} <= listed


def test_readme_is_short() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= README_MAX_LINES


def test_the_readme_renders_what_render_check_renders() -> None:
    """The README's command renders the converged CoreWeaveCluster with the same inputs as
    `make render-check`, which compares the output with tests/stages/coreweave/rendered/; only
    the Function file differs there, pointed at the function render-check starts itself."""
    [block] = doc_commands.sh_blocks(doc_commands.README.read_text(), "## Render locally")
    short = {"-x": "--include-full-xr", "-r": "--include-function-results"}
    shown = [short.get(arg, arg) for arg in shlex.split(block.replace("\\\n", " "))]
    example = example_set("coreweave")
    checked = render_script.render_command(
        "crank", example, "converged", example.functions, results=True, root=ROOT
    )
    relative = [arg.replace(f"{ROOT}/", "") for arg in checked if arg != "--timeout=30s"]
    assert sorted(shown) == sorted(relative)
    assert shown[:5] == relative[:5]  # crank render <xr> <composition> <functions>


# --- every condition the function can set, explained -------------------------------------------


def _constant(module: str, node: ast.expr) -> str | None:
    """A string literal, or a module constant it names (CONDITION_ACCESS)."""
    if isinstance(node, ast.Name):
        node = ast.Constant(getattr(importlib.import_module(module), node.id, None))
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _literals(node: ast.expr) -> list[str] | None:
    """The strings an expression can be: a literal, or either branch of `a if c else b`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        body, orelse = _literals(node.body), _literals(node.orelse)
        return body + orelse if body is not None and orelse is not None else None
    return None


def _reason_literals(trees: list[ast.Module]) -> list[str]:
    """Every string the package binds to something called `reason`: a variable, a keyword
    argument or a dataclass field default."""
    found = []
    for node in (node for tree in trees for node in ast.walk(tree)):
        if isinstance(node, ast.Assign):
            names = [target.id for target in node.targets if isinstance(target, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names = [node.target.id]
        elif isinstance(node, ast.keyword):
            names = [node.arg or ""]
        else:
            continue
        if "reason" in names and node.value is not None:
            found += _literals(node.value) or []
    return found


def conditions_in_code() -> set[tuple[str, str, str, str]]:
    """(kind, type, status, reason) of every `out.condition(...)` call in the clouds' code. A
    reason computed at run time counts as every string the cloud's package binds to `reason`."""
    found = set()
    # The rules both clouds share set their conditions on either kind.
    packages = [*CLOUD_PACKAGES.items(), *((kind, SHARED_PACKAGE) for kind in CLOUD_PACKAGES)]
    for kind, package in packages:
        folder = ROOT / Path(*package.split("."))
        trees = {f: ast.parse(f.read_text(), str(f)) for f in sorted(folder.glob("*.py"))}
        bound = _reason_literals(list(trees.values()))
        for path, tree in trees.items():
            module = f"{package}.{path.stem}"
            calls = (node for node in ast.walk(tree) if isinstance(node, ast.Call))
            for node in (c for c in calls if getattr(c.func, "attr", None) == "condition"):
                type_node, ok_node, reason_node = node.args[:3]
                type_ = _constant(module, type_node)
                assert type_ is not None, f"{path}:{node.lineno}: condition type not a constant"
                assert isinstance(ok_node, ast.Constant), f"{path}:{node.lineno}: status"
                status = "True" if ok_node.value else "False"
                reasons = _literals(reason_node)
                if reasons is None:
                    assert bound, f"{path}:{node.lineno}: a reason the test cannot trace"
                    reasons = bound
                found |= {(kind, type_, status, reason) for reason in reasons}
    return found


def documented_conditions() -> set[tuple[str, str, str, str]]:
    rows = (
        [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        for line in TROUBLESHOOTING.read_text().splitlines()
    )
    return {(r[0], r[1], r[2], r[3]) for r in rows if len(r) == 6 and r[0] in CLOUD_PACKAGES}


CONDITIONS = sorted(conditions_in_code())


def test_the_code_scan_finds_the_conditions() -> None:
    # Guards the scan itself: fewer found means a condition escaped it.
    assert ("CoreWeaveCluster", "ClusterAccess", "False", "WaitingForEndpoint") in CONDITIONS
    assert ("CivoCluster", "ClusterAccess", "False", "WaitingForConnectionSecret") in CONDITIONS
    assert ("CivoCluster", "ClusterAccess", "False", "WaitingForKubeconfig") in CONDITIONS
    assert len(CONDITIONS) >= 18


@pytest.mark.parametrize("condition", CONDITIONS, ids=["/".join(c) for c in CONDITIONS])
def test_every_condition_is_explained(condition: tuple[str, str, str, str]) -> None:
    assert condition in documented_conditions(), (
        f"{condition} is set by the function but has no row in {TROUBLESHOOTING.name}"
    )


def test_no_condition_is_explained_that_the_function_never_sets() -> None:
    assert documented_conditions() - set(CONDITIONS) == set()


# --- the commands the docs give, run as written -------------------------------------------------


def run_the_validate_block(
    crank: str, tmp_path: Path, coreweave_xr: str = "examples/coreweave/xr.yaml"
) -> subprocess.CompletedProcess[str]:
    """Runs docs/composition.md's `crossplane beta validate` block, with coreweave_xr for the
    CoreWeave example, as a user would from the repository root, `crossplane` being the CLI
    built here (crank); what it writes lands in tmp_path, not in this checkout."""
    section = "## Checking an XR before you apply it"
    [block] = doc_commands.sh_blocks((DOCS / "composition.md").read_text(), section)
    block = block.replace("examples/coreweave/xr.yaml", coreweave_xr)
    for folder in ("apis", "examples", "package"):
        (tmp_path / folder).symlink_to(ROOT / folder)
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", f'crossplane() {{ "{crank}" "$@"; }}\n{block}'],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_the_documented_validate_command_runs_as_written(crank: str, tmp_path: Path) -> None:
    done = run_the_validate_block(crank, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        "[✓] infrastructure.modelplane.ai/v1alpha1, Kind=CoreWeaveCluster, inference-east "
        "validated successfully",
        "[✓] infrastructure.modelplane.ai/v1alpha1, Kind=CivoCluster, inference-lon "
        "validated successfully",
        "Total 2 resources: 0 missing schemas, 2 success cases, 0 failure cases",
    ]


def test_the_documented_validate_command_names_a_field_out_of_bounds(
    crank: str, tmp_path: Path
) -> None:
    bad = yaml.safe_load(example_set("coreweave").xr.read_text())
    bad["spec"]["nodePools"][0]["nodeCount"] = -3
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(bad))
    done = run_the_validate_block(crank, tmp_path, "bad.yaml")
    assert done.returncode == 1
    assert (
        "spec.nodePools[0].nodeCount: Invalid value: -3: spec.nodePools[0].nodeCount in body "
        "should be greater than or equal to 0"
    ) in done.stdout
    assert "Total 2 resources: 0 missing schemas, 1 success cases, 1 failure cases" in done.stdout


def test_the_readme_commands_have_only_the_placeholders_the_e2e_fills() -> None:
    """tests/e2e/test_readme.py runs the README's install and first-cluster commands with its
    placeholders filled: each is there once, and no other is."""
    markdown = doc_commands.README.read_text()
    scripts = "".join(b for s in doc_commands.SECTIONS for b in doc_commands.sh_blocks(markdown, s))
    for placeholder in doc_commands.PLACEHOLDERS:
        assert scripts.count(placeholder) == 1, placeholder
    filled = doc_commands.filled(scripts, "127.0.0.1:5000/modelplane", "CW-SECRET-e2e-0")
    assert "REGISTRY=127.0.0.1:5000/modelplane   # your registry\n" in filled
    with pytest.raises(ValueError, match=r"\['<your key>'\]"):
        doc_commands.filled(scripts + "echo <your key>\n", "r", "t")


COMMANDS_DOC = """# Title

## Install

1. Push:

   ```sh
   echo one
   ```

```yaml
# a comment in a code block, not a heading
kind: Example
```

```sh
echo two
```

### Detail

```sh
echo three
```

What it prints:

```
three
```

## Next

```sh
echo four
```
"""


@pytest.mark.parametrize(
    ("section", "blocks"),
    [
        ("## Install", ["echo one\n", "echo two\n", "echo three\n"]),
        ("### Detail", ["echo three\n"]),
        ("## Next", ["echo four\n"]),
    ],
)
def test_a_sections_commands_are_its_sh_blocks(section: str, blocks: list[str]) -> None:
    assert doc_commands.sh_blocks(COMMANDS_DOC, section) == blocks


def test_a_block_without_a_language_is_read_from_its_own_fences() -> None:
    """Not from the sh block's closing fence to the next opening one."""
    assert doc_commands.code_blocks(COMMANDS_DOC, "### Detail", language="") == ["three\n"]
    assert doc_commands.code_blocks(COMMANDS_DOC, "## Install", language="yaml") == [
        "# a comment in a code block, not a heading\nkind: Example\n"
    ]


def test_the_readme_sections_the_e2e_runs_have_their_commands() -> None:
    """Install: push, install, credentials; the first clusters: one block applying both XRs."""
    markdown = doc_commands.README.read_text()
    install, first = (doc_commands.sh_blocks(markdown, s) for s in doc_commands.SECTIONS)
    assert len(install) == 3
    [clusters] = first
    assert "kubectl apply -f examples/coreweave-api-reference/xr.yaml" in clusters
