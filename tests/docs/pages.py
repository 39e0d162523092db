"""The repository's Markdown read for the docs tests: docs/'s pages, README, the maps; code blocks,
inline code, links and GitHub's heading anchors (which mkdocs.yml's slugify also makes)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = {path.name: path.read_text(encoding="utf-8") for path in sorted((ROOT / "docs").glob("*.md"))}
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def page(name: str) -> str:
    return DOCS[name]


def pages_text() -> str:
    return "\n".join(DOCS.values())


def code_blocks(text: str, language: str | None = None) -> list[str]:
    return [body for lang, body in FENCE.findall(text) if language is None or lang == language]


def inline_code(text: str) -> list[str]:
    prose = FENCE.sub("", text)
    return re.findall(r"(?<!`)`([^`\n]+)`(?!`)", prose)


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, each space a hyphen."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    prose = FENCE.sub("", text)
    return {anchor(m) for m in re.findall(r"^#+ (.+)$", prose, re.MULTILINE)}


def links(text: str) -> list[str]:
    """The targets of the Markdown links outside code: relative paths, with an #anchor or not."""
    prose = re.sub(r"`[^`\n]*`", "", FENCE.sub("", text))
    return [t for t in re.findall(r"\]\(([^)\s]+)\)", prose) if not re.match(r"[a-z]+:", t)]
