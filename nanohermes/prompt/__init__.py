"""The system message: one pure assembly function and a gatherer that does the file I/O.

It is built only on a new session, a resume and /reset, and holds nothing that changes per
turn (the date, not the time; no memories), so it is byte-identical across a session's
requests and providers' prefix caches hit. A mode or model switch is the one documented
place it may change.
"""

from __future__ import annotations

import datetime
import os
import platform
import re
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from nanohermes.prompt.overview import workspace_overview
from nanohermes.prompt.skills import Skills, discover_skills
from nanohermes.repo_files import REPOSITORY, USER, Boundary
from nanohermes.workspace import list_workspace

MAX_PROJECT_DOCS = 20_000  # the AGENTS.md chain, joined: about 5k tokens, resent on every request
MAX_NANOHERMES_MD = 20_000  # same cap for the project context file (a long one is resent on every request too)
PROJECT_DOCS_NOTE = "… project guidance truncated"
NANOHERMES_MD_HEADER = "=== Project context (NANOHERMES.md) ==="
AGENTS_MD = "AGENTS.md"
GUIDANCE_ORDER = "Project guidance (AGENTS.md) is ordered general to specific: on conflict the later file wins."
NANOHERMES_MD = "NANOHERMES.md"
SECTION_SEPARATOR = "\n\n"
_PLACEHOLDER_RE = re.compile(r"\{(workspace|date|platform)\}")

MODE_LINES = {
    "plan": "Mode: plan. Only read-only tools are available, and commands run in a read-only sandbox: "
    "investigate, then propose a step-by-step plan; change nothing.",
    "ask": "Mode: ask. Writes, edits and commands outside the sandbox need the user's yes; if one is refused, "
    "ask what to do instead of retrying it.",
    "accept-edits": "Mode: accept-edits. Writes and edits are applied without asking (the user sees each); commands "
    "outside the sandbox and other actions need the user's yes; if one is refused, ask what to do instead.",
    "auto": "Mode: auto. Act without asking for approval.",
}


@dataclass(frozen=True)
class PromptInputs:
    """Everything the system message is made of, already read from disk."""

    template: str
    workspace: str
    date: str  # ISO date only: a time would change the prefix on every rebuild
    platform: str
    mode: str
    persona: str = ""
    project_guidance: str = ""
    nanohermes_md: str = ""
    skills_listing: str = ""
    mcp_listing: str = ""  # the MCP servers' tools, one line each (mcp/listing.py)
    overview: str = ""  # the workspace's files (prompt/overview.py), built with the rest


# ---- pure ------------------------------------------------------------------------------------


def build_system_prompt(inputs: PromptInputs) -> str:
    """Built-in rules, mode line, persona, AGENTS.md guidance, NANOHERMES.md, skills, the
    workspace overview. Nothing
    here changes per turn (memories travel with the user message they were retrieved for)."""
    values = {"workspace": inputs.workspace, "date": inputs.date, "platform": inputs.platform}
    # One pass, so a workspace path containing "{date}" is not itself substituted.
    rules = _PLACEHOLDER_RE.sub(lambda m: values[m.group(1)], inputs.template)
    sections = [
        rules,
        MODE_LINES[inputs.mode],
        inputs.persona,
        # The order rule only beside guidance: every token of the prompt is paid on every request.
        f"{GUIDANCE_ORDER}\n{inputs.project_guidance.strip()}" if inputs.project_guidance.strip() else "",
        format_nanohermes_md(inputs.nanohermes_md),
        inputs.skills_listing,
        inputs.mcp_listing,
        inputs.overview,
    ]
    return SECTION_SEPARATOR.join(s.strip() for s in sections if s and s.strip())


def join_project_guidance(parts: Iterable[tuple[str, str]], limit: int = MAX_PROJECT_DOCS) -> str:
    """(path, text) parts, each under its path, joined by blank lines; cut at `limit` with a note."""
    joined = SECTION_SEPARATOR.join(f"=== {path} ===\n{text.strip()}" for path, text in parts)
    if len(joined) > limit:
        joined = joined[:limit] + "\n" + PROJECT_DOCS_NOTE
    return joined


