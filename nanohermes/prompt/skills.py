"""Skills: named instruction files the model loads on demand with the `skill` tool.

`$NANOHERMES_HOME/skills/NAME/SKILL.md` and `<workspace>/.nanohermes/skills/NAME/SKILL.md`,
each with `---` front matter holding `name` and `description`. Only the one-line listing is in
the system prompt; a body costs tokens only when the model asks for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from nanohermes.fileio import read_regular

SKILL_FILE = "SKILL.md"
MAX_BODY_CHARS = 20_000  # same cap as project guidance: one skill may not swamp the window
MAX_DESCRIPTION_CHARS = 200  # a listing line is paid on every request; the body holds the detail
LISTING_HEADER = "Skills (call the skill tool with a name to load its instructions):"


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    path: Path


def parse_front_matter(text: str) -> tuple[dict[str, str], str]:
    """`key: value` pairs between leading `---` lines, and the body after them.

    Deliberately tiny (no YAML dependency): one line per key, optional quotes, `#` lines ignored.
    Text without front matter is all body."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, text.strip()
    meta: dict[str, str] = {}
    for i, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return meta, "\n".join(lines[i + 1 :]).strip()
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.lstrip().startswith("#"):
            meta[key.strip().lower()] = _unquote(value.strip())
    return {}, text.strip()  # no closing ---: not front matter after all


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def skill_from_text(text: str, path: Path) -> Skill:
    """The skill a SKILL.md describes; its directory names it when the front matter does not."""
    meta, _ = parse_front_matter(text)
    name = meta.get("name") or path.parent.name
    description = " ".join(meta.get("description", "").split())
    if len(description) > MAX_DESCRIPTION_CHARS:
        description = description[: MAX_DESCRIPTION_CHARS - 1] + "…"
    return Skill(name, description, path)


def skills_listing(skills: list[Skill]) -> str:
    """One line per skill ("name: description") under a header; "" when there are none."""
    if not skills:
        return ""
    lines = [f"- {s.name}: {s.description}" if s.description else f"- {s.name}" for s in skills]
    return "\n".join([LISTING_HEADER, *lines])


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
        _, body = parse_front_matter(read_regular(skill.path).decode("utf-8"))
        return cap_body(body, skill.path)


def skill_dirs(home: Path, workspace: Path) -> list[Path]:
    """Where skills live, lowest precedence first: a workspace skill overrides a global one."""
    return [Path(home) / "skills", Path(workspace) / ".nanohermes" / "skills"]


def discover_skills(home: Path, workspace: Path) -> tuple[Skills, list[str]]:
    """Scan both skill directories; unreadable or non-UTF-8 SKILL.md files become warnings."""
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
            except OSError as exc:
                warnings.append(f"skipped skill {path}: {exc.strerror or exc}")
                continue
            found[skill.name] = skill  # later roots win
    return Skills(list(found.values())), warnings
