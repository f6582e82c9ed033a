"""The commands the docs give users, as the e2e suite runs them: a section's `sh` blocks, and
the README's placeholders filled with a test's values (tests/e2e/test_readme.py,
tests/e2e/test_migration.py)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
SECTIONS = ("## Install", "## A first cluster of each kind")
# The README's placeholders, each a string the user replaces, and what the test puts there.
REGISTRY_LINE = "REGISTRY=registry.example.com/modelplane"
ORG_TOKEN_PLACEHOLDER = "CW-SECRET-<your org API token>"
CIVO_KEY_PLACEHOLDER = "<your Civo API key>"
PLACEHOLDERS = (REGISTRY_LINE, ORG_TOKEN_PLACEHOLDER, CIVO_KEY_PLACEHOLDER)
# A placeholder left in a command the test does not know how to fill.
UNKNOWN_PLACEHOLDER = re.compile(r"<[a-z][a-z ]*>")


def sections(markdown: str) -> list[tuple[str, str]]:
    """The page as (heading line, text) pairs, a heading opening each; the text before the
    first heading under ''. A `# comment` in a code block is no heading."""
    found = [("", "")]
    fenced = False
    for line in markdown.splitlines(keepends=True):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not fenced and re.match(r"#{1,6} ", line):
            found.append((line.strip(), ""))
        else:
            heading, text = found[-1]
            found[-1] = (heading, text + line)
    return found


def code_blocks(markdown: str, section: str, language: str = "sh") -> list[str]:
    """The code blocks of one language (`sh` unless named) in one section (its heading line,
    `## ...` or deeper), in order, up to the next heading of its level or above."""

    def level(heading: str) -> int:
        return len(heading) - len(heading.lstrip("#"))

    parts = sections(markdown)
    start = [heading for heading, _ in parts].index(section)
    body = parts[start][1]
    for heading, text in parts[start + 1 :]:
        if level(heading) <= level(section):
            break
        body += heading + "\n" + text
    # Fences walked in order, so that a block without a language ("" asks for those) is never
    # read from one block's closing fence to the next one's opening. A block inside a list
    # item is indented as the item's text.
    blocks: list[str] = []
    opened: tuple[str, str, list[str]] | None = None
    for line in body.splitlines(keepends=True):
        fence = re.fullmatch(r"( *)```(\S*)\s*", line)
        if opened is None:
            if fence:
                opened = (fence[1], fence[2], [])
        elif fence and fence[1] == opened[0] and not fence[2]:
            indent, found, lines = opened
            if found == language:
                blocks.append("".join(text.removeprefix(indent) for text in lines))
            opened = None
        else:
            opened[2].append(line)
    return blocks


sh_blocks = code_blocks


def filled(script: str, registry: str, org_token: str) -> str:
    """The script with the README's placeholders replaced; fails on one the test does not know."""
    script = script.replace(REGISTRY_LINE, f"REGISTRY={registry}")
    script = script.replace(ORG_TOKEN_PLACEHOLDER, org_token)
    script = script.replace(CIVO_KEY_PLACEHOLDER, "civo-e2e-api-key")
    unknown = UNKNOWN_PLACEHOLDER.findall(script)
    if unknown:
        raise ValueError(f"the README has placeholders the test cannot fill: {unknown}")
    return script