def format_nanohermes_md(text: str, limit: int = MAX_NANOHERMES_MD) -> str:
    text = text.strip()
    if not text:
        return ""
    if len(text) > limit:
        omitted = len(text) - limit
        text = text[:limit] + f"\n… NANOHERMES.md truncated ({omitted} more chars; read the file for the rest)"
    return f"{NANOHERMES_MD_HEADER}\n{text}"


def agents_md_candidates(home: Path, workspace: Path) -> list[Path]:
    """$NANOHERMES_HOME/AGENTS.md, then AGENTS.md in every directory from / down to the workspace."""
    workspace = Path(os.path.abspath(workspace))
    chain = [*reversed(workspace.parents), workspace]
    return [Path(home) / AGENTS_MD, *(d / AGENTS_MD for d in chain)]


# ---- I/O -------------------------------------------------------------------------------------


def load_template() -> str:
    return resources.files("nanohermes.prompt").joinpath("templates/system.md").read_text(encoding="utf-8")


def read_text_file(
    path: Path, warnings: list[str], boundary: Boundary, owner: str = REPOSITORY, root: Path | None = None
) -> str | None:
    """The file's text, read by the repository-file rule (repo_files.py: a link out of `root` or into
    a hidden path refused); None when missing (silently), refused, unreadable or not UTF-8 (with a warning)."""
    try:
        return boundary.read_text(path, owner, root)  # an AGENTS.md that is a FIFO must not hang the start
    except (FileNotFoundError, NotADirectoryError):
        return None
    except UnicodeDecodeError as exc:
        warnings.append(f"skipped {path}: not UTF-8 text (byte {exc.start})")
    except OSError as exc:
        warnings.append(f"skipped {path}: {exc.strerror or exc}")
    return None


def _canonical(path: Path) -> str:
    """Real path for de-duplication (symlinks, repeats); the raw path when that fails."""
    try:
        return str(path.resolve(strict=True))
    except (OSError, RuntimeError):  # missing, permission, symlink loop (RuntimeError before 3.13)
        return str(path)


def read_project_guidance(
    paths: Iterable[Path], limit: int = MAX_PROJECT_DOCS, boundary: Boundary | None = None
) -> tuple[str, list[str]]:
    """Read the candidate AGENTS.md files (skipping missing ones and repeats) and join them. The one in
    the state directory is the user's own; any other may not link out of its own directory (a
    repository's AGENTS.md cannot bring ~/.bash_history into the prompt) nor into a hidden path."""
    if boundary is None:
        from nanohermes.config import home_dir

        boundary = Boundary.of(home_dir(), Path.cwd())
    warnings: list[str] = []
    seen: set[str] = set()
    parts: list[tuple[str, str]] = []
    for path in paths:
        key = _canonical(path)
        if key in seen:
            continue
        seen.add(key)
        own = _canonical(path.parent) == str(boundary.state_dir)
        text = read_text_file(path, warnings, boundary, USER if own else REPOSITORY, path.parent)
        if text and text.strip():
            parts.append((str(path), text))
    return join_project_guidance(parts, limit), warnings


def gather_prompt_inputs(
    config,
    *,
    skills: Skills | None = None,
    today: datetime.date | None = None,
    mcp_listing: str = "",
    window: int | None = None,
) -> tuple[PromptInputs, list[str]]:
    """Read the template, the AGENTS.md chain, NANOHERMES.md and (unless given) the skills for
    `config` (a Config), the skills listed for a model of `window` tokens (None: not known yet).
    Returns the inputs and warnings about skipped files (never raised or printed)."""
    workspace = Path(config.workspace)
    boundary = Boundary.for_config(config)
    guidance, warnings = read_project_guidance(agents_md_candidates(config.home, workspace), boundary=boundary)
    nanohermes_md = read_text_file(workspace / NANOHERMES_MD, warnings, boundary) or ""
    if skills is None:
        skills, skill_warnings = discover_skills(config.home, workspace, boundary)
        warnings += skill_warnings
    inputs = PromptInputs(
        template=load_template(),
        workspace=str(workspace),
        date=(today or datetime.date.today()).isoformat(),
        platform=f"{platform.system()} {platform.machine()}".strip(),
        mode=config.mode,
        persona=config.system_prompt,
        project_guidance=guidance,
        nanohermes_md=nanohermes_md,
        skills_listing=skills.listing(window),
        mcp_listing=mcp_listing,
        overview=workspace_overview(list_workspace(workspace, exclude=Path(config.home))),
    )
    return inputs, warnings
