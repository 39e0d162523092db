"""README tells the story and its links lead somewhere; NANOHERMES.md (the map) and AGENTS.md
(how to work here) say what the code is: the files they name exist, the Agent has the
properties the map says front ends read, the worker count is pyproject's."""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path

from nanohermes.loop.agent import Agent
from tests.docs.pages import DOCS, ROOT, anchors, links

README_MAX_LINES = 250  # a story a newcomer reads through; the reference is docs/
README = (ROOT / "README.md").read_text(encoding="utf-8")
MAP = (ROOT / "NANOHERMES.md").read_text(encoding="utf-8")
AGENTS = (ROOT / "AGENTS.md").read_text(encoding="utf-8")
SKIPPED = {".git", ".venv", "site", "__pycache__", ".pytest_cache", ".hypothesis"}


def repo_files() -> set[str]:
    found = set()
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIPPED and not d.endswith(".egg-info")]
        base = Path(folder).relative_to(ROOT)
        found.update((base / name).as_posix() for name in files)
    return found


def broken_links(text: str, base) -> list[str]:
    broken = []
    for target in links(text):
        path, _, fragment = target.partition("#")
        file = (base / path).resolve() if path else None
        if file is not None and not file.exists():
            broken.append(target)
        elif fragment and (file is None or file.suffix == ".md"):
            heading_text = file.read_text(encoding="utf-8") if file else text
            if fragment not in anchors(heading_text):
                broken.append(target)
    return broken


def test_readme_is_a_story_not_the_manual():
    assert len(README.splitlines()) <= README_MAX_LINES
    for heading in ("## Set-up", "## A first session", "## Configure a model", "## Where to read on"):
        assert heading in README


def test_readme_keeps_the_two_set_up_commands():
    # The first installs and runs (with the extras it names, each one pyproject defines), the second tests.
    install = re.search(r"^python3 -m venv \.venv && \.venv/bin/pip install -e '\.\[([a-z,]+)\]'$", README, re.M)
    assert install, "the set-up's install command"
    extras = install.group(1).split(",")
    defined = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert "test" in extras and set(extras) <= set(defined), extras
    assert "\n.venv/bin/python -m pytest\n" in README


def test_every_link_of_readme_and_docs_resolves():
    broken = [f"README.md: {t}" for t in broken_links(README, ROOT)]
    for name, text in DOCS.items():
        broken += [f"docs/{name}: {t}" for t in broken_links(text, ROOT / "docs")]
    assert not broken, f"links to no file or no heading: {broken}"


def test_every_docs_page_is_reached_from_readme_and_the_site():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    unreached = [name for name in DOCS if f"docs/{name}" not in README and name != "index.md"]
    unlisted = [name for name in DOCS if f": {name}" not in nav]
    assert not unreached and not unlisted, (unreached, unlisted)


def _named_paths(text: str) -> set[str]:
    """Files of this repository the text names: code (.py, .sh) and paths under its own folders."""
    code = set(re.findall(r"(?<![\w./-])([\w./-]+\.(?:py|sh))\b", text))
    rooted = set(re.findall(r"(?<![\w./-])((?:scripts|tests|docs|nanohermes)/[\w./-]+\.\w+)", text))
    return {name for name in code | rooted if not name.startswith("../")}  # beside the repository: not its files


def _missing(named: set[str], files: set[str]) -> list[str]:
    return sorted(name for name in named if not any(f == name or f.endswith("/" + name) for f in files))


def test_every_file_the_map_and_agents_md_name_exists():
    files = repo_files()
    missing = [f"NANOHERMES.md: {m}" for m in _missing(_named_paths(MAP), files)]
    missing += [f"AGENTS.md: {m}" for m in _missing(_named_paths(AGENTS), files)]
    assert not missing, f"files the maps name that do not exist: {missing}"


def test_the_agent_has_the_properties_the_map_says_front_ends_read():
    said = MAP.split("Front ends read", 1)[1].split(".\n", 1)[0]
    names = [re.sub(r"\(.*", "", n) for n in re.findall(r"`([^`]+)`", said)]
    assert names, "the map's sentence moved: update this test"
    assert [n for n in names if not hasattr(Agent, n)] == []


def test_agents_md_gives_pyprojects_worker_count():
    addopts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["addopts"]
    workers = re.search(r"-n (\w+)", addopts).group(1)
    assert f"-n {workers}" in AGENTS, f"pyproject runs the suite with -n {workers}: AGENTS.md should say so"
