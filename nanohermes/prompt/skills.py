"""Skills: named instruction files the model loads on demand with the `skill` tool.

`$NANOHERMES_HOME/skills/NAME/SKILL.md` and `<workspace>/.nanohermes/skills/NAME/SKILL.md`, and
Claude Code's `~/.claude/skills/` and `<workspace>/.claude/skills/` as they are, each with YAML
front matter (prompt/frontmatter.py) holding `name` and `description` (other keys are ignored).
Only the one-line listing is in the system prompt; a body costs tokens only when the model asks for it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from nanohermes.config import claude_home, home_dir
from nanohermes.prompt.frontmatter import (
    FrontMatterError,
    parse_front_matter,
    split_front_matter,
    text_value,
    unclosed_front_matter,
)
from nanohermes.repo_files import REPOSITORY, USER, Boundary
from nanohermes.text import neutralize

SKILL_FILE = "SKILL.md"
MAX_BODY_CHARS = 20_000  # same cap as project guidance: one skill may not swamp the window
MAX_DESCRIPTION_CHARS = 200  # a listing line is paid on every request; the body holds the detail
LISTING_HEADER = "Skills (call the skill tool with a name to load its instructions):"
# The listing rides on every request, so its size follows the window: about 2 % of it (Claude Code
# gives its skill descriptions the same share), at ~4 characters a token. Every skill is named
# whatever the budget (a model never learns of a skill it is not told of); descriptions share what
# is left, each cut evenly, and are left out, with a note, when the share would be too short to say
# anything. Unknown window: DEFAULT_LISTING_CHARS, a dozen skills whole.
LISTING_CHARS_PER_WINDOW_TOKEN = 0.08
MIN_LISTING_CHARS = 600  # an 8K window: ~150 tokens, inside the fixed cost (tests/loop/test_fixed_cost.py)
MAX_LISTING_CHARS = 8_000  # ~2,000 tokens, whatever the window: the bodies hold the detail
DEFAULT_LISTING_CHARS = 1_500
MIN_DESCRIPTION_SHARE = 24  # fewer characters say nothing useful: names only, and the note says so
NAMES_ONLY = "(descriptions left out to fit this model's window: the skill tool shows each skill's)"


def listing_budget(window: int | None) -> int:
    """Characters the listing may take at a window of `window` tokens (None: not known yet)."""
    if window is None:
        return DEFAULT_LISTING_CHARS
    return max(MIN_LISTING_CHARS, min(MAX_LISTING_CHARS, int(window * LISTING_CHARS_PER_WINDOW_TOKEN)))


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    path: Path
    owner: str = USER  # repo_files.REPOSITORY for a workspace's skill: read by the repository's rule


def skill_from_text(text: str, path: Path) -> Skill:
    """The skill a SKILL.md describes; its directory names it when the front matter does not.
    FrontMatterError when the front matter is not bounded YAML, or opened and never closed."""
    if unclosed_front_matter(text):
        raise FrontMatterError("its front matter opens with --- and is never closed by another --- line")
    meta, _ = parse_front_matter(text)
    name = neutralize(text_value(meta, "name") or path.parent.name)  # ESC or BEL never reach the prompt raw
    description = neutralize(text_value(meta, "description"))
    if len(description) > MAX_DESCRIPTION_CHARS:
        description = description[: MAX_DESCRIPTION_CHARS - 1] + "…"
    return Skill(name, description, path)


def skills_listing(skills: list[Skill], limit: int = DEFAULT_LISTING_CHARS) -> str:
    """One line per skill ("name: description") under a header; "" when there are none. Every skill
    is named; past `limit` characters the descriptions are cut evenly (or left out, with a note)."""
    if not skills:
        return ""
    names = len(LISTING_HEADER) + sum(len(f"- {s.name}") + 1 for s in skills)
    described = [s for s in skills if s.description]
    room = limit - names
    shown = _fitted([s.description for s in described], room)
    by_name = {s.name: text for s, text in zip(described, shown)}
    lines = [f"- {s.name}: {by_name[s.name]}" if by_name.get(s.name) else f"- {s.name}" for s in skills]
    if described and not any(shown):
        lines.append(NAMES_ONLY)
    return "\n".join([LISTING_HEADER, *lines])


def _fitted(descriptions: list[str], room: int) -> list[str]:
    """Each description whole, or cut so all of them fit `room` characters (each costs ": " too),
    the short ones first so what they leave goes to the long ones; "" for all when a share would
    be under MIN_DESCRIPTION_SHARE."""
    fitted = [""] * len(descriptions)
    if not descriptions or room // len(descriptions) < MIN_DESCRIPTION_SHARE:
        return fitted
    left = room
    order = sorted(range(len(descriptions)), key=lambda i: len(descriptions[i]))
    for done, i in enumerate(order):
        share = left // (len(order) - done) - 2
        text = descriptions[i]
        fitted[i] = text if len(text) <= share else text[: max(share - 1, 0)].rstrip() + "…"
        left -= len(fitted[i]) + 2
    return fitted


def cap_body(body: str, path: Path, limit: int = MAX_BODY_CHARS) -> str:
    if len(body) <= limit:
        return body
    return body[:limit] + f"\n… skill truncated ({len(body) - limit} more chars in {path})"


class Skills:
    """The skills found at start-up, by name; bodies are read fresh from disk on each request."""

    def __init__(self, skills: list[Skill], boundary: Boundary | None = None):
        self._by_name = {s.name: s for s in skills}
        self.boundary = boundary  # None: read as found (a test's skills); discover_skills gives the session's

    def __len__(self) -> int:
        return len(self._by_name)

    def names(self) -> list[str]:
        return sorted(self._by_name)

    def folders(self) -> list[Path]:
        """Each skill's own folder (its SKILL.md's), where the files it names live."""
        return [skill.path.parent for skill in self._by_name.values()]

    def listing(self, window: int | None = None) -> str:
        """The listing for a model of `window` tokens (None: not known yet)."""
        return skills_listing([self._by_name[n] for n in self.names()], listing_budget(window))

    def get(self, name: str) -> Skill | None:
        """Exact name first, then case-insensitive (small models change case)."""
        name = name.strip()
        found = self._by_name.get(name)
        if found is None:
            folded = [s for n, s in self._by_name.items() if n.lower() == name.lower()]
            found = folded[0] if len(folded) == 1 else None
        return found

    def body(self, skill: Skill) -> str:
        """The body (front matter removed), capped at MAX_BODY_CHARS with a note; OSError if gone, or
        if it became a link the repository-file rule refuses (repo_files.py) since start-up."""
        boundary = self.boundary or Boundary.of(home_dir(), skill.path.parent.parent.parent)
        _, body = split_front_matter(boundary.read_text(skill.path, skill.owner, skill.path.parent.parent.parent))
        return cap_body(body, skill.path)


def skill_dirs(home: Path, workspace: Path, claude: Path | None = None) -> list[tuple[Path, str]]:
    """Where skills live, lowest precedence first, each with whose they are (repo_files.py): a
    workspace skill overrides a global one, and NanoHermes' own directory overrides Claude Code's beside it."""
    claude = claude_home() if claude is None else claude
    workspace = Path(workspace)
    return [
        (claude / "skills", USER),
        (Path(home) / "skills", USER),
        (workspace / ".claude" / "skills", REPOSITORY),
        (workspace / ".nanohermes" / "skills", REPOSITORY),
    ]


def discover_skills(home: Path, workspace: Path, boundary: Boundary | None = None) -> tuple[Skills, list[str]]:
    """Scan the skill directories; a SKILL.md the repository-file rule refuses (a workspace's link out
    of it, anyone's link into a hidden path), unreadable, not UTF-8, or whose front matter is not
    bounded YAML is skipped with a warning naming it and why."""
    boundary = boundary or Boundary.of(home, workspace)
    found: dict[str, Skill] = {}
    warnings: list[str] = []
    for root, owner in skill_dirs(home, workspace):
        try:
            candidates = sorted(root.glob(f"*/{SKILL_FILE}"))
        except OSError as exc:
            warnings.append(f"skipped skills in {root}: {exc.strerror or exc}")
            continue
        for path in candidates:
            try:
                skill = skill_from_text(boundary.read_text(path, owner, root.parent.parent), path)
            except UnicodeDecodeError:
                warnings.append(f"skipped skill {path}: not UTF-8 text")
                continue
            except FrontMatterError as exc:
                warnings.append(f"skipped skill {path}: {exc}")
                continue
            except OSError as exc:
                warnings.append(f"skipped skill {path}: {exc.strerror or exc}")
                continue
            found[skill.name] = replace(skill, owner=owner)  # later roots win
    return Skills(list(found.values()), boundary), warnings
