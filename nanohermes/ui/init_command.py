"""/init: a short starting AGENTS.md from what the workspace shows — what the project is, how to
set it up, test, lint and build it — for the user to correct and extend.

Claude Code's and Codex's /init ask the model to write the file; here the draft is made from
the workspace's own manifests (pyproject.toml, package.json, Makefile, Cargo.toml, go.mod, …):
instant, free, the same on any model, and it cannot make up a command. The draft is shown, then
written only on a yes; an existing AGENTS.md is replaced only on a yes to a question that
says it exists. The manifests are read, and AGENTS.md written, by the repository-file rule
(repo_files.py): never through a symlink (dangling or not) that leaves the workspace.
`draft_agents_md` is pure: the file list and a reader in, the text out.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Sequence

from nanohermes.bounded import parse_json, parse_toml
from nanohermes.ui.command_table import handles
from nanohermes.ui.escape import neutralize

AGENTS_FILE = "AGENTS.md"
ABOUT_CHARS = 300  # the README's first paragraph, cut: what the project is, not its manual
MAKE_TARGETS = 8  # a Makefile's first targets are its everyday ones
_MAKE_TARGET = re.compile(r"^([A-Za-z][\w.-]*):(?!=)", re.MULTILINE)
NPM_SCRIPTS = ("install", "dev", "start", "build", "test", "lint", "format", "typecheck")

Reader = Callable[[str], str | None]  # a workspace-relative path -> its text, None when absent


def _about(read: Reader, files: Sequence[str]) -> str:
    readme = next((f for f in files if f.lower() in ("readme.md", "readme.rst", "readme.txt", "readme")), None)
    text = (read(readme) or "") if readme else ""
    for paragraph in re.split(r"\n\s*\n", text):
        words = " ".join(line for line in paragraph.splitlines() if not line.lstrip().startswith(("#", "!", "[", "<")))
        if len(words.split()) >= 4:
            return words[:ABOUT_CHARS].rstrip() + ("…" if len(words) > ABOUT_CHARS else "")
    return ""


def _python(read: Reader, files: Sequence[str]) -> list[str]:
    commands = []
    try:
        pyproject = parse_toml(read("pyproject.toml") or "") if "pyproject.toml" in files else {}
    except tomllib.TOMLDecodeError:
        pyproject = {}
    project = _table(pyproject, "project")
    if project or "setup.py" in files:
        extras = _table(project, "optional-dependencies")
        extra = next((name for name in ("dev", "test", "tests") if name in extras), "")
        commands.append(
            f"Set up: `python3 -m venv .venv && .venv/bin/pip install -e '.{f'[{extra}]' if extra else ''}'`"
        )
    elif "requirements.txt" in files:
        commands.append("Set up: `python3 -m venv .venv && .venv/bin/pip install -r requirements.txt`")
    tool = _table(pyproject, "tool")
    if "pytest" in tool or any(f.startswith(("tests/", "test/")) or "/test_" in f for f in files):
        commands.append("Test: `python -m pytest`")
    if "ruff" in tool or "ruff.toml" in files:
        commands.append("Lint and format: `ruff check . && ruff format .`")
    if "mypy" in tool:
        commands.append("Types: `mypy .`")
    return commands


def _table(table: dict, key: str) -> dict:
    """`table[key]` when it is a table, else {} (a repository's file may hold anything there)."""
    value = table.get(key)
    return value if isinstance(value, dict) else {}


def _node(read: Reader) -> list[str]:
    try:
        package = parse_json(read("package.json") or "{}")
    except ValueError:
        return []
    scripts = package.get("scripts") if isinstance(package, dict) else None
    commands = ["Set up: `npm install`"]
    if isinstance(scripts, dict):
        commands += [f"{name.capitalize()}: `npm run {name}`" for name in NPM_SCRIPTS if name in scripts]
    return commands


def _others(read: Reader, files: Sequence[str]) -> list[str]:
    commands = []
    if "Cargo.toml" in files:
        commands += ["Build: `cargo build`", "Test: `cargo test`", "Lint: `cargo clippy`"]
    if "go.mod" in files:
        commands += ["Build: `go build ./...`", "Test: `go test ./...`"]
    if "Makefile" in files:
        targets = list(dict.fromkeys(_MAKE_TARGET.findall(read("Makefile") or "")))[:MAKE_TARGETS]
        if targets:
            commands.append("Make targets: " + ", ".join(f"`make {t}`" for t in targets))
    return commands


def draft_agents_md(project: str, files: Sequence[str], read: Reader) -> str:
    """A short AGENTS.md: the project in a sentence, its commands, where things are, and a note
    on what the file is for."""
    lines = [f"# Working on {project}", ""]
    if about := _about(read, files):
        lines += [about, ""]
    commands = [*_python(read, files), *(_node(read) if "package.json" in files else []), *_others(read, files)]
    if commands:
        lines += ["## Commands", "", *(f"- {c}" for c in commands), ""]
    top = sorted({f.split("/", 1)[0] + "/" for f in files if "/" in f})
    if top:
        lines += ["## Layout", "", "- " + ", ".join(f"`{d}`" for d in top[:20]), ""]
    lines += [
        "## Conventions",
        "",
        "- (Fill in: style, naming, what to run before a commit, what never to touch.)",
        "",
        "<!-- Drafted by NanoHermes /init from the workspace; every session reads this file: keep it short. -->",
    ]
    return "\n".join(lines) + "\n"


@handles("/init")
def _init(repl, arg: str) -> bool:
    from nanohermes.repo_files import Boundary, RefusedFile
    from nanohermes.workspace import list_workspace

    config = repl.runtime.config
    root = config.workspace
    boundary = Boundary.for_config(config)
    files = list_workspace(root, exclude=config.home.resolve()).files

    def read(path: str) -> str | None:
        try:
            return boundary.read_bytes(root / path).decode("utf-8", "replace")
        except OSError:  # missing, refused by the rule, a FIFO
            return None

    draft = draft_agents_md(root.name or "this project", files, read)
    repl.show([[("draft AGENTS.md:", "bold")], *([(neutralize("  " + line), "")] for line in draft.splitlines())])
    try:
        target = boundary.check(root / AGENTS_FILE)  # a link out of the workspace is never written through
    except RefusedFile as exc:
        repl.say(f"· {AGENTS_FILE} not written: {exc}", "yellow")
        return True
    existing = read(AGENTS_FILE)
    if existing is not None:
        question = f"{AGENTS_FILE} exists ({len(existing.splitlines())} lines); replace it with this draft? [y/N] "
    else:
        question = f"write it to {AGENTS_FILE}? [y/N] "
    if repl.ask(question).strip().lower() not in ("y", "yes"):
        repl.say(f"· {AGENTS_FILE} left as it was", "dim")
        return True
    try:
        _write(target, draft)
    except OSError as exc:
        repl.say(f"error: cannot write {target}: {exc.strerror or exc}", "red")
        return True
    repl.say(
        f"· {AGENTS_FILE} written ({len(draft.splitlines())} lines); sessions read it from the next start or /reset"
    )
    return True


def _write(target, draft: str) -> None:
    """`draft` into `target` (a path the rule resolved), never following a link put there since."""
    from nanohermes.fileio import create_regular

    with create_regular(target, 0o644) as f:
        f.write(draft.encode("utf-8"))
