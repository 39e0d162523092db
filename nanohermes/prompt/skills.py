"""Skills: named instruction files the model loads on demand with the `skill` tool.

`$NANOHERMES_HOME/skills/NAME/SKILL.md` and `<workspace>/.nanohermes/skills/NAME/SKILL.md`, and
Claude Code's `~/.claude/skills/` and `<workspace>/.claude/skills/` as they are, each with YAML
front matter (prompt/frontmatter.py) holding `name` and `description` (other keys are ignored).
Only the one-line listing is in the system prompt; a body costs tokens only when the model asks for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from nanohermes.config import claude_home
from nanohermes.fileio import read_regular
from nanohermes.prompt.frontmatter import FrontMatterError, parse_front_matter, split_front_matter, text_value

SKILL_FILE = "SKILL.md"
MAX_BODY_CHARS = 20_000  # same cap as project guidance: one skill may not swamp the window
MAX_DESCRIPTION_CHARS = 200  # a listing line is paid on every request; the body holds the detail
LISTING_HEADER = "Skills (call the skill tool with a name to load its instructions):"
# The whole listing rides on every request (fixed cost < 2,500 tokens, tests/loop/test_fixed_cost.py);
# ~1,500 chars is ~400 tokens: a dozen skills whole. Past it, a line says how many more the tool names.
MAX_LISTING_CHARS = 1_500
MORE_SKILLS = "- … {count} more skills (the skill tool with an unknown name lists every name)"


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    path: Path


def skill_from_text(text: str, path: Path) -> Skill:
    """The skill a SKILL.md describes; its directory names it when the front matter does not.
    FrontMatterError when the front matter is not YAML."""
    meta, _ = parse_front_matter(text)
    name = text_value(meta, "name") or path.parent.name
    description = text_value(meta, "description")
    if len(description) > MAX_DESCRIPTION_CHARS:
        description = description[: MAX_DESCRIPTION_CHARS - 1] + "…"
    return Skill(name, description, path)


def skills_listing(skills: list[Skill], limit: int = MAX_LISTING_CHARS) -> str:
    """One line per skill ("name: description") under a header, within `limit` characters (the rest
    counted on a last line); "" when there are none."""
    if not skills:
        return ""
    lines = [f"- {s.name}: {s.description}" if s.description else f"- {s.name}" for s in skills]
    kept, used = [], 0
    for i, line in enumerate(lines):
        used += len(line) + 1
        if used > limit:
            kept.append(MORE_SKILLS.format(count=len(lines) - i))
            break
        kept.append(line)
    return "\n".join([LISTING_HEADER, *kept])


def cap_body(body: str, path: Path, limit: int = MAX_BODY_CHARS) -> str:
    if len(body) <= limit:
        return body
    return body[:limit] + f"\n… skill truncated ({len(body) - limit} more chars in {path})"


class Skills:
    """The skills found at start-up, by name; bodies are read fresh from disk on each request."""

    def __init__(self, skills: list[Skill]):
        self._by_name = {s.name: s for s in skills}

    def __len__(self) -> int:
        return len(self._by_name)

    def names(self) -> list[str]:
        return sorted(self._by_name)

    def listing(self) -> str:
        return skills_listing([self._by_name[n] for n in self.names()])

    def get(self, name: str) -> Skill | None:
        """Exact name first, then case-insensitive (small models change case)."""
        name = name.strip()
        found = self._by_name.get(name)
        if found is None:
            folded = [s for n, s in self._by_name.items() if n.lower() == name.lower()]
            found = folded[0] if len(folded) == 1 else None
        return found

    def body(self, skill: Skill) -> str:
        """The body (front matter removed), capped at MAX_BODY_CHARS with a note; OSError if gone."""
        _, body = split_front_matter(read_regular(skill.path).decode("utf-8"))  # no YAML needed for the body
        return cap_body(body, skill.path)


def skill_dirs(home: Path, workspace: Path, claude: Path | None = None) -> list[Path]:
    """Where skills live, lowest precedence first: a workspace skill overrides a global one, and
    NanoHermes' own directory overrides Claude Code's beside it."""
    claude = claude_home() if claude is None else claude
    workspace = Path(workspace)
    return [
        claude / "skills",
        Path(home) / "skills",
        workspace / ".claude" / "skills",
        workspace / ".nanohermes" / "skills",
    ]


def discover_skills(home: Path, workspace: Path) -> tuple[Skills, list[str]]:
    """Scan the skill directories; an unreadable or non-UTF-8 SKILL.md, or one whose front matter is
    not YAML, is skipped with a warning naming it and why."""
    found: dict[str, Skill] = {}
    warnings: list[str] = []
    for root in skill_dirs(home, workspace):
        try:
            candidates = sorted(root.glob(f"*/{SKILL_FILE}"))
        except OSError as exc:
            warnings.append(f"skipped skills in {root}: {exc.strerror or exc}")
            continue
        for path in candidates:
            try:
                skill = skill_from_text(read_regular(path).decode("utf-8"), path)
            except UnicodeDecodeError:
                warnings.append(f"skipped skill {path}: not UTF-8 text")
                continue
            except FrontMatterError as exc:
                warnings.append(f"skipped skill {path}: {exc}")
                continue
            except OSError as exc:
                warnings.append(f"skipped skill {path}: {exc.strerror or exc}")
                continue
            found[skill.name] = skill  # later roots win
    return Skills(list(found.values())), warnings
